//! Where a run's findings go (criterion's `Report` hooks): a step adds what it found to
//! the run's `RunResults` and the run hands it to each sink in turn: the results files
//! (`ResultFiles`), the terminal's lines (`Terminal`) and, once the run is complete,
//! the HTML report (`HtmlReport`). The steps that measure write and print none of it:
//! what they are doing as they work (a prefill done, a search step) goes to the sinks
//! too, as `Progress`, which only the terminal shows.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::atomic_file::write_atomic;
use crate::cpu_profile::FetchProfile;
use crate::disk::probe::DiskProbes;
use crate::load_gen::memory_fit::SkippedLoad;
use crate::records::results::{
    DiskLimit, EngineResult, LoadResult, RunResults, SaturationResult, StepFailure,
};
use crate::report::export::{Csv, Exporter, LoadsCsv};
use crate::stats::{format_ns, rate_label};

use super::progress::Progress;
use super::terminal::{load_line, one_line, progress_line};

/// One finding, just added to the run's results.
pub enum Finding<'a> {
    /// The datasets loaded, or found loaded, for the run (and the loads that failed).
    Loads,
    /// One engine and size measured by one client.
    Result(&'a EngineResult),
    /// A step that failed for one engine or store; the run goes on.
    Failure(&'a StepFailure),
    /// A many-client load left out: it would not fit the cap.
    SkippedLoad(&'a SkippedLoad),
    /// One many-client load measured.
    Load(&'a LoadResult),
    /// The disk's own throughput at a size and a number of reads at once.
    DiskLimit(&'a DiskLimit),
    /// A sustainable rate found.
    Saturation(&'a SaturationResult),
    /// A CPU profile of the fetch (and of the server, where it has one).
    Profile(&'a FetchProfile),
    /// The time to the first bytes of a large blob (or why the engine cannot say).
    FirstBytes(&'a crate::measure::first_bytes::FirstBytes),
    /// A cell ended (done, or not: `RunResults::done_cells` says); its part's times.
    CellEnded,
}

/// What a run's output implements.
pub trait Sink {
    /// `finding` was just added to `run`.
    fn found(&mut self, run: &RunResults, finding: &Finding<'_>) -> Result<()>;
    /// `run` is complete (`complete` and `finished_at` are set).
    fn finished(&mut self, run: &RunResults) -> Result<()>;
    /// What a step is doing, while it works (nothing is recorded).
    fn progress(&self, _event: &Progress<'_>) {}
}

/// The sinks of every run, in the order they are called: the files first, so a line
/// that names them names what is on disk.
pub fn every_sink() -> Vec<Box<dyn Sink>> {
    vec![
        Box::new(ResultFiles),
        Box::new(Terminal),
        Box::new(HtmlReport),
    ]
}

/// results.json, results.csv (the summary table) and, with many-client loads,
/// loads.csv, rewritten atomically after every finding: a run stopped at any point
/// leaves what it had measured.
pub struct ResultFiles;

impl ResultFiles {
    pub fn write(run: &RunResults) -> Result<PathBuf> {
        let dir = run.write()?;
        // results.csv is the summary table under the name it had before the report
        // wrote summary.csv.
        if let Some(bytes) = Csv.serialize(run)? {
            write_atomic(&dir.join("results.csv"), &bytes)?;
        }
        if let Some(bytes) = LoadsCsv.serialize(run)? {
            write_atomic(&dir.join(LoadsCsv.file_name()), &bytes)?;
        }
        // The run's lines so far, and from now on, in its run.log (a run holds them).
        crate::say::keep_in(&dir);
        Ok(dir)
    }
}

impl Sink for ResultFiles {
    fn found(&mut self, run: &RunResults, _: &Finding<'_>) -> Result<()> {
        Self::write(run).map(drop).with_context(|| not_saved(run))
    }
    fn finished(&mut self, run: &RunResults) -> Result<()> {
        Self::write(run).map(drop).with_context(|| not_saved(run))
    }
}

/// Why a run stops when its results cannot be written, and what it kept: every write
/// is whole or not at all, so results.json holds the run up to its last saved finding.
fn not_saved(run: &RunResults) -> String {
    format!(
        "the run stopped: its results could not be saved in {} (what was saved before is kept whole there); fix that and run the same command again: it continues the run, measuring only what is missing",
        run.dir().display()
    )
}

/// A line or two on standard error per finding; at the end the summary table, the
/// failures, what beat the floor and where the results are.
pub struct Terminal;

impl Sink for Terminal {
    fn progress(&self, event: &Progress<'_>) {
        say!("{}", progress_line(event));
    }

    fn found(&mut self, run: &RunResults, finding: &Finding<'_>) -> Result<()> {
        let config = &run.config;
        match finding {
            Finding::Loads | Finding::CellEnded => {}
            Finding::Result(r) => {
                say!("{}", one_line(r, config));
                if let Some(changed) = r.disk_probes.as_ref().and_then(DiskProbes::changed) {
                    say!("note: {}: {changed}", r.engine.name());
                }
            }
            Finding::Failure(f) => say!("error: {}; going on with the rest", f.line()),
            Finding::SkippedLoad(s) => say!("{}", s.line()),
            Finding::Load(l) => {
                say!("{}", load_line(&l.result, &l.load, config));
                if l.load.limit_reached {
                    let engine = l.result.engine.name();
                    say!(
                        "note: {engine} {}: the backlog reached --max-in-flight {} after {:.1} s of measurement (warm-up not counted): {engine} does not serve {}/s here; stopped there",
                        l.result.size,
                        l.load.max_in_flight,
                        l.load.measured_seconds,
                        l.load.point.rate.map(rate_label).unwrap_or_default()
                    );
                }
            }
            Finding::DiskLimit(d) => match &d.throughput {
                Ok(t) => say!(
                    "disk {} {}: {} O_DIRECT reads at once: {:.0}/s ({:.1} MB/s), p99 {}",
                    d.size,
                    crate::size::format_bytes(crate::disk::probe::block_for(d.size_bytes)),
                    d.queue_depth,
                    t.reads_per_s,
                    t.mb_per_s,
                    format_ns(t.p99_ns as f64)
                ),
                Err(why) => say!(
                    "disk {} at {} reads at once: unavailable: {why}",
                    d.size,
                    d.queue_depth
                ),
            },
            Finding::Saturation(s) => say!(
                "{:<13} {:>7}: sustainable {} with {} clients (closed loop {:.0}/s)",
                s.engine.name(),
                s.size,
                match (s.search.sustainable, s.sustainable_mb_per_s) {
                    (Some(r), Some(mb)) => format!("{}/s ({mb:.1} MB/s)", rate_label(r)),
                    _ => "none: no rate met the target".into(),
                },
                s.clients,
                s.search.capacity
            ),
            Finding::Profile(p) => {
                say!("profile {}", p.line());
                if let Some(server) = &p.server {
                    say!("profile {} {}: {}", p.engine, p.size, server.line());
                } else if let Some(why) = &p.server_unavailable {
                    say!(
                        "profile {} {}: server profile unavailable: {why}",
                        p.engine,
                        p.size
                    );
                }
            }
            Finding::FirstBytes(f) => say!("streamed {}", f.line()),
        }
        Ok(())
    }

    fn finished(&mut self, run: &RunResults) -> Result<()> {
        say!("{}", crate::records::summary::terminal_table(run));
        if let Some(part) = run.parts.last() {
            let all: f64 = run.parts.iter().map(|p| p.total_seconds).sum();
            say!(
                "{}",
                super::outlook::took_line(
                    part.total_seconds,
                    part.load_seconds,
                    part.measure_seconds,
                    run.parts.len(),
                    all
                )
            );
        }
        for line in super::time_spent::lines(run) {
            say!("{line}");
        }
        for failure in &run.failures {
            say!("FAILED: {}", failure.line());
        }
        for left in &run.config.left_out {
            say!("LEFT OUT: {}: {}", left.engines.join(", "), left.why);
        }
        for beat in crate::records::floor_check::beating_the_floor(run) {
            say!("NOTE: {}", crate::report::words::floor::line(&beat));
        }
        say!("results: {}", run.dir().join("results.json").display());
        Ok(())
    }
}

/// The charts and index.html, drawn once the run is complete.
pub struct HtmlReport;

impl Sink for HtmlReport {
    fn found(&mut self, _: &RunResults, _: &Finding<'_>) -> Result<()> {
        Ok(())
    }

    fn finished(&mut self, run: &RunResults) -> Result<()> {
        let dir = run.dir();
        if !crate::report::has_measurements(run) {
            // Every step failed: the run's own error names why; a report of nothing
            // would only fail beside it, with advice that cannot work.
            say!("report: none, nothing was measured");
            return Ok(());
        }
        let options = crate::report::ReportOptions {
            target_p99: run.config.target_p99,
            ..Default::default()
        };
        let rendered = crate::report::render(&dir, &options).with_context(|| {
            format!(
                "the results are saved in {}, but the report failed (retry with `blobrace report --run {} --results-dir {}`)",
                dir.display(),
                run.run_id,
                run.config.results_dir.display()
            )
        })?;
        say!("{}", rendered.line());
        Ok(())
    }
}
