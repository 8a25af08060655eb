//! `--write-rate`: one writer replaces rows while the readers are measured. Every fetch
//! is checked against the versions its row may hold at that moment, the writer's own
//! latency is recorded, and `verify` afterwards finds every row at the version the
//! committed changes give it.

use crate::common::{Servers, files_under, run, stderr};
use serde_json::Value;

fn newest(root: &std::path::Path) -> (String, Value) {
    let dir = crate::common::newest_run(root);
    let json = serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    (dir.file_name().unwrap().to_str().unwrap().to_string(), json)
}

/// Every measurement of a written engine has its writer's report (one client and
/// many); the floor's have none. Returns the highest count of changes after any.
fn check_writers(json: &Value, written: &[&str], rate: f64) -> u64 {
    let one = json["results"].as_array().unwrap().iter();
    let many = json["load_results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["result"]);
    let mut last = 0;
    let mut seen = 0;
    for r in one.chain(many) {
        let who = format!("{} {}", r["engine"], r["scenario"]["cache"]);
        if r["engine"] == "floor" {
            assert!(r["writer"].is_null(), "{who}: the floor has no writer");
            continue;
        }
        assert!(written.contains(&r["engine"].as_str().unwrap()), "{who}");
        let w = &r["writer"];
        assert_eq!(w["rate_asked"], rate, "{who}: {w}");
        let (before, after) = (
            w["applied_before"].as_u64().unwrap(),
            w["applied_after"].as_u64().unwrap(),
        );
        let writes = w["writes"].as_u64().unwrap();
        assert!(writes > 0, "{who}: the writer changed nothing: {w}");
        assert_eq!(after - before, writes, "{who}: {w}");
        assert!(w["p99_ms"].as_f64().unwrap() >= w["p50_ms"].as_f64().unwrap());
        let per_second: u64 = w["per_second"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[0].as_u64().unwrap())
            .sum();
        assert_eq!(
            per_second, writes,
            "{who}: the timeline counts every change"
        );
        assert!(r["measured"]["count"].as_u64().unwrap() > 0, "{who}");
        last = last.max(after);
        seen += 1;
    }
    assert!(seen >= 2 * written.len(), "one client and four: {json}");
    last
}

#[test]
fn a_writer_replaces_sqlite_rows_while_one_and_four_clients_read_and_every_row_verifies() {
    let root = tempfile::tempdir().unwrap();
    let dataset = [
        "--engines",
        // sqlite-blobio too: its blob handle, kept open from fetch to fetch, read a
        // stale snapshot once a writer changed the rows (caught by this check).
        "sqlite-raw,sqlite-blobio,floor",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "16MiB",
        "--cache",
        "cold",
    ];
    let timing = [
        "--warmup",
        "200ms",
        "--measure",
        "1s",
        "--precision",
        "off",
        "--saturate-sizes",
        "none",
    ];
    // 200 changes a second over 256 rows: the writer goes round the rows several
    // times, so a row's version counts rounds, and readers meet rows mid-change.
    let measure = run(
        root.path(),
        &[
            &["measure"][..],
            &dataset,
            &timing,
            &["--clients", "1,4", "--write-rate", "200"],
        ]
        .concat(),
    );
    let err = stderr(&measure);
    assert!(measure.status.success(), "{err}");
    assert!(err.contains("sqlite-raw 64KiB writer: "), "{err}");
    assert!(err.contains("sqlite-blobio 64KiB writer: "), "{err}");
    let (written_run, json) = newest(root.path());
    assert_eq!(json["failures"], serde_json::json!([]), "{err}");
    assert_eq!(json["config"]["write_rate"], 200.0);
    let changes = check_writers(&json, &["sqlite-raw", "sqlite-blobio"], 200.0);
    assert!(changes > 256, "past one round of the rows: {changes}");

    // The written dataset is its own; the fresh one was never loaded.
    let files = files_under(root.path());
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("sqlite/64KiB-x256-live.sqlite")),
        "{files:?}"
    );
    assert!(
        !files
            .iter()
            .any(|f| f.ends_with("sqlite/64KiB-x256.sqlite")),
        "{files:?}"
    );
    let page =
        std::fs::read_to_string(crate::common::newest_run(root.path()).join("index.html")).unwrap();
    assert!(page.contains("<h2 id=writes>Reads while writing</h2>"));
    assert!(page.contains("one writer replaced rows at 200 a second"));

    // Every row at the version the committed changes give it, after all of them.
    let verify = run(
        root.path(),
        &[
            "verify",
            "--engines",
            "sqlite",
            "--sizes",
            "64KiB",
            "--dataset-bytes",
            "16MiB",
            "--write-rate",
            "200",
        ],
    );
    let err = stderr(&verify);
    assert!(verify.status.success(), "{err}");
    assert!(
        err.contains(&format!("every row at its version after {changes} changes")),
        "{err}"
    );

    // The same dataset without a writer: reused as it is, nothing written.
    let again = run(
        root.path(),
        &[
            &["measure"][..],
            &dataset,
            &timing,
            &["--clients", "1", "--write-rate", "0"],
        ]
        .concat(),
    );
    let err = stderr(&again);
    assert!(again.status.success(), "{err}");
    assert!(!err.contains("writer:"), "{err}");
    let (quiet_run, json) = newest(root.path());
    assert_eq!(json["failures"], serde_json::json!([]), "{err}");
    for r in json["results"].as_array().unwrap() {
        assert!(r["writer"].is_null(), "{r}");
    }
    for l in json["loads"].as_array().unwrap() {
        assert_eq!(l["outcome"], "already-loaded", "{l}");
    }

    // Side by side: two workloads of the same engine, not one "default" twice.
    let out = crate::common::blobrace()
        .arg("variants")
        .args([&written_run, &quiet_run])
        .arg("--results-dir")
        .arg(root.path().join("results"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let variants_dir = std::fs::read_dir(root.path().join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("variants-")
        })
        .expect("a variants directory");
    let rows: Value =
        serde_json::from_slice(&std::fs::read(variants_dir.join("variants.json")).unwrap())
            .unwrap();
    let mut layouts: Vec<&str> = rows
        .as_array()
        .unwrap_or_else(|| panic!("{rows}"))
        .iter()
        .filter(|r| r["engine"] == "sqlite-raw" && r["clients"] == 1)
        .map(|r| r["layout"].as_str().unwrap())
        .collect();
    layouts.sort();
    assert_eq!(
        layouts,
        ["live dataset, no writer", "writer 200/s"],
        "{rows}"
    );
}

#[test]
fn postgres_and_mariadb_take_a_writer_while_read_and_verify() {
    for (server, engine) in [("postgres", "postgres-raw"), ("mariadb", "mariadb-raw")] {
        let Some(servers) = Servers::reach(&[server], "a writer on a server") else {
            continue;
        };
        let root = tempfile::tempdir().unwrap();
        let dataset = [
            "--engines",
            engine,
            "--sizes",
            "64KiB",
            "--dataset-bytes",
            "8MiB",
            "--write-rate",
            "100",
        ];
        // A previous run's written dataset is dropped first: this one loads it.
        let _ = servers.run(root.path(), &[&["drop"][..], &dataset].concat());
        let measure = servers.run(
            root.path(),
            &[
                &["measure"][..],
                &dataset,
                &[
                    "--cache",
                    "cold",
                    "--warmup",
                    "200ms",
                    "--measure",
                    "1s",
                    "--precision",
                    "off",
                    "--clients",
                    "1,4",
                    "--saturate-sizes",
                    "none",
                ],
            ]
            .concat(),
        );
        let err = stderr(&measure);
        assert!(measure.status.success(), "{engine}: {err}");
        let (_, json) = newest(root.path());
        assert_eq!(json["failures"], serde_json::json!([]), "{engine}: {err}");
        let changes = check_writers(&json, &[engine], 100.0);
        let err = servers.ok(root.path(), &[&["verify"][..], &dataset].concat());
        assert!(
            err.contains(&format!("every row at its version after {changes} changes")),
            "{engine}: {err}"
        );
        servers.ok(root.path(), &[&["drop"][..], &dataset].concat());
    }
}
