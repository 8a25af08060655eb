//! `--churn`: a share of the rows changed after the load, through each database's own
//! write path; `verify` checks every row at the version its applied changes give it,
//! a churn killed with SIGKILL halfway included.

use crate::common::{Servers, files_under, run, server_url_or_skip, signal_after, stderr};

fn with<'a>(cmd: &'a str, flags: &[&'a str]) -> Vec<&'a str> {
    [&[cmd][..], flags].concat()
}

#[test]
fn a_churned_sqlite_dataset_is_its_own_and_every_row_verifies_at_its_version() {
    let root = tempfile::tempdir().unwrap();
    for kind in ["replace", "delete-insert"] {
        let flags = [
            "--engines",
            "sqlite,floor",
            "--sizes",
            "64KiB",
            "--dataset-bytes",
            "16MiB",
            "--churn",
            "30",
            "--churn-kind",
            kind,
        ];
        let load = run(root.path(), &with("load", &flags));
        let err = stderr(&load);
        assert!(load.status.success(), "{kind}: {err}");
        // 30% of 256 rows, rounded up.
        assert!(
            err.contains(&format!(
                "sqlite 64KiB churn 30% {kind}: 77 of 256 rows changed"
            )),
            "{kind}: {err}"
        );
        let verify = run(root.path(), &with("verify", &flags));
        let err = stderr(&verify);
        assert!(verify.status.success(), "{kind}: {err}");
        assert!(
            err.contains(&format!("77 of 77 rows at their churn 30% {kind} version")),
            "{kind}: {err}"
        );
        // The floor is the same file as a fresh run's: nothing of it changes.
        assert_eq!(err.matches("ok  ").count(), 2, "{kind}: {err}");
        // Measured: every fetch checked against the version its engine's data holds
        // (the floor's fresh file, SQLite's churned rows), in one run.
        let measure = run(
            root.path(),
            &[
                &["measure", "--engines", "sqlite-raw,floor"][..],
                &flags[2..],
                &["--measure", "300ms", "--warmup", "100ms"],
                &[
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
        assert!(measure.status.success(), "{kind}: {err}");
        let (_, results) = crate::common::only_run(root.path());
        assert_eq!(results["failures"], serde_json::json!([]), "{kind}");
        assert_eq!(results["config"]["churn"]["percent"], 30, "{kind}");
        let churned: Vec<_> = results["loads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["churn"]["rows"] == 77)
            .collect();
        assert_eq!(
            churned.len(),
            1,
            "the SQLite load carries its churn: {results}"
        );
        std::fs::remove_dir_all(root.path().join("results")).unwrap();
    }
    let files = files_under(root.path());
    for name in [
        "sqlite/64KiB-x256-churn30.sqlite",
        "sqlite/64KiB-x256-churn30di.sqlite",
        "floor/64KiB-x256.bin",
    ] {
        assert!(files.iter().any(|f| f.ends_with(name)), "{name}: {files:?}");
    }
    // The fresh dataset is another one, not loaded by the churned runs.
    assert!(
        !files
            .iter()
            .any(|f| f.ends_with("sqlite/64KiB-x256.sqlite")),
        "{files:?}"
    );
    let fresh = run(
        root.path(),
        &[
            "verify",
            "--engines",
            "sqlite",
            "--sizes",
            "64KiB",
            "--dataset-bytes",
            "16MiB",
        ],
    );
    assert!(!fresh.status.success());
    assert!(
        stderr(&fresh).contains("is not loaded"),
        "{}",
        stderr(&fresh)
    );
}

#[test]
fn a_churn_killed_halfway_verifies_at_every_point_and_resumes_to_the_end() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "sqlite",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "48MiB",
        "--churn",
        "60",
    ];
    let total = 29492; // 60% of 49152 rows, rounded up
    let mut mid_churn = 0;
    for delay_ms in [700u64, 1200, 1800, 2600, 3600, 5000] {
        signal_after(root.path(), &with("load", &flags), libc::SIGKILL, delay_ms);
        let verify = run(root.path(), &with("verify", &flags));
        let err = stderr(&verify);
        if err.contains("is not loaded") {
            continue; // killed during the load itself (tests/it/resume.rs covers that)
        }
        // Every row holds the version the committed changes say, and nothing else.
        assert!(verify.status.success(), "killed after {delay_ms} ms: {err}");
        let marker = format!(" of {total} rows at their churn 60% replace version");
        let before = &err[..err.find(&marker).unwrap_or_else(|| panic!("{err}"))];
        let applied: u64 = before.rsplit(' ').next().unwrap().parse().unwrap();
        if applied < total {
            mid_churn += 1;
        } else {
            break;
        }
    }
    assert!(mid_churn >= 1, "no kill landed mid-churn");
    let finish = run(root.path(), &with("load", &flags));
    let err = stderr(&finish);
    assert!(finish.status.success(), "{err}");
    let verify = run(root.path(), &with("verify", &flags));
    let err = stderr(&verify);
    assert!(verify.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "{total} of {total} rows at their churn 60% replace version"
        )),
        "{err}"
    );
}

#[test]
fn the_sql_servers_change_rows_both_ways_and_verify() {
    // Dolt takes each 64 KiB blob in pieces joined on the server, as its loader sends them.
    for (server, engine) in [
        ("postgres", "postgres-raw"),
        ("mariadb", "mariadb-raw"),
        ("dolt", "dolt-raw"),
    ] {
        let Some(servers) = Servers::reach(&[server], "the churn of a server's rows") else {
            continue;
        };
        for kind in ["replace", "delete-insert"] {
            let root = tempfile::tempdir().unwrap();
            let flags = [
                "--engines",
                engine,
                "--sizes",
                "64KiB",
                "--dataset-bytes",
                "8MiB",
                "--churn",
                "30",
                "--churn-kind",
                kind,
            ];
            // A previous run's churned dataset is dropped first: this one loads it.
            let _ = servers.run(root.path(), &with("drop", &flags));
            let err = servers.ok(root.path(), &with("load", &flags));
            assert!(
                err.contains(&format!(
                    "{server} 64KiB churn 30% {kind}: 39 of 128 rows changed"
                )),
                "{engine} {kind}: {err}"
            );
            let err = servers.ok(root.path(), &with("verify", &flags));
            assert!(
                err.contains(&format!("39 of 39 rows at their churn 30% {kind} version")),
                "{engine} {kind}: {err}"
            );
            servers.ok(root.path(), &with("drop", &flags));
        }
    }
}

/// `--maintenance`: none turns PostgreSQL's autovacuum off for the table, full compacts
/// it (VACUUM FULL) and SQLite's file (VACUUM); each is its own dataset and verifies.
#[test]
fn maintenance_none_and_full_run_the_databases_own_statements() {
    let root = tempfile::tempdir().unwrap();
    let pg = server_url_or_skip("postgres", "--maintenance on PostgreSQL");
    let engines = if pg.is_some() {
        "sqlite,postgres-raw"
    } else {
        "sqlite"
    };
    for (maintenance, sqlite_says, pg_says) in [
        (
            "none",
            "nothing to turn off: SQLite runs no cleanup by itself",
            "`ALTER TABLE blobs SET (autovacuum_enabled = false",
        ),
        (
            "full",
            "maintenance: `VACUUM` in",
            "maintenance: `VACUUM FULL blobs; VACUUM (ANALYZE) blobs` in",
        ),
    ] {
        let mut flags = vec![
            "--engines",
            engines,
            "--sizes",
            "64KiB",
            "--dataset-bytes",
            "8MiB",
            "--churn",
            "30",
            "--maintenance",
            maintenance,
        ];
        if let Some(url) = &pg {
            flags.extend(["--postgres-url", url.as_str()]);
        }
        let _ = run(root.path(), &with("drop", &flags));
        let load = run(root.path(), &with("load", &flags));
        let err = stderr(&load);
        assert!(load.status.success(), "{maintenance}: {err}");
        assert!(err.contains(sqlite_says), "{maintenance}: {err}");
        assert!(
            err.contains("the database says: pages "),
            "{maintenance}: {err}"
        );
        if pg.is_some() {
            assert!(err.contains(pg_says), "{maintenance}: {err}");
            assert!(err.contains("TOAST dead rows"), "{maintenance}: {err}");
            assert!(
                err.contains(&format!("blobs_64kib_x128_churn30_m{maintenance}")),
                "{err}"
            );
        }
        let verify = run(root.path(), &with("verify", &flags));
        assert!(
            verify.status.success(),
            "{maintenance}: {}",
            stderr(&verify)
        );
        let drop = run(root.path(), &with("drop", &flags));
        assert!(drop.status.success(), "{}", stderr(&drop));
    }
}
