//! `--share i/n` splits a run's sizes across machines and `blobrace merge` joins the
//! runs again: each cell figure for figure as its run measured it, a cell measured
//! twice from its exact histograms added, and runs that do not go together refused
//! with what differs.

use std::path::Path;

use crate::common::{blobrace, run, stderr};
use blobrace::stats::{Percentiles, hdr};
use serde_json::Value;

const FLAGS: [&str; 10] = [
    "--engines",
    "floor,sqlite-raw",
    "--sizes",
    "1KiB,64KiB",
    "--dataset-bytes",
    "4MiB",
    "--warmup",
    "100ms",
    "--measure",
    "300ms",
];

/// `blobrace measure` with FLAGS and `extra` on `root`'s data; the new run's directory.
fn measure(root: &Path, extra: &[&str]) -> std::path::PathBuf {
    // FLAGS and one client, each flag `extra` names given as it says instead.
    let defaults: Vec<&str> = FLAGS
        .chunks(2)
        .chain([&["--clients", "1"][..]])
        .filter(|pair| !extra.contains(&pair[0]))
        .flatten()
        .copied()
        .collect();
    measure_with(root, &[&defaults[..], extra].concat())
}

/// `blobrace measure` with `flags` alone on `root`'s data; the new run's directory.
fn measure_with(root: &Path, flags: &[&str]) -> std::path::PathBuf {
    let before = runs_in(root);
    let args = [&["measure"][..], flags].concat();
    let out = run(root, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let after = runs_in(root);
    let new: Vec<_> = after.into_iter().filter(|d| !before.contains(d)).collect();
    assert_eq!(new.len(), 1, "{new:?}");
    new[0].clone()
}

fn runs_in(root: &Path) -> Vec<std::path::PathBuf> {
    run_dirs(&root.join("results"))
}

/// Every run directory (one holding results.json) under `results`, by name.
fn run_dirs(results: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(results) else {
        return Vec::new();
    };
    let mut dirs: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("results.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn merge(results: &Path, runs: &[&Path]) -> std::process::Output {
    let mut cmd = blobrace();
    cmd.arg("merge")
        .args(runs)
        .arg("--results-dir")
        .arg(results);
    cmd.output().unwrap()
}

fn json(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap()
}

/// The merged run: the newest run directory holding `merged_from`.
fn merged_run(results: &Path) -> (std::path::PathBuf, Value) {
    let mut dirs: Vec<_> = run_dirs(results)
        .into_iter()
        .filter(|p| json(p).get("merged_from").is_some())
        .collect();
    dirs.sort_by_key(|p| {
        std::fs::metadata(p.join("results.json"))
            .unwrap()
            .modified()
            .unwrap()
    });
    let dir = dirs.pop().expect("a merged run");
    let value = json(&dir);
    (dir, value)
}

fn cell(r: &Value) -> (String, String, String) {
    (
        r["engine"].as_str().unwrap().into(),
        r["size"].as_str().unwrap().into(),
        r["cache"].as_str().unwrap().into(),
    )
}

/// Percentiles as results.json has them, the mean aside (`same_percentiles`).
fn percentiles_of(encoded: &str) -> Value {
    serde_json::to_value(Percentiles::of(&hdr::decode(encoded).unwrap())).unwrap()
}

/// Every percentile, count, min and max the same; the mean to 1e-12 (a histogram
/// read back sums its values in another order: the last bit may differ).
fn same_percentiles(a: &Value, b: &Value) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    let (ma, mb) = (a["mean_ns"].take(), b["mean_ns"].take());
    let (ma, mb) = (ma.as_f64().unwrap(), mb.as_f64().unwrap());
    a == b && (ma - mb).abs() <= 1e-12 * ma.abs().max(1.0)
}

#[test]
fn two_shares_merge_into_one_run_whose_cells_are_their_runs_figure_for_figure() {
    let root = tempfile::tempdir().unwrap();
    let one = measure(root.path(), &["--share", "1/2"]);
    // Each share loads only its own sizes.
    let data = root.path().join("data");
    assert!(data.join("sqlite/1KiB-x4096.sqlite").exists());
    assert!(!data.join("sqlite/64KiB-x64.sqlite").exists());
    assert!(!data.join("floor/64KiB-x64.bin").exists());
    let two = measure(root.path(), &["--share", "2/2"]);
    assert!(data.join("floor/64KiB-x64.bin").exists());
    let sizes = |dir: &Path| -> Vec<String> {
        let run = json(dir);
        let mut s: Vec<String> = run["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["size"].as_str().unwrap().to_string())
            .collect();
        s.dedup();
        s
    };
    assert_eq!(sizes(&one), ["1KiB"]);
    assert_eq!(sizes(&two), ["64KiB"]);
    assert_eq!(json(&one)["config"]["share"], "1/2");

    let out = merge(&root.path().join("results"), &[&one, &two]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (dir, merged) = merged_run(&root.path().join("results"));
    let results = merged["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "{results:?}");
    for source in [&one, &two] {
        let id = source.file_name().unwrap().to_str().unwrap();
        for r in json(source)["results"].as_array().unwrap() {
            let m = results
                .iter()
                .find(|m| cell(m) == cell(r))
                .expect("every cell kept");
            assert_eq!(
                m["measured"]["latency"],
                r["measured"]["latency"],
                "{:?}",
                cell(r)
            );
            assert_eq!(m["measured"]["hits"], r["measured"]["hits"]);
            assert_eq!(m["runs"], serde_json::json!([id]));
            // The exact histogram kept says what the run printed.
            let encoded = r["measured"]["hdr"]["all"].as_str().unwrap();
            assert!(same_percentiles(
                &percentiles_of(encoded),
                &r["measured"]["latency"]
            ));
        }
    }
    let from: Vec<&str> = merged["merged_from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["share"].as_str().unwrap())
        .collect();
    assert_eq!(from, ["1/2", "2/2"]);
    assert!(
        merged["command"]
            .as_str()
            .unwrap()
            .starts_with("blobrace merge ")
    );
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        page.contains("Merged from") && page.contains("share 2/2"),
        "no merged section"
    );
    // HdrHistogram's interval log: one interval per histogram, all of the results'.
    let log = std::fs::read_to_string(dir.join("histograms.hlog")).unwrap();
    let tags: Vec<&str> = log.lines().filter_map(|l| l.strip_prefix("Tag=")).collect();
    assert!(tags.len() >= 4, "{log}");
    assert!(
        tags.iter()
            .any(|t| t.starts_with("floor.cold.r1/64KiB/c1/all,")),
        "{log}"
    );
}

#[test]
fn a_cell_measured_in_two_runs_holds_every_fetch_of_both_from_their_histograms() {
    let root = tempfile::tempdir().unwrap();
    // sqlite-raw: the floor picks its read pattern by measuring each run, and a cell
    // read another way is another measurement (refused: see below).
    let sqlite = ["--share", "1/2", "--engines", "sqlite-raw"];
    let first = measure(root.path(), &sqlite);
    let again = measure(root.path(), &sqlite);
    let out = merge(&root.path().join("results"), &[&first, &again]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, merged) = merged_run(&root.path().join("results"));
    let (a, b) = (json(&first), json(&again));
    let cells = merged["results"].as_array().unwrap();
    let names: Vec<_> = cells.iter().map(cell).collect();
    assert_eq!(names.len(), 1, "sqlite-raw at 1KiB, cold: {names:?}");
    for m in cells {
        let find = |run: &Value| -> Value {
            run["results"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| cell(r) == cell(m))
                .unwrap()
                .clone()
        };
        let (x, y) = (find(&a), find(&b));
        let count = |r: &Value| r["measured"]["count"].as_u64().unwrap();
        assert_eq!(count(m), count(&x) + count(&y));
        let mut sum = hdr::decode(x["measured"]["hdr"]["all"].as_str().unwrap()).unwrap();
        sum.add(hdr::decode(y["measured"]["hdr"]["all"].as_str().unwrap()).unwrap())
            .unwrap();
        let expected = serde_json::to_value(Percentiles::of(&sum)).unwrap();
        assert!(
            same_percentiles(&m["measured"]["latency"], &expected),
            "{m} {expected}"
        );
        assert_eq!(m["runs"].as_array().unwrap().len(), 2);
        // Hits and misses from their own histograms added, and the totals summed.
        for part in ["hits", "misses"] {
            let mut h = hdr::decode(x["measured"]["hdr"][part].as_str().unwrap()).unwrap();
            h.add(hdr::decode(y["measured"]["hdr"][part].as_str().unwrap()).unwrap())
                .unwrap();
            let expected = serde_json::to_value(Percentiles::of(&h)).unwrap();
            assert!(
                same_percentiles(&m["measured"][part], &expected),
                "{part}: {m}"
            );
        }
        let sum = |k: &str| x["measured"][k].as_u64().unwrap() + y["measured"][k].as_u64().unwrap();
        assert_eq!(
            m["measured"]["bytes_returned"].as_u64().unwrap(),
            sum("bytes_returned")
        );
        assert_eq!(
            m["measured"]["disk_bytes_total"].as_u64().unwrap(),
            sum("disk_bytes_total")
        );
        // b's windows follow a's on the timeline.
        let starts: Vec<f64> = m["measured"]["windows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["start_s"].as_f64().unwrap())
            .collect();
        assert!(starts.windows(2).all(|p| p[0] < p[1]), "{starts:?}");
    }

    // Merging a merged run with one of its own runs would count it twice.
    let (merged_dir, _) = merged_run(&root.path().join("results"));
    let twice = merge(&root.path().join("results"), &[&merged_dir, &first]);
    assert_eq!(twice.status.code(), Some(2), "{}", stderr(&twice));
    assert!(
        stderr(&twice).contains("would count twice"),
        "{}",
        stderr(&twice)
    );
}

#[test]
fn runs_of_other_data_or_loads_measured_twice_are_refused_saying_what_differs() {
    let root = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let first = measure(root.path(), &["--share", "1/2"]);
    let seeded = measure(other.path(), &["--share", "1/2", "--seed", "7"]);
    let out = merge(&root.path().join("results"), &[&first, &seeded]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot merge these runs") && err.contains("seed"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    // A part measured with other flags is not a part of the same run.
    let twice = measure(root.path(), &["--share", "2/2", "--repeat", "2"]);
    let out = merge(&root.path().join("results"), &[&first, &twice]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("with repeats 1") && err.contains("with repeats 2"),
        "{err}"
    );

    // Another workload of the same data is a variant, not a part of the run.
    let zipfian = measure(root.path(), &["--share", "2/2", "--access", "zipfian"]);
    let out = merge(&root.path().join("results"), &[&first, &zipfian]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("access zipfian") && err.contains("blobrace variants"),
        "{err}"
    );

    // What compare refuses as two experiments (a disk cap), merge refuses as two runs
    // (`merge::why_not_one_run`, which `variants` asks before it advises a merge).
    let capped = measure(
        root.path(),
        &["--share", "2/2", "--disk-cap", "riops=20000"],
    );
    let out = merge(&root.path().join("results"), &[&first, &capped]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("disk cap riops=20000"), "{err}");

    let loads = |root: &Path| measure(root, &["--share", "2/2", "--clients", "2"]);
    let (a, b) = (loads(root.path()), loads(root.path()));
    let out = merge(&root.path().join("results"), &[&a, &b]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the load of 2 clients"), "{err}");
}

/// A size mix's runs join band by band: each band's fetches added from its exact
/// histograms, its intervals over both runs' windows, each band in the merged
/// `histograms.hlog` and `bands.csv`; runs of two mixes are two datasets, refused.
#[test]
fn a_size_mixs_runs_merge_band_by_band_and_two_mixes_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results");
    let flags = |mix: &'static str| {
        [
            // Not the floor: it picks its read pattern per run, which merge compares.
            "--engines",
            "sqlite-raw",
            "--size-mix",
            mix,
            "--dataset-bytes",
            "8MiB",
            "--cache",
            "cold",
            "--warmup",
            "100ms",
            "--measure",
            "1200ms",
            "--clients",
            "1",
        ]
    };
    const MIX: &str = "4KiB:60,64KiB:30,1MiB:10";
    let a = measure_with(root.path(), &flags(MIX));
    let b = measure_with(root.path(), &flags(MIX));
    let out = merge(&results, &[&a, &b]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (dir, merged) = merged_run(&results);
    let bands_of = |run: &Value| run["results"][0]["measured"]["bands"].clone();
    let (ba, bb, bm) = (bands_of(&json(&a)), bands_of(&json(&b)), bands_of(&merged));
    let names = |bands: &Value| -> Vec<String> {
        bands
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["band"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&bm), ["4KiB", "64KiB", "1MiB"]);
    assert_eq!(names(&ba), names(&bm));
    for (i, band) in bm.as_array().unwrap().iter().enumerate() {
        let count = |b: &Value| b[i]["count"].as_u64().unwrap();
        let windows = |b: &Value| b[i]["intervals"]["windows"].as_u64().unwrap();
        let who = &band["band"];
        assert_eq!(
            band["count"].as_u64().unwrap(),
            count(&ba) + count(&bb),
            "{who}"
        );
        assert_eq!(windows(&bm), windows(&ba) + windows(&bb), "{who}");
        // The band's percentiles are those of both runs' fetches, from their histograms.
        let mut both = hdr::decode(ba[i]["hdr"]["all"].as_str().unwrap()).unwrap();
        both.add(hdr::decode(bb[i]["hdr"]["all"].as_str().unwrap()).unwrap())
            .unwrap();
        let p99 = Percentiles::of(&both).p99_ns;
        assert_eq!(band["latency"]["p99_ns"].as_u64().unwrap(), p99, "{who}");
    }
    // Thousands of 4 KiB fetches in 12 windows: the small band's p99 has its interval.
    assert!(
        bm[0]["intervals"]["p99"]["lo_ns"].as_f64().is_some(),
        "{bm}"
    );
    let log = std::fs::read_to_string(dir.join("histograms.hlog")).unwrap();
    for band in ["4KiB", "64KiB", "1MiB"] {
        assert!(
            log.contains(&format!("/c1/band-{band}/all,")),
            "{band} not in the log"
        );
    }
    let csv = std::fs::read_to_string(dir.join("bands.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let small = csv.lines().find(|l| l.contains(",4KiB,")).unwrap();
    let at = |column: &str| {
        small
            .split(',')
            .nth(header.iter().position(|h| *h == column).unwrap())
            .unwrap()
    };
    let (lo, p99, hi): (f64, f64, f64) = (
        at("p99_lo_ns").parse().unwrap(),
        at("p99_ns").parse().unwrap(),
        at("p99_hi_ns").parse().unwrap(),
    );
    assert!(lo <= hi && lo > 0.0 && p99 > 0.0, "{small}");
    // Another mix is another dataset.
    let other = measure_with(root.path(), &flags("4KiB:50,64KiB:50"));
    let out = merge(&results, &[&a, &other]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("size mix buckets:4096:60"), "{err}");
}

#[test]
fn a_share_past_the_last_or_without_a_size_is_one_error() {
    let root = tempfile::tempdir().unwrap();
    for (share, says) in [
        ("3/2", "past the last"),
        // Two sizes: a split three ways is refused on every share, not only the third.
        ("3/3", "split it across at most 2 machines"),
        ("1/3", "split it across at most 2 machines"),
        ("x", "not a share"),
    ] {
        let out = run(
            root.path(),
            &[&["load"][..], &FLAGS[..], &["--share", share]].concat(),
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{share}: {err}");
        assert!(err.contains(says), "{share}: {err}");
    }
    assert!(crate::common::files_under(root.path()).is_empty());
    let missing = [Path::new("nothing-here"), Path::new("nor-here")];
    let out = merge(&root.path().join("results"), &missing);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no run nothing-here"), "{err}");
}

/// HdrHistogram's own tool reads `histograms.hlog`: the Java `HistogramLogProcessor`
/// (the jar from Maven Central, in `BLOBRACE_HDR_JAR`; CI fetches it) finds every
/// fetch and the same p50 under a result's tag as results.json holds for it.
#[test]
fn hdrhistograms_own_log_processor_reads_the_runs_histograms() {
    let Some(jar) = std::env::var_os("BLOBRACE_HDR_JAR") else {
        if std::env::var_os("CI").is_some() {
            panic!("BLOBRACE_HDR_JAR is not set: .ci/run fetches HdrHistogram's jar");
        }
        eprintln!(
            "skipping: BLOBRACE_HDR_JAR (HdrHistogram-2.2.2.jar from Maven Central) is not set"
        );
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let dir = measure(root.path(), &["--share", "2/2"]);
    let run = json(&dir);
    for r in run["results"].as_array().unwrap() {
        let tag = format!(
            "{}.{}.r1/{}/c1/all",
            r["engine"].as_str().unwrap(),
            r["cache"].as_str().unwrap(),
            r["size"].as_str().unwrap()
        );
        let out = std::process::Command::new("java")
            .arg("-cp")
            .arg(&jar)
            .args([
                "org.HdrHistogram.HistogramLogProcessor",
                "-csv",
                "-outputValueUnitRatio",
                "1",
                "-tag",
                &tag,
                "-i",
            ])
            .arg(dir.join("histograms.hlog"))
            .output()
            .expect("java runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}{}", stderr(&out));
        // "Value","Percentile","TotalCount",...: a row per percentile tick (0.5 is
        // one; 0.99 is not), the last one at 100% with every fetch counted.
        let rows: Vec<(u64, f64, u64)> = text
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                Some((
                    f.first()?.parse::<f64>().ok()? as u64,
                    f.get(1)?.parse::<f64>().ok()?,
                    f.get(2)?.parse::<u64>().ok()?,
                ))
            })
            .collect();
        let median = rows.iter().find(|r| r.1 == 0.5).expect("a 0.5 row");
        let measured = &r["measured"];
        assert_eq!(
            median.0,
            measured["latency"]["p50_ns"].as_u64().unwrap(),
            "{tag}: {text}"
        );
        let last = rows.last().expect("rows");
        assert_eq!(last.2, measured["count"].as_u64().unwrap(), "{tag}: {text}");
    }
}

/// The same cell measured twice, the floor reading it two ways: the merge names the
/// setting that differs and how to pin it, and `variants` refuses two runs of one
/// layout instead of showing the first alone.
#[test]
fn a_setting_that_differs_is_named_with_how_to_pin_it_and_variants_keeps_every_run() {
    let root = tempfile::tempdir().unwrap();
    let pinned = |pattern: &str| {
        let before = runs_in(root.path());
        let out = blobrace()
            .env("BLOBRACE_FLOOR_READ", pattern)
            .args([
                "measure",
                "--engines",
                "floor,sqlite-raw",
                "--sizes",
                "64KiB",
            ])
            .args([
                "--dataset-bytes",
                "4MiB",
                "--warmup",
                "100ms",
                "--measure",
                "300ms",
            ])
            .args([
                "--clients",
                "1",
                "--fresh",
                "--cap",
                "none",
                "--cpus",
                "none",
            ])
            .arg("--data-dir")
            .arg(root.path().join("data"))
            .arg("--results-dir")
            .arg(root.path().join("results"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let new: Vec<_> = runs_in(root.path())
            .into_iter()
            .filter(|d| !before.contains(d))
            .collect();
        new[0].clone()
    };
    let (a, b) = (pinned("pread"), pinned("pieces"));
    let out = merge(&root.path().join("results"), &[&a, &b]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("setting 'read pattern'"), "{err}");
    assert!(err.contains("BLOBRACE_FLOOR_READ=pread"), "{err}");

    let out = blobrace()
        .arg("variants")
        .args([&a, &b])
        .arg("--results-dir")
        .arg(root.path().join("results"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("measured the same layout"), "{err}");
    assert!(err.contains("--baseline"), "{err}");
}
