//! The time to the first bytes: blobs of 1 MiB and more fetched in pieces after each
//! measurement, timed at the first piece and at the end, by every engine that can
//! stream; an engine that reads whole values only says so; smaller blobs get none.

use crate::common::{only_run, run, stderr};

#[test]
fn large_blobs_are_streamed_and_timed_at_their_first_piece_and_whole_value_engines_say_so() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "measure",
            "--engines",
            "floor,fs,sqlite-blobio,sqlite-raw",
            "--sizes",
            "64KiB,1MiB",
            "--dataset-bytes",
            "8MiB",
            "--warmup",
            "50ms",
            "--measure",
            "200ms",
            "--first-bytes",
            "200ms",
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let (run_dir, json) = only_run(root.path());
    let first = json["first_bytes"].as_array().unwrap();
    // 1 MiB only: nothing below the threshold.
    assert_eq!(first.len(), 4, "{first:?}");
    for f in first {
        let who = f["engine"].as_str().unwrap();
        assert_eq!(f["size"], "1MiB", "{who}");
        assert_eq!(f["chunk_bytes"], 64 << 10, "{who}");
        let measured = &f["measured"];
        if who == "sqlite-raw" {
            assert!(measured.is_null(), "{who}: {f}");
            assert!(
                f["how"].as_str().unwrap().contains("whole value only"),
                "{who}: {f}"
            );
            continue;
        }
        assert!(measured["fetches"].as_u64().unwrap() >= 20, "{who}: {f}");
        let (first_p50, whole_p50) = (
            measured["first_p50_ns"].as_u64().unwrap(),
            measured["whole_p50_ns"].as_u64().unwrap(),
        );
        // Sixteen pieces of 64 KiB: the first arrives before the last.
        assert!(0 < first_p50 && first_p50 < whole_p50, "{who}: {f}");
        assert!(
            err.contains(&format!("streamed {who} 1MiB cold: first bytes p50")),
            "{err}"
        );
    }
    assert!(
        err.contains("streamed sqlite-raw 1MiB cold: whole value only"),
        "{err}"
    );
    let page = std::fs::read_to_string(run_dir.join("index.html")).unwrap();
    assert!(
        page.contains("Time to the first bytes"),
        "the report's table"
    );
    // And its chart at 1 MiB (none at 64 KiB): a row per engine that streamed, the
    // one that did not named under it.
    assert!(
        page.contains("first-bytes-1MiB.svg"),
        "the page shows the chart"
    );
    assert!(!run_dir.join("first-bytes-64KiB.svg").exists());
    let svg = std::fs::read_to_string(run_dir.join("first-bytes-1MiB.svg")).unwrap();
    // plotters writes each label on a line of its own.
    for engine in ["floor", "fs", "sqlite-blobio"] {
        assert!(
            svg.contains(&format!("\n{engine}\n")),
            "{engine} has its row"
        );
    }
    assert!(svg.contains("whole value only: sqlite-raw"), "{svg}");
}

/// The servers stream with one query per piece (PostgreSQL's substring(), MariaDB's
/// SUBSTRING()), checked byte for byte; Dolt says why it reads whole values only.
#[test]
fn sql_servers_stream_a_value_piece_by_piece_and_dolt_says_why_it_cannot() {
    let Some(servers) =
        crate::common::Servers::reach(&["postgres", "mariadb", "dolt"], "streamed SQL fetches")
    else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    servers.ok(
        root.path(),
        &[
            "measure",
            "--engines",
            "postgres-raw,mariadb-raw,dolt-raw",
            "--sizes",
            "1MiB",
            "--dataset-bytes",
            "7MiB",
            "--warmup",
            "50ms",
            "--measure",
            "200ms",
            "--first-bytes",
            "200ms",
        ],
    );
    let (_, json) = only_run(root.path());
    let first = json["first_bytes"].as_array().unwrap();
    assert_eq!(first.len(), 3, "{first:?}");
    for f in first {
        if f["engine"] == "dolt-raw" {
            assert!(f["measured"].is_null(), "{f}");
            assert!(
                f["how"].as_str().unwrap().contains("counts characters"),
                "{f}"
            );
            continue;
        }
        let m = &f["measured"];
        assert!(m["fetches"].as_u64().unwrap() >= 20, "{f}");
        assert!(
            m["first_p50_ns"].as_u64().unwrap() < m["whole_p50_ns"].as_u64().unwrap(),
            "{f}"
        );
    }
}
