//! The steady-state scenario and repeats, end to end on the embedded engines: a
//! capped run whose dataset is larger than the cap is prefilled until the cgroup's
//! page cache is full, settles, and records it; `--repeat` rotates the engine list.

use crate::common::{only_run, run, stderr};
use serde_json::Value;

/// Measure under a 64 MiB cap (needs cgroups: root on this machine) or say why not.
fn capped(root: &std::path::Path, args: &[&str]) -> Option<Value> {
    let mut all = vec![
        "measure",
        "--sizes",
        "64KiB",
        "--warmup",
        "100ms",
        "--measure",
        "600ms",
        "--steady-limit",
        "15s",
        "--cap",
        "64MiB",
    ];
    all.extend_from_slice(args);
    let out = run(root, &all);
    let err = stderr(&out);
    if !out.status.success() && err.contains("cannot run under the requested") {
        // SAFETY: geteuid has no preconditions and cannot fail.
        assert!(
            unsafe { libc::geteuid() } != 0,
            "root can cap itself: {err}"
        );
        eprintln!("skipped: this process may not create cgroups here ({err})");
        return None;
    }
    assert!(out.status.success(), "{err}");
    Some(only_run(root).1)
}

fn results<'a>(json: &'a Value, cache: &str) -> Vec<&'a Value> {
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["cache"] == cache)
        .collect()
}

#[test]
fn a_steady_run_fills_the_cap_settles_and_meets_the_model() {
    let root = tempfile::tempdir().unwrap();
    let Some(json) = capped(
        root.path(),
        &[
            "--engines",
            "floor,sqlite-raw",
            "--dataset-bytes",
            "192MiB",
            "--cache",
            "both",
        ],
    ) else {
        return;
    };
    assert_eq!(
        json["config"]["cache"],
        serde_json::json!(["cold", "steady"])
    );
    assert_eq!(results(&json, "cold").len(), 2);
    assert_eq!(results(&json, "steady").len(), 2);
    for r in results(&json, "cold") {
        assert!(r["steady"].is_null(), "a cold result has no steady report");
    }
    for r in results(&json, "steady") {
        let s = &r["steady"];
        let prefill = &s["prefill"];
        // The prefill read more than the cap and stopped because the cache was full.
        assert!(prefill["bytes_read"].as_u64().unwrap() >= 64 << 20, "{s}");
        assert!(
            prefill["stopped"].as_str().unwrap().starts_with("full"),
            "{s}"
        );
        let after = prefill["cache_bytes_after"].as_u64().unwrap();
        assert!(
            (32 << 20..=64 << 20).contains(&after),
            "the cgroup's page cache is near the cap: {s}"
        );
        assert!(s["settle_fetches"].as_u64().unwrap() >= 600, "{s}");
        assert_eq!(s["fits_in_memory"], false);
        let model = s["model_hit_ratio"].as_f64().unwrap();
        assert!((0.15..0.4).contains(&model), "cache ÷ 192 MiB: {s}");
        if r["engine"] == "floor" {
            // A uniform random read of a packed file hits as often as the model says.
            assert_eq!(s["converged"], true, "{s}");
            let hit = r["measured"]["hit_ratio"].as_f64().unwrap();
            assert!(
                (hit - model).abs() < 0.1,
                "floor hit {hit} vs model {model}"
            );
        }
    }
    // One page per cache state: steady is the run's page, cold beside it.
    let (dir, _) = only_run(root.path());
    let main = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(main.contains("id=steady") && main.contains("the cold report"));
    let cold = std::fs::read_to_string(dir.join("cold/index.html")).unwrap();
    assert!(cold.contains("<b>cold</b>") && !cold.contains("id=steady"));
    let csv = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert!(csv.starts_with("run_id,engine,cache,repeat,"), "{csv}");
    assert_eq!(csv.lines().filter(|l| l.contains(",steady,1,")).count(), 2);
}

#[test]
fn a_dataset_smaller_than_the_cap_is_marked_fits_in_memory() {
    let root = tempfile::tempdir().unwrap();
    let Some(json) = capped(
        root.path(),
        &[
            "--engines",
            "floor",
            "--dataset-bytes",
            "8MiB",
            "--cache",
            "steady",
        ],
    ) else {
        return;
    };
    let r = &json["results"][0];
    assert_eq!(r["cache"], "steady");
    assert_eq!(r["steady"]["fits_in_memory"], true, "{r}");
    assert!(
        r["steady"]["prefill"]["stopped"]
            .as_str()
            .unwrap()
            .contains("fits in the cache"),
        "{r}"
    );
    assert_eq!(r["regime"]["verdict"], "fits-in-memory");
}

#[test]
fn repeats_rotate_the_engine_list_and_report_their_spread() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "measure",
            "--engines",
            "floor,fs,sqlite,sqlite-raw",
            "--sizes",
            "4KiB",
            "--dataset-bytes",
            "1MiB",
            "--warmup",
            "50ms",
            // Five 200 ms windows: the fewest a pooled p50 interval (and so the
            // ORM judgement) needs.
            "--measure",
            "1100ms",
            "--repeat",
            "2",
            "--cache",
            "cold",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (dir, json) = only_run(root.path());
    let order: Vec<String> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}.r{}", r["engine"].as_str().unwrap(), r["repeat"]))
        .collect();
    // The list (in the suite's order), then rotated by one.
    assert_eq!(
        order,
        [
            "sqlite.r1",
            "sqlite-raw.r1",
            "fs.r1",
            "floor.r1",
            "sqlite-raw.r2",
            "fs.r2",
            "floor.r2",
            "sqlite.r2"
        ]
    );
    // With two repeats the ORM cost is judged (true or false), never "unavailable".
    let csv = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "orm_cost_real").unwrap();
    let judged: Vec<&str> = csv
        .lines()
        .filter(|l| l.split(',').nth(1) == Some("sqlite"))
        .map(|l| l.split(',').nth(col).unwrap())
        .collect();
    assert_eq!(judged.len(), 2, "{csv}");
    assert!(
        judged.iter().all(|v| *v == "true" || *v == "false"),
        "{csv}"
    );
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(page.contains("id=repeats"), "the page shows the spread");
    // The tables show repeat 1 only: one row per engine in the size's table.
    assert!(stderr(&out).contains("floor.r2"), "{}", stderr(&out));
}

/// Under a skewed access the prefill reads the blobs that access draws (as a service
/// read that way holds them), and the floor's steady hit ratio meets Che's model.
#[test]
fn a_zipfian_steady_run_prefills_by_the_access_and_the_floor_meets_its_model() {
    let root = tempfile::tempdir().unwrap();
    let Some(json) = capped(
        root.path(),
        &[
            "--engines",
            "floor",
            "--dataset-bytes",
            "192MiB",
            "--cache",
            "steady",
            "--access",
            "zipfian",
        ],
    ) else {
        return;
    };
    let r = &results(&json, "steady")[0];
    let s = &r["steady"];
    assert_eq!(s["prefill"]["reads"], "blobs drawn zipfian:0.99", "{s}");
    let model = s["model_hit_ratio"].as_f64().unwrap();
    // A third of the dataset cached holds most of a zipfian's reads.
    assert!(model > 0.6, "{s}");
    let hit = r["measured"]["hit_ratio"].as_f64().unwrap();
    assert!(
        (hit - model).abs() < 0.1,
        "floor hit {hit} vs model {model}: {s}"
    );
}
