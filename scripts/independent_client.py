"""The simplest independent client of a server's protocol, for `cargo bench --bench clients`.

psycopg 3 (libpq, binary results, a prepared statement) for PostgreSQL; PyMySQL for the
MySQL protocol (MariaDB, MySQL, Dolt). It runs the raw engine's own SQL on the same rows, so
the bench can set blobrace's raw client beside it.

Usage: INDEPENDENT_CLIENT_URL=URL independent_client.py postgres|mysql NAMESPACE SQL
(the URL, with its password, from the environment: not on a command line others can read)
stdin: one row per line, "ID LENGTH [KEYHEX]"; stdout: one line per fetch, its nanoseconds.
Only the query and the read of its value are timed; the length check is after the clock.
"""

import os
import sys
import time
from urllib.parse import unquote, urlsplit


def fail(message):
    print(f"independent client: {message}", file=sys.stderr)
    sys.exit(1)


def rows():
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        key = bytes.fromhex(parts[2]) if len(parts) > 2 else None
        yield int(parts[0]), int(parts[1]), key


def postgres(url, namespace, sql):
    import psycopg

    conn = psycopg.connect(url, options=f"-c search_path={namespace}", autocommit=True)
    cursor = conn.cursor(binary=True)
    # psycopg's placeholder for the raw engine's $1.
    sql = sql.replace("$1", "%s")
    return lambda param: (cursor.execute(sql, (param,), prepare=True), cursor.fetchone())[1]


def mysql(url, namespace, sql):
    import pymysql

    parts = urlsplit(url)
    conn = pymysql.connect(
        host=parts.hostname,
        port=parts.port or 3306,
        user=unquote(parts.username or "root"),
        password=unquote(parts.password or ""),
        database=namespace,
        autocommit=True,
    )
    cursor = conn.cursor()
    sql = sql.replace("?", "%s")
    return lambda param: (cursor.execute(sql, (param,)), cursor.fetchone())[1]


def main():
    url = os.environ.get("INDEPENDENT_CLIENT_URL")
    if len(sys.argv) != 4 or sys.argv[1] not in ("postgres", "mysql") or not url:
        fail("usage: INDEPENDENT_CLIENT_URL=URL independent_client.py postgres|mysql NAMESPACE SQL")
    protocol, namespace, sql = sys.argv[1:]
    try:
        fetch = (postgres if protocol == "postgres" else mysql)(url, namespace, sql)
    except Exception as e:  # the driver's own words: a refused connection, a password
        fail(f"cannot connect to {protocol} at {urlsplit(url).hostname}:{urlsplit(url).port}: {e}")
    out = sys.stdout
    for row_id, length, key in rows():
        param = key if key is not None else row_id
        started = time.perf_counter_ns()
        row = fetch(param)
        took = time.perf_counter_ns() - started
        if row is None or len(row[0]) != length:
            got = "no row" if row is None else f"{len(row[0])} bytes"
            fail(f"row {row_id}: {got}, expected {length} bytes")
        out.write(f"{took}\n")
    out.flush()


if __name__ == "__main__":
    main()
