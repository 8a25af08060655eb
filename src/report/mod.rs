//! The report of a run, from its stored results only: charts (plotters, SVG + PNG),
//! the summary table exported as CSV and JSON, and one self-contained page,
//! `<results-dir>/<run-id>/index.html`. `<results-dir>/latest.html` always points
//! at the newest report, `<results-dir>/index.html` lists them all.

pub mod charts;
pub mod compare;
pub mod data;
pub mod export;
pub mod front_page;
mod page;
pub mod palette;
pub mod regression;
pub mod site;
pub mod variant_rows;
pub mod variants;
pub mod verdict;
pub mod words;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::atomic_file::write_atomic;
use crate::records::results::RunResults;
use crate::workload::steady::CacheState;
use charts::AnyChart;
use compare::Comparison;

pub struct ReportOptions {
    /// The verdict's latency target (the run's own by default).
    pub target_p99: Duration,
    /// A changed percentile counts as a change only beyond this ratio (0.10 = ±10%).
    pub noise: f64,
}

impl Default for ReportOptions {
    fn default() -> Self {
        Self {
            target_p99: crate::config::DEFAULT_TARGET_P99,
            noise: 0.10,
        }
    }
}

/// What `render` wrote.
pub struct Rendered {
    pub index: PathBuf,
    pub charts: usize,
    pub seconds: f64,
}

impl Rendered {
    /// "report: <index.html> (N charts in S s)", the line every report ends with.
    pub fn line(&self) -> String {
        format!(
            "report: {} ({} charts in {:.1}s)",
            self.index.display(),
            self.charts,
            self.seconds
        )
    }
}

/// A run's results, with an error naming the file when it is missing or unreadable.
pub fn load_run(run_dir: &Path) -> Result<RunResults> {
    let path = run_dir.join("results.json");
    let bytes = std::fs::read(&path).with_context(|| {
        format!(
            "cannot read {}: is {} a run directory (blobrace measure / cargo bench write one)?",
            path.display(),
            run_dir.display()
        )
    })?;
    let run = RunResults::parse(&bytes, &path)?;
    if !has_measurements(&run) {
        bail!("{} holds no measurements yet", path.display());
    }
    Ok(run)
}

/// Whether a run holds anything a report can show.
pub fn has_measurements(run: &RunResults) -> bool {
    !(run.results.is_empty()
        && run.load_results.is_empty()
        && run.saturations.is_empty()
        && run.skipped_loads.is_empty())
}

/// Run directories under `results_dir` (those holding a results.json), oldest first.
pub fn runs(results_dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(results_dir).with_context(|| {
        if results_dir.exists() {
            format!(
                "cannot read the results directory {}",
                results_dir.display()
            )
        } else {
            no_runs_there(results_dir)
        }
    })?;
    let mut runs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("results.json").is_file())
        .collect();
    // Run ids start with a UTC timestamp: name order is time order.
    runs.sort();
    Ok(runs)
}

/// The run directory for `--run ID` (or the newest).
pub fn run_dir(results_dir: &Path, run: Option<&str>) -> Result<PathBuf> {
    match run {
        Some(id) => {
            let dir = results_dir.join(id);
            if !dir.is_dir() {
                let ids: Vec<String> = runs(results_dir)?
                    .iter()
                    .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect();
                if ids.is_empty() {
                    bail!("no run {id}: {}", no_runs_there(results_dir));
                }
                bail!(
                    "no run {id} in {}; its runs: {}",
                    results_dir.display(),
                    ids.join(", ")
                );
            }
            Ok(dir)
        }
        None => runs(results_dir)?
            .pop()
            .with_context(|| no_runs_there(results_dir)),
    }
}

/// No run was made in `results_dir`: how to make one there, or look elsewhere.
fn no_runs_there(results_dir: &Path) -> String {
    format!(
        "no run has been made in {dir}: make one there with `blobrace measure --results-dir {dir}` (or `cargo bench` with BLOBRACE_RESULTS_DIR={dir}), or point --results-dir (BLOBRACE_RESULTS_DIR) at where your runs are",
        dir = results_dir.display()
    )
}

/// The cache state a run's main page shows: steady where it was measured (what a
/// long-running service sees), else cold.
pub fn primary_cache(run: &RunResults) -> CacheState {
    let caches = run.caches();
    if caches.contains(&CacheState::Steady) {
        CacheState::Steady
    } else {
        caches.first().copied().unwrap_or_default()
    }
}

/// Where a cache state's page and charts go: the run directory for the main one,
/// `<run-dir>/<cache>/` for another.
pub fn page_dir(run_dir: &Path, cache: CacheState, primary: CacheState) -> PathBuf {
    if cache == primary {
        run_dir.to_path_buf()
    } else {
        run_dir.join(cache.name())
    }
}

/// Draw every chart, export the summary, write the page(s) and the entry points:
/// one page per cache state measured (`RunResults::view`), each the whole report
/// of that state; repeats appear as their spread.
pub fn render(run_dir: &Path, options: &ReportOptions) -> Result<Rendered> {
    render_run(run_dir, &load_run(run_dir)?, &[], options)
}

/// `render` of a run already read from `run_dir`, beside its comparisons with a
/// baseline (one per cache state; none without a baseline): `blobrace report
/// --baseline` reads each run once and compares them once, for its table and its page.
pub fn render_run(
    run_dir: &Path,
    run: &RunResults,
    comparisons: &[Comparison],
    options: &ReportOptions,
) -> Result<Rendered> {
    let started = Instant::now();
    for exporter in export::ALL {
        if let Some(bytes) = exporter.serialize(run)? {
            write_atomic(&run_dir.join(exporter.file_name()), &bytes)?;
        }
    }
    let primary = primary_cache(run);
    let mut drawn = 0;
    for cache in run.caches() {
        let view = run.view(cache);
        let dir = page_dir(run_dir, cache, primary);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        // The baseline's same cache state; a baseline from before cache states is cold.
        let comparison = comparisons.iter().find(|c| c.cache == cache);
        let charts = AnyChart::all_for(&view, options.target_p99.as_nanos() as u64);
        for chart in &charts {
            chart
                .render(&view, &dir)
                .with_context(|| format!("cannot draw {}", chart.file_stem()))?;
        }
        drawn += charts.len();
        let context = page::PageContext {
            full: run,
            cache,
            primary,
            to_run_dir: if dir == run_dir { "" } else { "../" },
        };
        let page = page::page(&view, &dir, &charts, comparison, options, &context)?;
        write_atomic(&dir.join("index.html"), page.as_bytes())?;
    }
    if let Some(results_dir) = run_dir.parent() {
        write_entry_points(results_dir)?;
    }
    Ok(Rendered {
        index: run_dir.join("index.html"),
        charts: drawn,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// `latest.html` (redirects to the newest report) and `index.html` (all of them).
fn write_entry_points(results_dir: &Path) -> Result<()> {
    let reported: Vec<String> = runs(results_dir)?
        .iter()
        .filter(|d| d.join("index.html").is_file())
        .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let Some(latest) = reported.last() else {
        return Ok(());
    };
    write_atomic(
        &results_dir.join("latest.html"),
        page::latest(latest)?.as_bytes(),
    )?;
    let newest_first: Vec<&str> = reported.iter().rev().map(String::as_str).collect();
    write_atomic(
        &results_dir.join("index.html"),
        page::reports(&newest_first)?.as_bytes(),
    )
}
