//! `--precision`: each engine and size is measured until its p50 and p99 are known to
//! within the shares asked, between the least time and the limit, and says how it ended.

use crate::common::{only_run, run, stderr};

fn measure(
    root: &std::path::Path,
    precision: &str,
    limit: &str,
) -> (String, serde_json::Value, String) {
    let out = run(
        root,
        &[
            "measure",
            "--engines",
            "floor,sqlite",
            "--sizes",
            "1KiB,64KiB",
            "--dataset-bytes",
            "8MiB",
            "--warmup",
            "100ms",
            "--precision",
            precision,
            "--measure",
            "1s",
            "--measure-limit",
            limit,
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let (dir, json) = only_run(root);
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    std::fs::remove_dir_all(root.join("results")).unwrap();
    (err, json, page)
}

fn report(r: &serde_json::Value) -> (String, &serde_json::Value, f64) {
    let who = format!("{} {}", r["engine"], r["size"]);
    let p = &r["precision"];
    let took = p["seconds"]
        .as_f64()
        .unwrap_or_else(|| panic!("{who}: {r}"));
    (who, p, took)
}

#[test]
fn a_cell_stops_once_its_p50_and_p99_are_precise_and_at_the_limit_says_how_far_it_got() {
    let root = tempfile::tempdir().unwrap();
    // p50 ±25% and p99 merely judged (±99%): thousands of fetches a second of 1 KiB and
    // 64 KiB from the page cache get there at the first checks, long before the limit.
    // (±10% took 15 s on a noisy CI machine: its 200 ms windows' p50s of sqlite's 1 KiB
    // fetches differed that much.)
    let (err, json, page) = measure(root.path(), "25%,99%", "30s");
    assert_eq!(json["config"]["precision"]["p50"], 0.25);
    assert_eq!(json["config"]["precision"]["p99"], 0.99);
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let mut short = 0;
    for r in results {
        let (who, p, took) = report(r);
        assert_eq!(p["asked"], json["config"]["precision"], "{who}: {p}");
        if p["stopped"] == "time-limit" && r["engine"] != "floor" {
            // SeaORM's 64 KiB fetches on CI's busy machine once kept their windows'
            // p50s 32% apart for the whole 30 s: a cell may fall short, and then it
            // says so with the widths it reached, never a precision it did not have.
            short += 1;
            assert!(took >= 30.0, "{who}: {p}");
            assert!(
                p["p50"].as_f64().is_some_and(|w| w > 0.25)
                    || p["p99"].as_f64().is_some_and(|w| w > 0.99),
                "{who}: {p}"
            );
            assert!(err.contains("stopped at the time limit"), "{err}");
            assert!(page.contains("Precision not reached"));
            continue;
        }
        // The floor's page-cache reads always get there.
        assert_eq!(p["stopped"], "reached", "{who}: {p}");
        assert!(p["p50"].as_f64().is_some_and(|w| w <= 0.25), "{who}: {p}");
        assert!(p["p99"].as_f64().is_some_and(|w| w <= 0.99), "{who}: {p}");
        // Between the least time and the limit (how much sooner depends on how busy
        // the machine is: 27 s once on CI's, its windows' p50s wandering).
        assert!(
            (1.0..30.0).contains(&took),
            "{who}: between --measure and the limit: {p}"
        );
        // The widths recorded are the result's own intervals'.
        let m = &r["measured"];
        let iv = &m["intervals"]["p50"];
        let half = (iv["hi_ns"].as_f64().unwrap() - iv["lo_ns"].as_f64().unwrap()) / 2.0;
        let p50 = m["latency"]["p50_ns"].as_f64().unwrap();
        assert!(
            (half / p50 - p["p50"].as_f64().unwrap()).abs() < 1e-9,
            "{who}: {p} {iv}"
        );
    }
    if short == 0 {
        assert!(!err.contains("stopped at the time limit"), "{err}");
        assert!(!page.contains("Precision not reached"));
    }
    assert!(
        page.contains("measured until p50 ±25%, p99 ±99% (95% intervals), for at least 1s"),
        "the report says how long cells were measured"
    );

    // p50 to ±0.01% cannot be had in 1.5 s: every cell stops at the limit and says so.
    let (err, json, page) = measure(root.path(), "0.01%", "1500ms");
    for r in json["results"].as_array().unwrap() {
        let (who, p, took) = report(r);
        assert_eq!(p["stopped"], "time-limit", "{who}: {p}");
        assert!((1.5..3.0).contains(&took), "{who}: {p}");
        assert!(p["p50"].as_f64().is_none_or(|w| w > 0.0001), "{who}: {p}");
    }
    assert_eq!(err.matches("stopped at the time limit").count(), 4, "{err}");
    assert!(
        page.contains("Precision not reached</b> in 4 of 4 results"),
        "the report says which fell short"
    );
}

#[test]
fn a_measuring_time_given_alone_is_fixed_and_records_no_precision() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "measure",
            "--engines",
            "floor",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "2MiB",
            "--warmup",
            "50ms",
            "--measure",
            "1100ms",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, json) = only_run(root.path());
    assert!(json["config"]["precision"].is_null(), "{}", json["config"]);
    let r = &json["results"][0];
    assert!(r["precision"].is_null(), "{r}");
    let bad = run(root.path(), &["measure", "--precision", "0%"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = stderr(&bad);
    assert!(
        err.contains("precision") && err.contains("more than 0%"),
        "{err}"
    );
}
