//! The report, checked like a person would: a real run's page opened in headless
//! Chromium, every chart loaded and drawn, the verdict there. Plus the bad inputs
//! of `blobrace report`.

use std::path::{Path, PathBuf};

use crate::browser::{
    assert_accessible, assert_everything_opens, chromium, dom_json, headless, page_says,
    phone_width, screenshot,
};
use crate::common::{blobrace, only_run, run, stderr, stdout};

/// A small real run (two sizes, two engines) whose report `measure` wrote.
fn quick_run(root: &Path, sizes: &str) -> (PathBuf, serde_json::Value) {
    quick_run_with(root, sizes, &[])
}

fn quick_run_with(root: &Path, sizes: &str, extra: &[&str]) -> (PathBuf, serde_json::Value) {
    let out = run(
        root,
        &[
            &[
                "measure",
                "--engines",
                "sqlite,floor",
                "--sizes",
                sizes,
                "--dataset-bytes",
                "2MiB",
                "--warmup",
                "50ms",
                // 1s: five 200 ms windows, the fewest a p99 interval (and verdict) needs.
                "--measure",
                "1100ms",
            ],
            extra,
        ]
        .concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("report: "),
        "measure ends with a report: {err}"
    );
    only_run(root)
}

/// Share of pixels in a box that are not (near) white.
fn ink(png: &[u8], width: usize, stride: usize, bpp: usize, bx: [i64; 4]) -> f64 {
    let [left, top, w, h] = bx.map(|v| v.max(0) as usize);
    let mut inked = 0usize;
    let mut total = 0usize;
    for y in top..top + h {
        for x in left..(left + w).min(width) {
            let i = y * stride + x * bpp;
            if i + 2 >= png.len() {
                continue;
            }
            total += 1;
            if png[i] < 235 || png[i + 1] < 235 || png[i + 2] < 235 {
                inked += 1;
            }
        }
    }
    inked as f64 / total.max(1) as f64
}

#[test]
fn the_report_opens_in_chromium_with_every_chart_drawn() {
    let Some(chromium) = chromium() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let (dir, _) = quick_run(root.path(), "1KiB,64KiB");
    let page = dir.join("index.html").canonicalize().unwrap();

    // 1. The DOM after load: the page's own check of its images, and the verdict.
    let dom = headless(&chromium, &["--window-size=1200,900", "--dump-dom"], &page);
    let html = stdout(&dom);
    assert!(dom.status.success(), "{}", stderr(&dom));
    assert!(html.contains("id=\"verdict-table\""), "no verdict table");
    // headline + (distribution + CDF + timeline) x 2 sizes + disk + load.
    assert!(
        html.contains("data-charts-loaded=\"9/9\""),
        "not every chart loaded: {}",
        html.split("data-charts-loaded")
            .nth(1)
            .unwrap_or("(attribute missing)")
    );
    let boxes: Vec<[i64; 4]> =
        serde_json::from_value(dom_json(&dom, "chart-boxes", &page)).unwrap();
    assert_eq!(boxes.len(), 9);

    // 2. A screenshot tall enough for the whole page: every chart area has ink.
    let bottom = boxes.iter().map(|b| b[1] + b[3]).max().unwrap() + 50;
    let shot = root.path().join("report.png");
    let out = headless(
        &chromium,
        &[
            &format!("--window-size=1200,{bottom}"),
            &format!("--screenshot={}", shot.display()),
        ],
        &page,
    );
    assert!(shot.is_file(), "no screenshot: {}", stderr(&out));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bpp = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected screenshot format {other:?}"),
    };
    for (i, b) in boxes.iter().enumerate() {
        assert!(b[2] > 300 && b[3] > 200, "chart {i} is too small: {b:?}");
        let share = ink(&buf, info.width as usize, info.line_size, bpp, *b);
        assert!(
            share > 0.02,
            "chart {i} at {b:?} looks blank ({:.1}% ink)",
            share * 100.0
        );
    }
}

/// The answer in the first screen: at 1280x800 the verdict table and the top of the
/// headline chart are in view before any scrolling, with the caveats below the chart;
/// at a phone's 390 px the page itself never scrolls sideways (a wide table scrolls in
/// its own box). A run of eight engines, each cell with its caveats (uncapped, in
/// memory), like the report a newcomer's first run writes. Screenshots of both are
/// kept under the target directory for a person to look at.
#[test]
fn the_reports_first_screen_answers_and_a_phone_never_scrolls_sideways() {
    let Some(chromium) = chromium() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "measure",
            "--engines",
            "sqlite,sqlite-raw,sqlite-blobio,lmdb,redb,rocksdb,fs,floor",
            "--sizes",
            "4KiB,64KiB",
            "--dataset-bytes",
            "2MiB",
            "--warmup",
            "50ms",
            "--measure",
            "300ms",
            "--precision",
            "off",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (dir, _) = only_run(root.path());
    let page = dir.join("index.html").canonicalize().unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    // The caveats are there, severe first and open, each one line with its detail folded.
    let caveats = html.split("id=warnings>").nth(1).unwrap();
    let caveats = caveats.split("</div>").next().unwrap();
    let items: Vec<&str> = caveats.lines().filter(|l| l.starts_with("<li")).collect();
    assert!(!items.is_empty(), "{caveats}");
    assert!(items.iter().all(|l| l.contains("<details")), "{caveats}");
    let severe = items
        .iter()
        .take_while(|l| l.starts_with("<li class=severe>"));
    assert!(
        severe.clone().all(|l| l.contains("<details open>")),
        "{caveats}"
    );
    assert!(
        items[severe.count()..]
            .iter()
            .all(|l| !l.contains("severe") && !l.contains("<details open>")),
        "severe ones first: {caveats}"
    );

    let wide = page_says(&chromium, &page, "first-screen", 1280, 800);
    let top = |key: &str| wide[key].as_i64().unwrap();
    assert!(
        (0..700).contains(&top("verdict")),
        "the verdict table starts at {} px: {wide}",
        top("verdict")
    );
    // The headline's heading, and below it at least the top of its chart, in view.
    assert!(
        (0..700).contains(&top("headline")),
        "the headline chart starts at {} px: {wide}",
        top("headline")
    );
    // The chart's own top, with 100 px of it in view.
    assert!(
        (0..700).contains(&top("headline_chart")),
        "the headline chart's picture starts at {} px: {wide}",
        top("headline_chart")
    );
    assert!(top("warnings") > top("headline"), "{wide}");
    let narrow = phone_width(&chromium, &page);
    assert!(
        narrow.0 <= narrow.1,
        "the page scrolls sideways at 390 px: {} px wide in {} px",
        narrow.0,
        narrow.1
    );

    screenshot(&chromium, &page, "report-1280x800", 1280, 800);
    screenshot(&chromium, &page, "report-390x844", 390, 844);
    let opened = assert_everything_opens(&chromium, &page);
    assert!(opened["details"].as_u64().unwrap() > 0, "{opened}");
    eprintln!(
        "first screen at 1280x800: {wide}; at 390 px the page is {} px wide",
        narrow.0
    );
    assert_accessible(&chromium, &page);
}

#[test]
fn report_regenerates_and_exports_the_summary() {
    let root = tempfile::tempdir().unwrap();
    let (dir, json) = quick_run(root.path(), "64KiB");
    std::fs::remove_file(dir.join("index.html")).unwrap();
    std::fs::remove_file(dir.join("headline.svg")).unwrap();
    let out = blobrace()
        .args(["report", "--target-p99", "1s", "--results-dir"])
        .arg(root.path().join("results"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.join("index.html").is_file() && dir.join("headline.svg").is_file());
    assert!(dir.join("headline.png").is_file());
    let latest = std::fs::read_to_string(root.path().join("results/latest.html")).unwrap();
    assert!(latest.contains(&format!("{}/index.html", json["run_id"].as_str().unwrap())));
    let csv = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "header + sqlite + floor: {csv}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let rows = summary.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        let p50 = r["p50_ns"].as_u64().unwrap();
        assert!(p50 > 0 && p50 <= r["p99_ns"].as_u64().unwrap(), "{r}");
    }
    // The disk was probed around every engine (O_DIRECT; unavailable only where the
    // filesystem has none), and each engine is set against the floor of its run.
    for r in json["results"].as_array().unwrap() {
        for when in ["before", "after"] {
            let probe = &r["disk_probes"][when];
            assert!(
                probe["Ok"]["reads"].as_u64().is_some_and(|n| n >= 5)
                    || probe["Err"]
                        .as_str()
                        .is_some_and(|e| e.contains("O_DIRECT")),
                "{}: {probe}",
                r["engine"]
            );
        }
        // Just after, the engine's own dataset read the same way: SQLite's file.
        // The floor has none of its own (its file is the one probed).
        let own = &r["disk_probes"]["own_after"];
        if r["engine"] == "floor" {
            assert!(own.is_null(), "{own}");
        } else {
            assert!(
                own["Ok"]["file"]
                    .as_str()
                    .is_some_and(|f| f.ends_with(".sqlite"))
                    && own["Ok"]["reads"].as_u64().is_some_and(|n| n >= 5)
                    || own["Err"].as_str().is_some_and(|e| e.contains("O_DIRECT")),
                "{}: {own}",
                r["engine"]
            );
        }
    }
    for r in rows {
        assert!(r["floor_p50_ratio"].as_f64().is_some(), "{r}");
    }
    // Both meet a 1 s target at 64KiB: the verdict names the size.
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let verdict = page.split("id=verdict-table").nth(1).unwrap();
    let verdict = verdict.split("</table>").next().unwrap();
    assert_eq!(
        verdict.matches("<span class=good>64KiB</span>").count(),
        2,
        "{verdict}"
    );
}

#[test]
fn a_run_keeps_what_it_said_in_its_run_log_and_the_report_links_it() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "measure",
            "--engines",
            "sqlite,floor",
            "--sizes",
            "4KiB",
            "--dataset-bytes",
            "1MiB",
            "--warmup",
            "50ms",
            "--measure",
            "200ms",
        ],
    );
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    let (dir, _) = only_run(root.path());
    let log = std::fs::read_to_string(dir.join("run.log")).unwrap();
    // Every line of the log is a line the terminal showed, in the same order, from the
    // cap (the run's first line, held until its directory existed) to the report's.
    let mut shown = said.lines();
    for line in log.lines() {
        assert!(
            shown.any(|s| s == line),
            "{line:?} is in run.log but not, in order, on the terminal:\n{said}"
        );
    }
    assert!(log.starts_with("cap: memory "), "{log}");
    for expected in ["dataset ", "sqlite ", "floor ", "took ", "report: "] {
        assert!(
            log.lines().any(|l| l.starts_with(expected)),
            "{expected:?} in run.log:\n{log}"
        );
    }
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        page.contains("href=\"run.log\""),
        "the report links the log"
    );
}

#[test]
fn a_missing_or_corrupt_results_file_is_named() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results");
    std::fs::create_dir_all(results.join("20260101-000000-1")).unwrap();
    let report = |args: &[&str]| {
        blobrace()
            .arg("report")
            .args(args)
            .arg("--results-dir")
            .arg(&results)
            .output()
            .unwrap()
    };
    let out = report(&["--run", "20260101-000000-1"]);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(err.contains("20260101-000000-1/results.json"), "{err}");
    std::fs::write(results.join("20260101-000000-1/results.json"), "{ not json").unwrap();
    let out = report(&["--run", "20260101-000000-1"]);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("results.json is not a blobrace results file"),
        "{err}"
    );
    let out = report(&["--run", "nope"]);
    assert!(stderr(&out).contains("no run nope"), "{}", stderr(&out));
    assert_eq!(stderr(&out).matches("Error").count(), 1);
}

/// Move the run in `new_dir` into `root`'s results beside `base`, and compare it
/// with `base` (`report --baseline`): its new directory and the terminal table.
fn compare_beside(
    root: &Path,
    base: &serde_json::Value,
    new_dir: &Path,
    new: &serde_json::Value,
) -> (PathBuf, String) {
    let moved = root.join("results").join(new_dir.file_name().unwrap());
    std::fs::rename(new_dir, &moved).unwrap();
    let out = blobrace()
        .args(["report", "--run", new["run_id"].as_str().unwrap()])
        .args(["--baseline", base["run_id"].as_str().unwrap()])
        .arg("--results-dir")
        .arg(root.join("results"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    (moved, stdout(&out))
}

#[test]
fn a_baseline_with_other_sizes_compares_the_overlap_and_says_the_rest() {
    let root = tempfile::tempdir().unwrap();
    let (base_dir, base) = quick_run(root.path(), "1KiB,64KiB");
    // A second run in another root, moved beside the first.
    let other = tempfile::tempdir().unwrap();
    let (new_dir, new) = quick_run(other.path(), "64KiB,512KiB");
    assert_eq!(
        base_dir.parent(),
        Some(root.path().join("results").as_path())
    );
    let (target, table) = compare_beside(root.path(), &base, &new_dir, &new);
    // 64KiB: both engines x 5 statistics compared.
    assert_eq!(table.matches(" 64KiB ").count(), 10, "{table}");
    assert!(
        table.contains("not compared: sqlite 1KiB: only in the baseline"),
        "{table}"
    );
    assert!(
        table.contains("not compared: floor 512KiB: only in this run"),
        "{table}"
    );
    let page = std::fs::read_to_string(target.join("index.html")).unwrap();
    assert!(page.contains("id=compare"), "the page shows the comparison");
}

#[test]
fn runs_with_repeats_are_compared_pooled_over_them() {
    let root = tempfile::tempdir().unwrap();
    let (_, base) = quick_run_with(root.path(), "64KiB", &["--repeat", "2"]);
    let other = tempfile::tempdir().unwrap();
    let (new_dir, new) = quick_run_with(other.path(), "64KiB", &["--repeat", "2"]);
    assert_eq!(
        new["results"].as_array().unwrap().len(),
        4,
        "2 engines x 2 repeats"
    );
    let (moved, table) = compare_beside(root.path(), &base, &new_dir, &new);
    // Each engine's p50 is judged on both runs' two repeats, pooled.
    let p50_rows: Vec<&str> = table.lines().filter(|l| l.contains(" p50 ")).collect();
    assert_eq!(p50_rows.len(), 2, "{table}");
    for row in p50_rows {
        assert!(row.contains(" [repeats 2/2]"), "{row}\n{table}");
        // And SQLite against the floor of its own run, in both runs.
        assert_eq!(row.starts_with("sqlite"), row.contains("÷floor "), "{row}");
    }
    let page = std::fs::read_to_string(moved.join("index.html")).unwrap();
    assert!(
        page.contains("repeats 2/2"),
        "the page says what a mark rests on"
    );
    assert!(
        page.contains("pooled p50 (95% interval)"),
        "the repeats table pools"
    );
}

/// The names a calibrated floor may read with (O_DIRECT is timed, never chosen).
const FLOOR_PATTERNS: [&str; 4] = [
    "pread",
    "fadvise(WILLNEED) + pread",
    "4KiB preads in order",
    "4 threads × ¼ pread",
];

#[test]
fn the_floor_says_how_it_reads_and_an_engine_that_beats_it_is_named_with_why() {
    let root = tempfile::tempdir().unwrap();
    let (dir, mut json) = quick_run(root.path(), "64KiB");
    let results = json["results"].as_array_mut().unwrap();
    let at = |results: &[serde_json::Value], engine: &str| {
        results.iter().position(|r| r["engine"] == engine).unwrap()
    };
    let (floor, sqlite) = (at(results, "floor"), at(results, "sqlite"));
    // The floor timed every pattern on cold reads and read with an eligible one.
    let settings = &results[floor]["settings"];
    let pattern = settings["read pattern"].as_str().unwrap().to_string();
    assert!(FLOOR_PATTERNS.contains(&pattern.as_str()), "{settings}");
    let measured = settings["read patterns measured"].as_str().unwrap();
    assert!(
        measured.contains(&format!("{pattern} "))
            && measured.contains("(chosen)")
            && measured.contains("O_DIRECT pread")
            && measured.contains("cold reads each"),
        "{measured}"
    );
    // Make sqlite's p50 a third of the floor's, intervals apart, the same hits.
    let floor_p50 = results[floor]["measured"]["latency"]["p50_ns"]
        .as_u64()
        .unwrap() as f64;
    let set = |r: &mut serde_json::Value, p50: f64, hits: f64| {
        r["measured"]["latency"]["p50_ns"] = serde_json::json!(p50 as u64);
        r["measured"]["intervals"]["p50"] =
            serde_json::json!({"lo_ns": p50 * 0.95, "hi_ns": p50 * 1.05});
        r["measured"]["hit_ratio"] = serde_json::json!(hits);
    };
    // No disk probe that moved, which would be the reason given first, and no
    // windows to compare them at equal fill (checked at the end).
    for r in results.iter_mut() {
        r["disk_probes"] = serde_json::Value::Null;
        for phase in ["warm_up", "measured"] {
            r[phase]["windows"] = serde_json::json!([]);
        }
    }
    set(&mut results[floor], floor_p50, 0.3);
    set(&mut results[sqlite], floor_p50 / 3.0, 0.3);
    let report_again = |json: &serde_json::Value| {
        std::fs::write(dir.join("results.json"), serde_json::to_vec(json).unwrap()).unwrap();
        let out = blobrace()
            .args(["report", "--results-dir"])
            .arg(root.path().join("results"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
        let warnings = page.split("id=warnings>").nth(1).unwrap_or_default();
        warnings.split("</div>").next().unwrap().to_string()
    };
    let warnings = report_again(&json);
    let line = warnings
        .lines()
        .find(|l| l.contains("Beat the floor"))
        .unwrap_or_else(|| panic!("no beat-the-floor line: {warnings}"));
    assert!(line.contains("sqlite 64KiB cold"), "{line}");
    assert!(
        line.contains(&pattern),
        "the floor's pattern is named: {line}"
    );
    assert!(
        line.contains("the fastest of the patterns it timed"),
        "{line}"
    );
    // More hits is the reason where the hit ratios say so.
    let results = json["results"].as_array_mut().unwrap();
    results[sqlite]["measured"]["hit_ratio"] = serde_json::json!(0.9);
    let warnings = report_again(&json);
    assert!(
        warnings.contains("90% of its fetches were page-cache hits against the floor")
            && warnings.contains("30%"),
        "{warnings}"
    );
    // Its own files read 4x faster than the floor's file just after its cell: the
    // floor's file was slow then, said with the figures (not a better way of reading).
    let results = json["results"].as_array_mut().unwrap();
    results[sqlite]["measured"]["hit_ratio"] = serde_json::json!(0.3);
    let probe = |p50: u64| {
        serde_json::json!({"Ok": {"file": "f", "block_bytes": 65536, "reads": 100,
            "seconds": 0.25, "p50_ns": p50, "p90_ns": p50, "p99_ns": p50}})
    };
    results[sqlite]["disk_probes"] = serde_json::json!({
        "before": probe(200_000), "after": probe(200_000), "own_after": probe(50_000)
    });
    let warnings = report_again(&json);
    assert!(
        warnings.contains("served its dataset 4.0x faster than the floor")
            && warnings.contains("p50 50.0µs on its own files against 200.0µs"),
        "{warnings}"
    );
    // Alike: the way of reading stays the reason, with the probe that shows it.
    let results = json["results"].as_array_mut().unwrap();
    results[sqlite]["disk_probes"]["own_after"] = probe(190_000);
    let warnings = report_again(&json);
    assert!(
        warnings.contains("the fastest of the patterns it timed")
            && warnings.contains("Its own files read like the floor"),
        "{warnings}"
    );
    // And an engine within noise of the floor is not named.
    let results = json["results"].as_array_mut().unwrap();
    results[sqlite]["disk_probes"] = serde_json::Value::Null;
    let p50 = floor_p50 * 1.01;
    results[sqlite]["measured"]["latency"]["p50_ns"] = serde_json::json!(p50 as u64);
    results[sqlite]["measured"]["intervals"]["p50"] =
        serde_json::json!({"lo_ns": p50 * 0.95, "hi_ns": p50 * 1.05});
    let warnings = report_again(&json);
    assert!(!warnings.contains("Beat the floor"), "{warnings}");
    // Beating it again, but only over a longer cell: over the first 1,000 fetches of
    // each from its cold start, sqlite read at 300 µs and the floor at 100 µs.
    let results = json["results"].as_array_mut().unwrap();
    set(&mut results[sqlite], floor_p50 / 3.0, 0.3);
    // The windows' fine bins: 100 per decade from 100 ns.
    let bin = |ns: f64| ((ns / 100.0).log10() * 100.0).floor() as u64;
    let window = |fetches: u64, ns: f64| {
        serde_json::json!({"start_s": 0.0, "fetches": fetches, "hits": 0,
            "disk_bytes": null, "bins": [[bin(ns), fetches]]})
    };
    results[sqlite]["warm_up"]["windows"] = serde_json::json!([window(1000, 300_000.0)]);
    results[sqlite]["measured"]["windows"] = serde_json::json!([window(50_000, 1_000.0)]);
    results[floor]["warm_up"]["windows"] = serde_json::json!([window(1000, 100_000.0)]);
    let warnings = report_again(&json);
    assert!(
        warnings.contains("over its first 1000 fetches from its cold start against the floor")
            && warnings.contains("first 1000 (equal fill, the same ids)")
            && warnings.contains("on the same number of fetches it did not beat the floor"),
        "{warnings}"
    );
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        page.contains("id=cold-fill") && page.contains("N = 1000"),
        "the equal-fill table"
    );
    // Measured by a later part of a continued run than its floor: that is said before
    // any other reason, with the command that measures both again in one run.
    let size = json["results"][sqlite]["size_bytes"].clone();
    let first = json["parts"][0].clone();
    json["parts"].as_array_mut().unwrap().push(first);
    for d in json["done_cells"].as_array_mut().unwrap() {
        if d["engine"] == "sqlite" && d["cache"] == "cold" && d["size"] == size {
            d["part"] = serde_json::json!(1);
        }
    }
    let warnings = report_again(&json);
    assert!(
        warnings.contains("it was measured by part 2 of this run")
            && warnings.contains("the floor by part 1")
            && warnings.contains("--engines sqlite,floor --sizes 64KiB --cache cold")
            && !warnings.contains("over its first 1000 fetches"),
        "{warnings}"
    );
    // Its "÷ floor" in the verdict and the measurement table says so too.
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let marked = page.matches("part 2 against the floor").count();
    assert!(marked >= 2, "verdict and table: {marked}");
}

#[test]
fn each_step_records_its_own_memory_peaks_and_the_report_shows_them() {
    let root = tempfile::tempdir().unwrap();
    let (dir, json) = quick_run(root.path(), "64KiB,512KiB");
    let cap = &json["cap"];
    let limit = cap["memory_limit_bytes"].as_u64();
    let ours_v1 = cap["cgroup_version"] == "v1" && cap["origin"] == "created";
    for r in json["results"].as_array().unwrap() {
        let who = format!("{} {}", r["engine"], r["size"]);
        let rss = r["process_peak_rss_bytes"]
            .as_u64()
            .unwrap_or_else(|| panic!("{who}: {r}"));
        assert!(rss > 1 << 20, "{who}: {rss}");
        let m = &r["step_memory"];
        if let Some(limit) = limit {
            let peak = m["cgroup_peak_bytes"]
                .as_u64()
                .unwrap_or_else(|| panic!("{who}: {m}"));
            // At least the process itself, at most the cap.
            assert!(peak >= rss / 2 && peak <= limit, "{who}: {m} under {limit}");
        }
        if ours_v1 {
            assert_eq!(m["cgroup_peaks_since"], "this step", "{who}: {m}");
        } else {
            assert!(
                m["cgroup_peaks_since"].as_str().unwrap().contains("start"),
                "{m}"
            );
        }
    }
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let table = page.split("id=memory>").nth(1).expect("a memory table");
    let table = table.split("</table>").next().unwrap();
    assert_eq!(
        table.matches("<tr><td class=l>").count(),
        json["results"].as_array().unwrap().len(),
        "one row per step: {table}"
    );
}

#[test]
fn files_whose_inodes_press_the_cap_are_said_before_measuring_and_in_the_report() {
    let root = tempfile::tempdir().unwrap();
    // 16,384 files of 1 KiB: about 21 MiB of inodes and dentries, 17% of a 128 MiB cap.
    let args = [
        "measure",
        "--engines",
        "fs,floor",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "16MiB",
        "--cap",
        "128MiB",
        "--cache",
        "cold",
        "--warmup",
        "50ms",
        "--measure",
        "1100ms",
    ];
    let out = run(root.path(), &args);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let (dir, json) = only_run(root.path());
    if json["cap"]["memory_limit_bytes"].is_null() {
        eprintln!(
            "skipping the rest: this process could not be capped here ({})",
            json["cap"]
        );
        return;
    }
    let note = err
        .lines()
        .find(|l| l.starts_with("note: fs 1KiB: its 16384 files cost about"))
        .unwrap_or_else(|| panic!("no note before fs's measurement: {err}"));
    assert!(
        note.contains("of kernel memory") && note.contains("128MiB cap"),
        "{note}"
    );
    assert!(
        !err.contains("note: floor 1KiB: its"),
        "only the fs store keeps a file per blob: {err}"
    );
    let noted = err.find(note).unwrap();
    let measured = err.rfind("fs 1KiB").unwrap();
    assert!(noted < measured, "said before its result: {err}");
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let warnings = page.split("id=warnings>").nth(1).expect("a warnings box");
    let line = warnings
        .lines()
        .find(|l| l.contains("Files under metadata pressure"))
        .unwrap_or_else(|| panic!("{warnings}"));
    assert!(
        line.contains("fs 1KiB") && line.contains("16384 files"),
        "{line}"
    );
    let fs = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["engine"] == "fs")
        .unwrap();
    if let Some(peak) = fs["step_memory"]["kernel_peak_bytes"].as_u64() {
        assert!(line.contains("its steps peaked at: cold "), "{line}");
        assert!(peak > 0, "{fs}");
    }
    // Each engine's cold start empties the cap of what the one before left, kernel
    // memory (fs's dentries and inodes) included, and records it before and after.
    if json["cap"]["origin"] == "created" {
        for r in json["results"].as_array().unwrap() {
            let e = &r["eviction"];
            let before = e["cgroup_kernel_before_bytes"].as_u64();
            let after = e["cgroup_kernel_after_bytes"].as_u64();
            let (Some(before), Some(after)) = (before, after) else {
                panic!("kernel memory before and after unrecorded: {e}");
            };
            assert!(
                after <= before.max(1 << 20) + (4 << 20),
                "{}: {e}",
                r["engine"]
            );
        }
    }
}
