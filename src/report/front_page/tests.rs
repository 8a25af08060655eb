use std::path::Path;

use super::kinds::{common_layout_parts, duration, layout_without};
use super::*;
use crate::records::results::{EngineResult, RunResults};
use crate::stats::{LogHistogram, Window};
use crate::workload::steady::CacheState;

const MS: u64 = 1_000_000;

/// A run of two engines at 64 KiB and 4 MiB, cold and steady, each cell's p50 and p99
/// given (no intervals: judged on the point estimate, as results before them are).
fn run() -> RunResults {
    let mut run: RunResults =
        serde_json::from_str(include_str!("../../../tests/fixtures/one-cold-round.json")).unwrap();
    let template: EngineResult = run.results[0].clone();
    let cell = |engine: &str, size: u64, cache: CacheState, p50: u64, p99: u64| {
        let mut r = template.clone();
        r.engine = engine.parse().unwrap();
        r.size_bytes = size;
        r.scenario.cache = cache;
        r.measured.intervals = None;
        r.measured.count = 1000;
        r.measured.latency.p50_ns = p50;
        r.measured.latency.p99_ns = p99;
        r.measured.latency.mean_ns = p50 as f64 * 1.1;
        // What only the run's own report draws (`--add-run` drops it).
        r.measured.histogram = Some(LogHistogram {
            first_bin_ns: LogHistogram::FIRST_BIN_NS,
            bins_per_decade: LogHistogram::BINS_PER_DECADE,
            all: vec![1000],
            hits: None,
            misses: None,
        });
        r.measured.windows = vec![Window {
            start_s: 0.0,
            fetches: 1000,
            hits: None,
            disk_bytes: None,
            bins: vec![(60, 1000)],
        }];
        r
    };
    run.results = vec![
        cell("sqlite-raw", 64 << 10, CacheState::Cold, 296_000, 937_000),
        cell("sqlite-raw", 4 << 20, CacheState::Cold, 3_340_000, 60 * MS),
        cell("floor", 64 << 10, CacheState::Cold, 121_000, 350_000),
        cell("floor", 4 << 20, CacheState::Cold, 2_900_000, 9_850_000),
        cell("sqlite-raw", 64 << 10, CacheState::Steady, 290_000, 900_000),
        cell(
            "sqlite-raw",
            4 << 20,
            CacheState::Steady,
            3_000_000,
            70 * MS,
        ),
        cell("floor", 64 << 10, CacheState::Steady, 120_000, 340_000),
        cell("floor", 4 << 20, CacheState::Steady, 2_800_000, 9 * MS),
    ];
    run.complete = true;
    run
}

/// The written page holds `row` (the page is said where it does not).
fn has(text: &str, row: &str) {
    assert!(text.contains(row), "no {row:?} in:\n{text}");
}

fn page(dir: &Path, body: &str) -> String {
    std::fs::write(dir.join("r.json"), serde_json::to_vec(&run()).unwrap()).unwrap();
    std::fs::write(dir.join("page.md"), body).unwrap();
    "page.md".to_string()
}

#[test]
fn durations_are_said_in_three_figures_with_their_unit() {
    assert_eq!(duration(372_400.0), "372 µs");
    assert_eq!(duration(1_684_000.0), "1.68 ms");
    assert_eq!(duration(89_140_000.0), "89.1 ms");
    assert_eq!(duration(999_700.0), "1.00 ms");
    assert_eq!(duration(850.0), "850 ns");
    assert_eq!(duration(2.5e9), "2.50 s");
}

#[test]
fn a_variants_table_says_once_what_every_row_shares() {
    let rows = [
        "disk cap gp3, deployment aws-gp3-same-az",
        "content text, disk cap gp3, deployment aws-gp3-same-az",
        "deployment aws-gp3-same-az, content json, disk cap gp3",
    ];
    let common = common_layout_parts(rows.into_iter());
    assert_eq!(common, ["disk cap gp3", "deployment aws-gp3-same-az"]);
    let labels: Vec<String> = rows.iter().map(|r| layout_without(r, &common)).collect();
    assert_eq!(labels, ["default", "content text", "content json"]);
    // Runs that share nothing keep their labels whole.
    let apart = ["default", "key uuidv7", "page 16384"];
    let none = common_layout_parts(apart.into_iter());
    assert!(none.is_empty(), "{none:?}");
    assert_eq!(layout_without("key uuidv7", &none), "key uuidv7");
}

#[test]
fn a_verdict_table_walks_each_engine_up_its_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let name = page(
        dir.path(),
        "# Answer\n\n<!-- table verdict results=r.json cache=steady target=50ms p50-at=64KiB -->\nold\n<!-- /table -->\n\nAfter.\n",
    );
    let stale = tables(dir.path(), std::slice::from_ref(&name), true).unwrap();
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert!(stale[0].starts_with("page.md:3: "), "{stale:?}");

    tables(dir.path(), std::slice::from_ref(&name), false).unwrap();
    let text = std::fs::read_to_string(dir.path().join("page.md")).unwrap();
    assert!(text.starts_with("# Answer\n\n<!-- table verdict"), "{text}");
    assert!(text.ends_with("<!-- /table -->\n\nAfter.\n"), "{text}");
    has(
        &text,
        "| engine | p99 ≤ 50.0 ms up to | where it stops | p50 at 64 KiB |",
    );
    has(
        &text,
        "| sqlite-raw | 64 KiB | 4 MiB: p99 70.0 ms | 290 µs |",
    );
    has(&text, "| floor | 4 MiB |  | 120 µs |");
    assert!(
        text.contains("run `") && text.contains("[results](r.json)"),
        "{text}"
    );
    // Written again, nothing changes; edited by hand, the check names the table.
    assert!(
        tables(dir.path(), std::slice::from_ref(&name), true)
            .unwrap()
            .is_empty()
    );
    std::fs::write(dir.path().join("page.md"), text.replace("290 µs", "250 µs")).unwrap();
    let stale = tables(dir.path(), std::slice::from_ref(&name), true).unwrap();
    assert_eq!(stale.len(), 1, "{stale:?}");
}

#[test]
fn engines_sizes_and_side_by_side_tables_say_each_cell() {
    let dir = tempfile::tempdir().unwrap();
    let name = page(
        dir.path(),
        "<!-- table engines results=r.json size=4MiB -->\n<!-- /table -->\n\
         <!-- table sizes results=r.json columns=floor:cold,sqlite-raw:steady -->\n<!-- /table -->\n\
         <!-- table side-by-side results=r.json,r.json size=64KiB cache=cold column=content -->\n<!-- /table -->\n\
         <!-- table side-by-side results=r.json size=64KiB cache=cold column=conditions -->\n<!-- /table -->\n\
         <!-- table engines results=r.json size=64KiB mean=yes -->\n<!-- /table -->\n",
    );
    tables(dir.path(), std::slice::from_ref(&name), false).unwrap();
    let text = std::fs::read_to_string(dir.path().join("page.md")).unwrap();
    has(&text, "| engine | cold p50 / p99 | steady p50 / p99 |");
    has(
        &text,
        "| sqlite-raw | 3.34 ms / 60.0 ms | 3.00 ms / 70.0 ms |",
    );
    has(&text, "| size | floor cold | sqlite-raw steady |");
    has(&text, "| 64 KiB | 121 µs / 350 µs | 290 µs / 900 µs |");
    has(&text, "| engine | random | random |");
    has(
        &text,
        "| floor | 121 µs / 350 µs (133 µs) | 121 µs / 350 µs (133 µs) |",
    );
    // A column named by what the stores ran under: the servers' cap, this process's.
    let conditions = text
        .lines()
        .find(|l| l.starts_with("| engine | servers "))
        .unwrap_or_else(|| panic!("no conditions column:\n{text}"));
    assert!(conditions.contains("; in process "), "{conditions}");
    // The mean after the percentiles, where asked.
    has(
        &text,
        "| engine | cold p50 / p99 (mean) | steady p50 / p99 (mean) |",
    );
    has(
        &text,
        "| floor | 121 µs / 350 µs (133 µs) | 120 µs / 340 µs (132 µs) |",
    );
}

#[test]
fn a_marker_that_cannot_be_made_is_refused_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    for (body, says) in [
        (
            "<!-- table nonsense results=r.json -->\n<!-- /table -->\n",
            "no table kind `nonsense`",
        ),
        (
            "<!-- table verdict results=r.json cache=steady target=50ms -->\nno end\n",
            "no closing",
        ),
        (
            "<!-- table verdict results=gone.json cache=steady target=50ms -->\n<!-- /table -->\n",
            "--add-run",
        ),
        (
            "<!-- table engines results=r.json size=8KiB -->\n<!-- /table -->\n",
            "measured no 8 KiB",
        ),
        (
            "<!-- table engines results=r.json size=4MiB colour=red -->\n<!-- /table -->\n",
            "takes no `colour`",
        ),
        (
            "<!-- table verdict results=r.json target=50ms -->\n<!-- /table -->\n",
            "needs cache=",
        ),
    ] {
        let name = page(dir.path(), &format!("intro\n{body}"));
        let err = format!("{:#}", tables(dir.path(), &[name], true).unwrap_err());
        assert!(
            err.starts_with("page.md:2") && err.contains(says),
            "{body}: {err}"
        );
    }
}

#[test]
fn a_run_added_keeps_its_figures_without_its_histograms() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.json");
    let whole = run();
    assert!(whole.results[0].measured.histogram.is_some());
    std::fs::write(&results, serde_json::to_vec(&whole).unwrap()).unwrap();
    let out = add_run(&results, &dir.path().join("kept")).unwrap();
    assert_eq!(
        out.file_name().unwrap(),
        format!("{}.json", whole.run_id).as_str()
    );
    let kept = RunResults::read(&out).unwrap();
    assert!(
        kept.results
            .iter()
            .all(|r| r.measured.histogram.is_none() && r.measured.windows.is_empty())
    );
    let p99 = |r: &RunResults| -> Vec<u64> {
        r.results
            .iter()
            .map(|c| c.measured.latency.p99_ns)
            .collect()
    };
    assert_eq!(p99(&kept), p99(&whole));

    let mut unfinished = whole;
    unfinished.complete = false;
    std::fs::write(&results, serde_json::to_vec(&unfinished).unwrap()).unwrap();
    let err = add_run(&results, dir.path()).unwrap_err().to_string();
    assert!(err.contains("did not finish"), "{err}");
}

#[test]
fn the_repository_s_tables_match_their_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages: Vec<String> = PAGES.iter().map(|p| p.to_string()).collect();
    let stale = tables(root, &pages, true).unwrap();
    assert!(stale.is_empty(), "{stale:?}");
    let marked = pages
        .iter()
        .filter(|p| {
            std::fs::read_to_string(root.join(p))
                .unwrap()
                .contains(OPEN)
        })
        .count();
    assert!(marked >= 1, "no page has a table written from results");
}
