//! Load modes end to end on a small dataset: more clients (closed loop), a rate
//! (open loop), the saturation search, and a rate no engine can be offered.

use crate::common::{only_run, run, stderr};

const SMALL: [&str; 10] = [
    "--sizes",
    "64KiB",
    "--dataset-bytes",
    "4MiB",
    "--cache",
    "cold",
    "--warmup",
    "200ms",
    "--measure",
    "600ms",
];

fn args<'a>(cmd: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    crate::common::with_flags(cmd, &SMALL, extra)
}

#[test]
fn clients_and_a_rate_land_in_results_and_the_report() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &args(
            "measure",
            &["--engines", "floor,sqlite-raw", "--clients", "1,3"],
        ),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (dir, json) = only_run(root.path());
    assert_eq!(
        json["results"].as_array().unwrap().len(),
        2,
        "1 client each"
    );
    let loads = json["load_results"].as_array().unwrap();
    assert_eq!(loads.len(), 2, "3 clients each");
    for l in loads {
        assert_eq!(l["load"]["point"]["clients"], 3);
        assert!(l["load"]["point"]["rate"].is_null());
        assert!(l["load"]["fetches_per_s"].as_f64().unwrap() > 10.0, "{l}");
        assert!(
            l["load"]["response"].is_null(),
            "closed loop: service time only"
        );
        assert!(
            l["result"]["measured"]["hit_ratio"].is_null(),
            "no per-fetch split"
        );
        let share = l["load"]["cpu"]["process_seconds"].as_f64().unwrap();
        assert!(share > 0.0, "{l}");
    }
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("<h2 id=load>Under load</h2>"));
    assert!(dir.join("throughput-64KiB.svg").is_file());

    // Open loop at a rate every engine here serves: response and lag recorded.
    let out = run(
        root.path(),
        &args(
            "measure",
            &["--engines", "floor", "--clients", "2", "--rate", "200"],
        ),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let newest = crate::common::newest_run(root.path());
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(newest.join("results.json")).unwrap()).unwrap();
    let l = &json["load_results"][0];
    assert_eq!(l["load"]["point"]["rate"], 200.0);
    let offered = l["load"]["offered"].as_u64().unwrap();
    assert!((90..=150).contains(&offered), "200/s for 0.6 s: {offered}");
    assert!(l["load"]["response"]["p99_ns"].as_u64().unwrap() > 0);
    assert!(l["load"]["lag"]["count"].as_u64().unwrap() > 0);
    assert_eq!(l["load"]["limit_reached"], false);
}

#[test]
fn a_rate_that_cannot_be_offered_fails_after_saving_what_was_measured() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &args(
            "measure",
            &[
                "--engines",
                "sqlite-raw",
                "--clients",
                "1",
                "--rate",
                "1000000",
                "--max-in-flight",
                "8",
            ],
        ),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the in-flight limit (8) was reached"), "{err}");
    assert!(err.contains("blobrace saturate"), "{err}");
    let (_, json) = only_run(root.path());
    assert_eq!(json["complete"], true);
    assert_eq!(json["load_results"][0]["load"]["limit_reached"], true);
}

/// A cell with no fetch has no figure: the run saves and reports what it measured, names
/// the cell and why, and does not end as if it had answered for it.
#[test]
fn a_cell_that_measured_no_fetch_fails_the_run_after_saving_the_rest() {
    let root = tempfile::tempdir().unwrap();
    // 0.2 fetches/s over 600 ms: the measurement holds no arrival.
    let out = run(
        root.path(),
        &args(
            "measure",
            &["--engines", "floor", "--clients", "1", "--rate", "0.2"],
        ),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.lines().last().unwrap();
    assert!(
        last.contains("1 cell(s) measured no fetch")
            && last.contains("floor 64KiB cold c1@0.2/s")
            && last.contains("less than one arrival"),
        "{err}"
    );
    let (dir, json) = only_run(root.path());
    assert_eq!(json["complete"], true);
    assert_eq!(json["load_results"][0]["result"]["measured"]["count"], 0);
    assert!(dir.join("index.html").is_file());
}

#[test]
fn saturate_finds_a_sustainable_rate_and_reports_it() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &args("saturate", &["--engines", "floor", "--clients", "2"]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (dir, json) = only_run(root.path());
    let s = &json["saturations"][0];
    assert_eq!(s["clients"], 2);
    let capacity = s["search"]["capacity"].as_f64().unwrap();
    let steps = s["search"]["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.len() <= 6, "{s}");
    assert_eq!(
        steps[0]["rate"].as_f64().unwrap(),
        capacity,
        "the capacity first"
    );
    // An in-memory 4MiB dataset read by the floor meets 50 ms at some rate.
    let sustainable = s["search"]["sustainable"]
        .as_f64()
        .expect("a rate met the target");
    assert!(sustainable > 0.0 && sustainable <= capacity, "{s}");
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        html.contains("<h2 id=sustainable>Sustainable rate</h2>"),
        "second verdict"
    );
    // Drawn as bars first, the table folded under them.
    let section = html.split("<h2 id=sustainable>").nth(1).unwrap();
    let chart = section
        .find("src=\"sustainable.svg\"")
        .expect("the rates drawn");
    let table = section.find("<details id=sustainable-details>").unwrap();
    assert!(chart < table, "the chart before the table");
    let svg = std::fs::read_to_string(dir.join("sustainable.svg")).unwrap();
    assert!(svg.contains("floor") && svg.contains("/s"), "{svg}");
}

#[test]
fn a_load_that_cannot_fit_under_the_cap_is_skipped_with_its_arithmetic() {
    let root = tempfile::tempdir().unwrap();
    // 16 floor clients of 4 MiB blobs hold 16 x (2 x 4 + 2) MiB: more than a 96 MiB cap.
    let out = run(
        root.path(),
        &crate::common::with_flags(
            "measure",
            &SMALL[4..],
            &[
                "--engines",
                "floor",
                "--sizes",
                "4MiB",
                "--dataset-bytes",
                "16MiB",
                "--cap",
                "96MiB",
                "--cpus",
                "none",
                "--clients",
                "1,2,16",
            ],
        ),
    );
    if out.status.code() == Some(2) && stderr(&out).contains("systemd-run") {
        eprintln!(
            "skipped: this process may not cap itself here ({})",
            stderr(&out)
        );
        return;
    }
    assert!(out.status.success(), "{}", stderr(&out));
    let (dir, json) = only_run(root.path());
    assert_eq!(json["cap"]["memory_limit_bytes"], 96u64 << 20);
    let loads = json["load_results"].as_array().unwrap();
    assert_eq!(loads.len(), 1, "2 clients fit");
    assert_eq!(loads[0]["load"]["point"]["clients"], 2);
    let skipped = json["skipped_loads"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0]["point"]["clients"], 16);
    let why = skipped[0]["why"].as_str().unwrap();
    assert!(
        why.contains("the measuring process would need about")
            && why.contains("16 clients x (2 copies of the 4MiB blob")
            && why.ends_with("96MiB cap"),
        "{why}"
    );
    assert!(
        stderr(&out).contains("floor 4MiB c16: not run:"),
        "{}",
        stderr(&out)
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        html.contains("not run: the measuring process would need"),
        "report"
    );
}
