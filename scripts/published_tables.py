#!/usr/bin/env python3
"""The tables of scripts/published.sh: SQLite's published figures beside blobrace's, from
the runs' results.json. Usage: published_tables.py PAGE SCALE RUN_DIR...

Every figure printed is read from a run; a cell a run did not measure says so."""

import json
import sys
from pathlib import Path

# sqlite.org/intern-v-extern-blob.html: time reading from separate files / time reading
# from the database, by page size (rows) and blob size (columns).
INTERN_V_EXTERN = {
    1024: [1.535, 1.020, 0.608, 0.456, 0.330, 0.247, 0.233],
    2048: [2.004, 1.437, 0.870, 0.636, 0.483, 0.372, 0.340],
    4096: [2.261, 1.886, 1.173, 0.890, 0.701, 0.526, 0.487],
    8192: [2.240, 1.866, 1.334, 1.035, 0.830, 0.625, 0.720],
    16384: [2.439, 1.757, 1.292, 1.023, 0.829, 0.820, 0.598],
    32768: [1.878, 1.843, 1.296, 0.981, 0.976, 0.675, 0.613],
    65536: [1.256, 1.255, 1.339, 0.983, 0.769, 0.687, 0.609],
}
SIZES = [("10k", 10_000), ("20k", 20_000), ("50k", 50_000), ("100k", 100_000),
         ("200k", 200_000), ("500k", 500_000), ("1m", 1_000_000)]


def runs(dirs):
    for d in dirs:
        path = Path(d) / "results.json"
        if not path.exists():
            sys.exit(f"published: {path} is missing: the run did not finish")
        yield json.loads(path.read_text())


def mean_ns(run, engine, cache, size_bytes=None, of="latency"):
    """The mean fetch of a cell (`of`: "latency", every fetch; "misses", those that read
    the disk) and its hit ratio; None where the run has no such cell or no such fetch."""
    for r in run["results"]:
        if r["engine"] == engine and r["cache"] == cache and (
            size_bytes is None or r["size_bytes"] == size_bytes
        ):
            part = r["measured"].get(of) or {}
            if not part.get("count"):
                return None, r["measured"].get("hit_ratio")
            return part["mean_ns"], (r["measured"].get("hit_ratio"), part["count"])
    return None, (None, 0)


def said(hit):
    """A cell's hit ratio and how many fetches its mean is over."""
    ratio, count = hit
    return f"hit ratio {ratio:.0%}, mean of {count:,} fetches" if ratio is not None else f"{count:,} fetches"


# How the database is read in each table: SQL, then the blob API (what kvtest's
# --blob-api reads with; the page's own test program read with SQL).
READS = [("sqlite-raw", "a prepared `SELECT` on SQLite's C API"),
         ("sqlite-blobio", "SQLite's incremental blob API, `sqlite3_blob_read`")]


def intern_v_extern(scale, dirs):
    files = {}
    ours = {}
    hits = []
    for run in runs(dirs):
        page = run["config"]["sqlite_page_size"] or 4096
        for _, size in SIZES:
            fs, fs_hit = mean_ns(run, "fs", "steady", size)
            if fs is not None:
                files[size] = fs
                hits.append(fs_hit[0])
            for engine, _ in READS:
                db, db_hit = mean_ns(run, engine, "steady", size)
                if db is not None:
                    ours[(engine, page, size)] = db
                    hits.append(db_hit[0])
    print("# SQLite's internal versus external blobs, measured again\n")
    print("sqlite.org/intern-v-extern-blob.html (SQLite 3.7.8, 2011, ext4 on a SATA disk): the")
    print("time to read blobs from separate files divided by the time to read them from the")
    print("database; above 1 the database is faster. Each cell: **blobrace's** (fs mean fetch /")
    print(f"the database's mean fetch, warm, {100 * scale:.0f} MB of blobs a case) and the page's in")
    print("brackets. The database read two ways, the same file: a table each.")
    for engine, how in READS:
        print(f"\n## {engine}: {how}\n")
        print("| page size | " + " | ".join(name for name, _ in SIZES) + " |")
        print("| --- |" + " --- |" * len(SIZES))
        for page, theirs in INTERN_V_EXTERN.items():
            cells = []
            for (_, size), published in zip(SIZES, theirs):
                db, fs = ours.get((engine, page, size)), files.get(size)
                mine = f"**{fs / db:.2f}**" if db and fs else "not measured"
                cells.append(f"{mine} ({published:.2f})")
            print(f"| {page} | " + " | ".join(cells) + " |")
    known = [h for h in hits if h is not None]
    if known:
        print(f"\nHit ratio of the measured fetches: {min(known):.1%} to {max(known):.1%} (warm: every")
        print("blob in the page cache, as on the page's workstation with 100 MB a case).")
    print("\nRuns: " + ", ".join(Path(d).name for d in dirs))


def fasterthanfs(scale, dirs):
    [run] = list(runs(dirs))
    print("# SQLite's \"35% faster than the filesystem\", measured again\n")
    print("sqlite.org/fasterthanfs.html (2017, kvtest: 100,000 blobs of 8,000-12,000 bytes, 4 KiB")
    print("pages): blobs read about 35% faster from the database than from one file each, and")
    print(f"the database about 20% smaller. blobrace: the same mix, {1000 * scale:.0f} MB of it, mean fetch.\n")
    print("Warm: every fetch of the steady state (the whole mix in the page cache, as kvtest's")
    print("runs). Cold: only the fetches that read the disk after the files were evicted; with")
    print("no memory cap the cache fills while a cold cell runs, so its mean over every fetch")
    print("would depend on how many fetches each engine made, not on how it reads.\n")
    print("| read | cache | mean fetch | files / database | the page |")
    print("| --- | --- | --- | --- | --- |")
    for cache in ("steady", "cold"):
        of = "latency" if cache == "steady" else "misses"
        fs, fs_hit = mean_ns(run, "fs", cache, of=of)
        word = "warm" if cache == "steady" else "cold, from disk"
        if fs is None:
            print(f"| fs | {word} | not measured | | |")
            continue
        print(f"| fs (one file a blob) | {word} | {fs / 1000:.1f} µs ({said(fs_hit)}) | 1.00 | |")
        for engine, how in (("sqlite-raw", "SQL SELECT"), ("sqlite-blobio", "sqlite3_blob_read")):
            db, db_hit = mean_ns(run, engine, cache, of=of)
            if db is None:
                print(f"| {engine} | {word} | not measured | | |")
                continue
            faster = (fs / db - 1) * 100
            theirs = "about 1.35 (35% faster)" if cache == "steady" else "(not compared here)"
            print(
                f"| {engine} ({how}) | {word} | {db / 1000:.1f} µs ({said(db_hit)}) | "
                f"**{fs / db:.2f}** ({faster:+.0f}%) | {theirs} |"
            )
    disk = {l["store"]: l.get("disk_bytes") for l in run.get("loads", [])}
    blobs = next((l["bytes_written"] for l in run.get("loads", []) if l["store"] == "fs"), None)
    if disk.get("sqlite") and disk.get("fs"):
        smaller = (1 - disk["sqlite"] / disk["fs"]) * 100
        print(f"\nOn disk: the database {disk['sqlite'] / 1e6:.0f} MB, the files {disk['fs'] / 1e6:.0f} MB", end="")
        if blobs:
            print(f" ({blobs / 1e6:.0f} MB of blobs)", end="")
        word = "smaller" if smaller >= 0 else "larger"
        print(f": the database **{abs(smaller):.0f}% {word}** (the page: about 20% smaller).")
    else:
        print("\nOn disk: not measured (this run loaded nothing; the first run that loaded says).")
    print("\nRun: " + Path(dirs[0]).name)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    page, scale, dirs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    {"intern-v-extern": intern_v_extern, "fasterthanfs": fasterthanfs}[page](scale, dirs)
