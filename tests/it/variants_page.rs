//! The side-by-side page of `blobrace variants` as a reader opens it, in Chromium: it
//! opens with one chart of each engine's p50 and p99 per variant, every row named
//! level and whole enough to tell deployments apart, no text of the chart over
//! another, the page never wider than a phone, and axe-core finding nothing serious.

use std::path::Path;

use crate::browser::{assert_accessible, chromium, phone_width, screenshot, svg_texts};
use crate::common::{blobrace, newest_run, run, stderr};

/// A run of the default layout, one of a long workload and layout, and the first run
/// recorded again as three deployments whose layouts differ only after 30 characters
/// (what ran together under upright labels cut at 30): the page of all five.
fn five_variants(root: &Path) -> std::path::PathBuf {
    let small = [
        "measure",
        "--engines",
        "floor,sqlite-raw,sqlite",
        "--sizes",
        "4KiB",
        "--dataset-bytes",
        "1MiB",
        "--warmup",
        "50ms",
        "--measure",
        "100ms",
        "--precision",
        "off",
    ];
    let long = [
        "--access",
        "zipfian:0.99",
        "--sqlite-page-size",
        "16384",
        "--sqlite-mmap-size",
        "4GiB",
    ];
    let mut ids = Vec::new();
    for extra in [&[][..], &long[..]] {
        let out = run(root, &[&small[..], extra].concat());
        assert!(out.status.success(), "{}", stderr(&out));
        ids.push(
            newest_run(root)
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .to_string(),
        );
    }
    // The deployments' runs: the default run's results as each would record them (the
    // emulated disk and proxy they need are tested in slow_disk.rs and network.rs; here
    // only what the page makes of their names).
    let first = root.join("results").join(&ids[0]);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(first.join("results.json")).unwrap()).unwrap();
    for (name, rtt) in [
        ("aws-gp3-same-az", "0ms"),
        ("aws-gp3-cross-az", "1ms"),
        ("gcp-pd-balanced", "0ms"),
    ] {
        let id = format!("{}-{name}", ids[0]);
        let mut copy = json.clone();
        copy["run_id"] = serde_json::json!(id);
        copy["config"]["deployment"] = serde_json::json!({"name": name, "source": "test"});
        copy["config"]["disk_latency"] = serde_json::json!("1ms");
        copy["config"]["network_rtt"] = serde_json::json!(rtt);
        let dir = root.join("results").join(&id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("results.json"), serde_json::to_vec(&copy).unwrap()).unwrap();
        ids.push(id);
    }
    let out = blobrace()
        .arg("variants")
        .args(&ids)
        .arg("--results-dir")
        .arg(root.join("results"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    crate::common::newest_variants(root)
}

#[test]
fn the_variants_page_opens_with_each_engines_p50_and_p99_named_level_and_apart() {
    let Some(chromium) = chromium() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let page_dir = five_variants(root.path());
    let page = page_dir.join("index.html").canonicalize().unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    // The chart comes before every table.
    let chart = html
        .find("variants-4KiB-cold.svg")
        .expect("the chart is on the page");
    assert!(chart < html.find("<table").unwrap(), "chart first");

    let svg = page_dir.join("variants-4KiB-cold.svg");
    let found = svg_texts(&chromium, &svg);
    let texts: Vec<&str> = found["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    // Two engines under five variants, each row named; each deployment by its name.
    for name in ["aws-gp3-same-az", "aws-gp3-cross-az", "gcp-pd-balanced"] {
        assert_eq!(
            texts
                .iter()
                .filter(|t| t.starts_with("sqlite-raw:") && t.contains(name))
                .count(),
            1,
            "{name} in {texts:?}"
        );
    }
    assert!(
        texts.iter().any(|t| t.contains("zipfian")),
        "the long workload's row: {texts:?}"
    );
    // Each row's figures: p50 / p99 and its ratio to the default (4 ratios an engine).
    let ratios = texts
        .iter()
        .filter(|t| t.contains(" / ") && t.contains('×'));
    assert_eq!(ratios.count(), 8, "{texts:?}");
    assert_eq!(
        found["overlaps"],
        serde_json::json!([]),
        "texts over each other in {}",
        svg.display()
    );
    assert_eq!(found["outside"], serde_json::json!([]), "texts cut off");

    let (width, viewport) = phone_width(&chromium, &page);
    assert!(width <= viewport, "{width} px wide in {viewport} px");
    screenshot(&chromium, &page, "variants-1280x800", 1280, 800);
    crate::browser::assert_everything_opens(&chromium, &page);
    assert_accessible(&chromium, &page);
}
