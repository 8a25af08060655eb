//! Every embedded engine end to end on small datasets: load, verify, measure,
//! results; re-runs reuse what is loaded; corruption is caught.

use crate::common::{only_run, run, stderr};

const SMALL: [&str; 4] = ["--sizes", "1KiB,64KiB", "--dataset-bytes", "2MiB"];

fn args<'a>(cmd: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    crate::common::with_flags(cmd, &SMALL, extra)
}

#[test]
fn load_verify_measure_every_engine() {
    let root = tempfile::tempdir().unwrap();
    let load = run(root.path(), &args("load", &[]));
    assert!(load.status.success(), "{}", stderr(&load));
    assert_eq!(
        stderr(&load).matches(": loaded").count(),
        12,
        "6 stores x 2 sizes:\n{}",
        stderr(&load)
    );

    let again = run(root.path(), &args("load", &[]));
    assert!(again.status.success());
    assert_eq!(
        stderr(&again).matches("already loaded").count(),
        12,
        "{}",
        stderr(&again)
    );

    let verify = run(root.path(), &args("verify", &[]));
    assert!(verify.status.success(), "{}", stderr(&verify));
    assert_eq!(
        stderr(&verify).matches("ok  ").count(),
        12,
        "{}",
        stderr(&verify)
    );

    let measure = run(
        root.path(),
        // Cold only: the steady state has tests of its own (tests/it/steady.rs).
        &args(
            "measure",
            &["--warmup", "100ms", "--measure", "300ms", "--cache", "cold"],
        ),
    );
    assert!(measure.status.success(), "{}", stderr(&measure));

    let (dir, json) = only_run(root.path());
    assert_eq!(json["complete"], true);
    assert_eq!(json["cap"]["origin"], "uncapped");
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 18, "9 engines x 2 sizes");
    for r in results {
        let name = format!("{} {}", r["engine"], r["size"]);
        let m = &r["measured"];
        assert!(m["count"].as_u64().unwrap() > 0, "{name} measured nothing");
        assert!(
            r["warm_up"]["count"].as_u64().unwrap() > 0,
            "{name} had no warm-up"
        );
        let lat = &m["latency"];
        let (p50, p99, max) = (
            lat["p50_ns"].as_u64().unwrap(),
            lat["p99_ns"].as_u64().unwrap(),
            lat["max_ns"].as_u64().unwrap(),
        );
        assert!(0 < p50 && p50 <= p99 && p99 <= max, "{name}: {lat}");
        assert_eq!(
            m["bytes_returned"].as_u64().unwrap(),
            m["count"].as_u64().unwrap() * r["size_bytes"].as_u64().unwrap()
        );
        // 2 MiB of data with no cap on a machine with GiBs of RAM.
        assert_eq!(r["regime"]["verdict"], "fits-in-memory", "{name}");
        assert_eq!(r["regime"]["basis"], "ram (uncapped)");
        assert!(
            r["eviction"]["files"].as_u64().unwrap() >= 1,
            "{name} was not evicted"
        );
    }
    // The three SQLite clients (SeaORM over sqlx; the C API's statement; its blob
    // I/O) read the same file with the same settings, read back from each connection.
    for engine in ["sqlite", "sqlite-raw", "sqlite-blobio"] {
        let r = results.iter().find(|r| r["engine"] == engine).unwrap();
        for key in [
            "sqlite_version",
            "page_size",
            "journal_mode",
            "synchronous",
            "cache_size",
            "mmap_size",
        ] {
            assert!(
                r["settings"][key].is_string(),
                "{engine} setting {key} missing: {}",
                r["settings"]
            );
        }
        assert_eq!(r["settings"]["journal_mode"], "wal", "{engine}");
        assert_eq!(r["settings"]["page_size"], "4096", "{engine}");
    }
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 19, "{csv}");
    assert!(
        csv.lines().nth(1).unwrap().contains(",uncapped,uncapped,"),
        "{csv}"
    );
}

#[test]
fn verify_catches_a_corrupted_blob() {
    let root = tempfile::tempdir().unwrap();
    let small = [
        "--engines",
        "floor",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "64KiB",
    ];
    assert!(
        run(root.path(), &[&["load"][..], &small].concat())
            .status
            .success()
    );
    let bin = root.path().join("data/floor/1KiB-x64.bin");
    let mut bytes = std::fs::read(&bin).unwrap();
    bytes[9 * 1024 + 100] ^= 0x55; // inside id 10
    std::fs::write(&bin, bytes).unwrap();
    let out = run(root.path(), &[&["verify"][..], &small].concat());
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("id 10: content differs from byte 100"),
        "{err}"
    );
}

#[test]
fn measuring_an_unloaded_engine_loads_it_first() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "measure",
            "--engines",
            "fs",
            "--sizes",
            "8KiB",
            "--dataset-bytes",
            "256KiB",
            "--warmup",
            "50ms",
            "--measure",
            "100ms",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains(": loaded 256KiB"), "{}", stderr(&out));
}

#[test]
fn drop_after_loads_measures_and_drops_one_size_class_at_a_time() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "measure",
            "--engines",
            "sqlite,fs,floor",
            "--sizes",
            "1KiB,64KiB",
            "--dataset-bytes",
            "1MiB",
            "--warmup",
            "50ms",
            "--measure",
            "100ms",
            "--drop-after",
            "--cache",
            "cold",
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    // Each size class is loaded right before it is measured and dropped right after.
    let first_drop = err.find("dropped").expect("drops");
    let second_load = err.find("64KiB-x16").expect("64KiB loaded");
    assert!(
        first_drop < second_load,
        "1KiB dropped before 64KiB is loaded: {err}"
    );
    assert_eq!(err.matches("(--drop-after)").count(), 6, "{err}");
    let left: Vec<String> = crate::common::files_under(&root.path().join("data"))
        .into_iter()
        .filter(|f| !f.contains(".blobrace"))
        .collect();
    assert!(left.is_empty(), "datasets left behind: {left:?}");
    let (_, json) = only_run(root.path());
    assert_eq!(json["results"].as_array().unwrap().len(), 6);
    assert_eq!(json["loads"].as_array().unwrap().len(), 6);
    assert_eq!(json["config"]["drop_after"], true);
}

#[test]
fn profile_fetches_writes_a_flame_graph_and_splits_the_client_time() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "measure",
            "--engines",
            "sqlite,floor",
            "--sizes",
            "64KiB",
            "--dataset-bytes",
            "4MiB",
            "--warmup",
            "100ms",
            "--measure",
            "200ms",
            "--profile-fetches",
            "500ms",
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let (dir, json) = only_run(root.path());
    let profiles = json["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2, "{profiles:?}");
    let share = |p: &serde_json::Value, k: &str| p[k].as_f64().unwrap();
    for p in profiles {
        let engine = p["engine"].as_str().unwrap();
        assert!(p["fetches"].as_u64().unwrap() > 0, "{p}");
        assert!(p["samples"].as_u64().unwrap() > 0, "{p}");
        let total: f64 = ["orm_share", "driver_share", "sqlite_share", "other_share"]
            .iter()
            .map(|k| share(p, k))
            .sum();
        assert!((total - 1.0).abs() < 1e-9, "{p}");
        let cpu = share(p, "cpu_per_wall");
        assert!(cpu > 0.0 && cpu < 4.0, "{p}");
        // The flame graph is an SVG in the run directory, named in the report.
        let svg = p["flamegraph"].as_str().unwrap();
        assert_eq!(svg, format!("profiles/{engine}-64KiB-cold.svg"));
        let text = std::fs::read_to_string(dir.join(svg)).unwrap();
        assert!(text.contains("<svg") && text.contains("</svg>"), "{svg}");
        let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
        assert!(html.contains(&format!("href=\"{svg}\"")), "{svg} linked");
    }
    let by = |name: &str| profiles.iter().find(|p| p["engine"] == name).unwrap();
    // A pread needs no ORM, driver or SQLite; SeaORM on SQLite runs all three.
    let floor = by("floor");
    assert_eq!(share(floor, "other_share"), 1.0, "{floor}");
    let sqlite = by("sqlite");
    assert!(share(sqlite, "sqlite_share") > 0.0, "{sqlite}");
    assert!(share(sqlite, "driver_share") > 0.0, "{sqlite}");
}

#[test]
fn an_sqlite_load_killed_in_bulk_mode_resumes_when_intact_and_starts_again_when_not() {
    let root = tempfile::tempdir().unwrap();
    let small = [
        "--engines",
        "sqlite",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "1MiB",
    ];
    let load = || run(root.path(), &[&["load"][..], &small].concat());
    let first = load();
    assert!(first.status.success(), "{}", stderr(&first));
    let file = root.path().join("data/sqlite/64KiB-x16.sqlite");
    // Loaded in bulk mode, then put back in the measured settings before marked
    // complete: WAL is in the file's header (read and write versions 2).
    let header = std::fs::read(&file).unwrap();
    assert_eq!(header[18..20], [2, 2], "a complete dataset is in WAL mode");

    // As a load killed between batches leaves it: rows 1..=8, incomplete, no WAL.
    let interrupt = || {
        crate::common::sql_exec(
            &crate::common::sqlite_url(&file),
            &[
                "DELETE FROM blobs WHERE id > 8",
                "UPDATE manifest SET complete = 0",
                "PRAGMA journal_mode = DELETE",
            ],
        )
    };
    interrupt();
    let resumed = load();
    let err = stderr(&resumed);
    assert!(resumed.status.success(), "{err}");
    assert!(
        err.contains(": resumed 512KiB"),
        "rows 9..=16 written: {err}"
    );
    assert!(!err.contains("again from the start"), "{err}");

    // Killed mid-batch: pages half-written (row 1's overflow chain broken here).
    interrupt();
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[8 * 4096..12 * 4096].fill(0xff);
    std::fs::write(&file, bytes).unwrap();
    let again = load();
    let err = stderr(&again);
    assert!(again.status.success(), "{err}");
    assert!(err.contains("loading it again from the start"), "{err}");
    assert!(err.contains(": loaded 1MiB"), "{err}");
    let verify = run(root.path(), &[&["verify"][..], &small].concat());
    assert!(verify.status.success(), "{}", stderr(&verify));
}

#[test]
fn each_sqlite_page_size_is_its_own_dataset_read_by_every_sqlite_engine() {
    let root = tempfile::tempdir().unwrap();
    let small = ["--sizes", "64KiB", "--dataset-bytes", "1MiB"];
    let sqlite = root.path().join("data/sqlite");
    let measure = run(
        root.path(),
        &[
            &["measure", "--engines", "sqlite,sqlite-raw,sqlite-blobio"][..],
            &small,
            &[
                "--sqlite-page-size",
                "16384",
                "--warmup",
                "50ms",
                "--measure",
                "100ms",
                "--cache",
                "cold",
            ],
        ]
        .concat(),
    );
    assert!(measure.status.success(), "{}", stderr(&measure));
    // Named by its layout; the default layout's file is not touched.
    assert!(sqlite.join("64KiB-x16-p16384.sqlite").exists());
    assert!(!sqlite.join("64KiB-x16.sqlite").exists());
    let (_, json) = only_run(root.path());
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    for r in results {
        // Every engine read the 16 KiB-page file back (and its content checks passed).
        assert_eq!(r["settings"]["page_size"], "16384", "{}", r["engine"]);
        assert!(
            r["settings"]["file"]
                .as_str()
                .unwrap()
                .ends_with("-p16384.sqlite"),
            "{}",
            r["settings"]
        );
    }
    // The default layout is another dataset: loading it leaves the 16 KiB one as it was.
    let before = std::fs::read(sqlite.join("64KiB-x16-p16384.sqlite")).unwrap();
    let load = run(
        root.path(),
        &[&["load", "--engines", "sqlite"][..], &small].concat(),
    );
    assert!(load.status.success(), "{}", stderr(&load));
    assert!(stderr(&load).contains(": loaded 1MiB"), "{}", stderr(&load));
    assert_eq!(
        std::fs::read(sqlite.join("64KiB-x16-p16384.sqlite")).unwrap(),
        before
    );
    let header = std::fs::read(sqlite.join("64KiB-x16.sqlite")).unwrap();
    assert_eq!(u16::from_be_bytes([header[16], header[17]]), 4096);
}

/// The first stored key (in rowid order: insert order) of an SQLite file, as the test's
/// own connection reads it, and its type.
fn first_sqlite_key(file: &std::path::Path) -> (String, Vec<u8>) {
    use sea_orm::{ConnectionTrait, Database, Statement};
    crate::common::block_on(async {
        let db = Database::connect(format!("sqlite://{}?mode=ro", file.display()))
            .await
            .unwrap();
        let row = db
            .query_one_raw(Statement::from_string(
                db.get_database_backend(),
                "SELECT typeof(id) AS t, id FROM blobs ORDER BY rowid LIMIT 1",
            ))
            .await
            .unwrap()
            .unwrap();
        let found = (
            row.try_get::<String>("", "t").unwrap(),
            row.try_get::<Vec<u8>>("", "id").unwrap_or_default(),
        );
        db.close().await.unwrap();
        found
    })
}

#[test]
fn each_key_type_is_its_own_sqlite_dataset_fetched_by_key_by_every_sqlite_engine() {
    let root = tempfile::tempdir().unwrap();
    // 4 MiB blobs go in through incremental blob I/O: the keyed row's rowid is found
    // after the insert.
    let small = ["--sizes", "1KiB,4MiB", "--dataset-bytes", "8MiB"];
    let sqlite = root.path().join("data/sqlite");
    let measure = run(
        root.path(),
        &[
            &[
                "measure",
                "--engines",
                "sqlite,sqlite-raw,sqlite-blobio,floor",
            ][..],
            &small,
            &[
                "--key",
                "uuidv7",
                "--warmup",
                "50ms",
                "--measure",
                "100ms",
                "--cache",
                "cold",
            ],
        ]
        .concat(),
    );
    assert!(measure.status.success(), "{}", stderr(&measure));
    let (_, json) = only_run(root.path());
    assert_eq!(json["config"]["key"], "uuidv7");
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 8, "4 engines x 2 sizes");
    // The floor reads by offset whatever the key: the same file as an unkeyed run's.
    let floor = root.path().join("data/floor");
    assert!(floor.join("1KiB-x8192.bin").exists());
    assert!(!floor.join("1KiB-x8192-kuuidv7.bin").exists());
    for r in results.iter().filter(|r| r["engine"] != "floor") {
        // Each fetch found the blob of its id by the id's key (content checks passed).
        assert!(r["measured"]["count"].as_u64().unwrap() > 0, "{r}");
        assert!(
            r["settings"]["file"]
                .as_str()
                .unwrap()
                .ends_with("-kuuidv7.sqlite"),
            "{}",
            r["settings"]
        );
    }
    let blobio = results
        .iter()
        .find(|r| r["engine"] == "sqlite-blobio")
        .unwrap();
    assert!(
        blobio["settings"]["access"]
            .as_str()
            .unwrap()
            .contains("SELECT rowid FROM blobs WHERE id = ?"),
        "{}",
        blobio["settings"]
    );
    for l in json["loads"].as_array().unwrap() {
        // SQLite's file holds the keys, pages and their free space beyond the blobs;
        // the floor's file is exactly the blobs.
        let disk = l["disk_bytes"].as_u64().unwrap();
        match l["store"].as_str().unwrap() {
            "floor" => assert_eq!(disk, 8 << 20, "{l}"),
            _ => assert!(disk > 8 << 20, "{l}"),
        }
    }
    // Stored under 16-byte version-7 UUIDs; the integer-id dataset is not touched.
    let (kind, key) = first_sqlite_key(&sqlite.join("1KiB-x8192-kuuidv7.sqlite"));
    assert_eq!(kind, "blob");
    assert_eq!(key.len(), 16);
    assert_eq!(key[6] >> 4, 7, "UUID version nibble: {key:02x?}");
    assert!(!sqlite.join("1KiB-x8192.sqlite").exists());

    // Another key type is another file; verify reads every key back.
    let load = run(
        root.path(),
        &[
            &["load", "--engines", "sqlite", "--key", "uuidv4"][..],
            &small,
        ]
        .concat(),
    );
    assert!(load.status.success(), "{}", stderr(&load));
    let (_, v4) = first_sqlite_key(&sqlite.join("1KiB-x8192-kuuidv4.sqlite"));
    assert_eq!(v4[6] >> 4, 4, "{v4:02x?}");
    assert_ne!(v4, key);
    let verify = run(
        root.path(),
        &[
            &["verify", "--engines", "sqlite", "--key", "uuidv4"][..],
            &small,
        ]
        .concat(),
    );
    let verified = stderr(&verify);
    assert!(verify.status.success(), "{verified}");
    assert_eq!(verified.matches("as uuidv4 keys").count(), 2, "{verified}");
}

#[test]
fn variants_sets_each_layout_beside_the_engines_default_layout() {
    let root = tempfile::tempdir().unwrap();
    let small = [
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "1MiB",
        "--warmup",
        "50ms",
        "--measure",
        "100ms",
    ];
    let layouts: [&[&str]; 3] = [
        &["--engines", "floor,sqlite-raw"],
        &[
            "--engines",
            "floor,sqlite-raw",
            "--sqlite-page-size",
            "16384",
        ],
        &["--engines", "sqlite-raw", "--key", "uuidv7"],
    ];
    let mut ids = Vec::new();
    let mut jsons = Vec::new();
    for layout in layouts {
        let out = run(root.path(), &[&["measure"][..], &small, layout].concat());
        assert!(out.status.success(), "{}", stderr(&out));
        let dir = crate::common::newest_run(root.path());
        jsons.push(
            serde_json::from_slice::<serde_json::Value>(
                &std::fs::read(dir.join("results.json")).unwrap(),
            )
            .unwrap(),
        );
        ids.push(dir.file_name().unwrap().to_str().unwrap().to_string());
    }
    let results_dir = root.path().join("results");
    let variants = |runs: &[&str]| {
        crate::common::blobrace()
            .arg("variants")
            .args(runs)
            .arg("--results-dir")
            .arg(&results_dir)
            .output()
            .unwrap()
    };
    let out = variants(&ids.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", stderr(&out));
    let page_dir = crate::common::newest_variants(root.path());
    let rows: serde_json::Value =
        serde_json::from_slice(&std::fs::read(page_dir.join("variants.json")).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    // sqlite-raw under three layouts; the floor has no layout and is no row of its own.
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows.iter().all(|r| r["engine"] == "sqlite-raw"));
    let p50 = |json: &serde_json::Value, engine: &str| {
        json["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["engine"] == engine)
            .unwrap()["measured"]["latency"]["p50_ns"]
            .as_f64()
            .unwrap()
    };
    let row = |layout: &str| rows.iter().find(|r| r["layout"] == layout).unwrap();
    assert_eq!(row("default")["p50_ratio"], 1.0);
    let page = row("page 16384");
    let expected = p50(&jsons[1], "sqlite-raw") / p50(&jsons[0], "sqlite-raw");
    assert!(
        (page["p50_ratio"].as_f64().unwrap() - expected).abs() < 1e-9,
        "{page}"
    );
    let vs_floor = p50(&jsons[1], "sqlite-raw") / p50(&jsons[1], "floor");
    assert!(
        (page["p50_vs_floor"].as_f64().unwrap() - vs_floor).abs() < 1e-9,
        "{page}"
    );
    // Both runs recorded their file's size on disk.
    assert!(page["disk_ratio"].as_f64().unwrap() > 0.0, "{page}");
    let keyed = row("key uuidv7");
    assert!(keyed["p50_ratio"].as_f64().unwrap() > 0.0);
    assert!(keyed["p50_vs_floor"].is_null(), "no floor in the keyed run");
    let html = std::fs::read_to_string(page_dir.join("index.html")).unwrap();
    for needle in [
        "<h2>sqlite-raw</h2>",
        "page 16384",
        "key uuidv7",
        "no floor in its run",
    ] {
        assert!(html.contains(needle), "{needle} missing");
    }
    let svg = std::fs::read_to_string(page_dir.join("variants-1KiB-cold.svg")).unwrap();
    assert!(
        svg.contains("uuidv7") && svg.contains("page 16K"),
        "short layout names"
    );

    // One run is nothing to compare; an unknown run is named.
    let one = variants(&[&ids[0]]);
    assert_eq!(one.status.code(), Some(2), "{}", stderr(&one));
    let unknown = variants(&[&ids[0], "no-such-run"]);
    assert!(!unknown.status.success());
    assert!(
        stderr(&unknown).contains("no run no-such-run"),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn a_dry_run_prints_every_cell_and_its_time_and_touches_nothing() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &args(
            "measure",
            &[
                "--dry-run",
                "--engines",
                "floor,fs",
                "--cache",
                "both",
                "--warmup",
                "1s",
                "--measure",
                "2s",
                "--min-fetches",
                "0",
            ],
        ),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let plan = crate::common::stdout(&out);
    // 2 sizes × 2 engines × 2 cache states, one line each, then the total.
    assert!(
        plan.starts_with(
            "plan: 2 size(s) × 1 repeat(s) × 2 engine(s) × 2 cache state(s) = 8 cell(s)"
        ),
        "{plan}"
    );
    let cells: Vec<&str> = plan.lines().filter(|l| l.contains("       1  ")).collect();
    assert_eq!(cells.len(), 8, "{plan}");
    assert!(
        cells[0].contains("1KiB") && cells[0].contains("fs") && cells[0].contains("c1"),
        "{plan}"
    );
    // A cold cell: warm-up, measuring and the two 30 ms probes.
    assert!(cells[0].ends_with(" 3 s"), "{plan}");
    assert!(plan.lines().any(|l| l.starts_with("total: ")), "{plan}");
    // Then the loads it would make, estimated as the run estimates them at its start:
    // nothing is loaded or recorded here, so from the stores' own figures.
    let loads = plan.lines().last().unwrap();
    assert!(
        loads.contains("4 dataset(s) to load") && loads.contains("from the stores' own figures"),
        "{plan}"
    );
    // Nothing loaded, measured or written.
    assert!(
        crate::common::files_under(root.path()).is_empty(),
        "{:?}",
        crate::common::files_under(root.path())
    );
    // The engines the real run would leave out (here every server: no URL reaches one)
    // are left out of the plan too, saying why, as the run says it.
    let every = run(root.path(), &args("measure", &["--dry-run"]));
    assert!(every.status.success(), "{}", stderr(&every));
    let plan = crate::common::stdout(&every);
    assert!(!plan.contains("postgres"), "{plan}");
    assert!(
        stderr(&every).contains("skipping postgres, postgres-raw: "),
        "{}",
        stderr(&every)
    );
    assert!(crate::common::files_under(root.path()).is_empty());
}
