//! One run, start to finish, shared by `cargo bench` (criterion drives the
//! fetches) and `blobrace measure` (a fixed-time loop drives them):
//! cap the process (`start`) → decide what it measures, then make its record
//! (`Starting::settle`, `servers`) → load what is missing (`loading`) → per size and
//! engine the loop (`drive`) runs each cell (`cell`: prepare, measure, hand back what it
//! found) and records what it hands back (`record`) → results written after each cell.
//! What each step finds goes to the run's sinks (`sinks`: the results files, the
//! terminal's lines, the report).

pub mod cell;
mod dataset_walk;
pub mod drive;
mod driver;
pub mod dry_run;
pub mod interrupt;
mod load_plan;
mod loading;
mod metrics;
mod network;
pub mod outlook;
mod parts;
pub mod plan;
mod progress;
mod readahead;
mod record;
pub mod resume;
mod servers;
pub mod sinks;
pub mod slow_disk;
mod start;
mod terminal;
pub mod time_spent;

use std::path::PathBuf;

use anyhow::Result;

use crate::cap::CapGuard;
use crate::config::RunConfig;
use crate::db::registry::stores_for;
use crate::records::results::RunResults;
use crate::server_caps::ServerCaps;

pub use cell::Prepared;
pub use progress::Progress;
pub use servers::{fit_servers, leave_out_servers_over_cap, reachable_engines};
pub use sinks::{Finding, Sink};
pub use start::{Starting, apply_cap};
pub use terminal::print_cap;

pub struct Run {
    pub results: RunResults,
    /// Where each finding goes (`sinks::every_sink`).
    sinks: Vec<Box<dyn Sink>>,
    /// Held for their drops, in this order (fields drop in order). First: the servers
    /// go back to their own caps when the run ends.
    _server_caps: ServerCaps,
    /// This part's time: loads, measuring, in all (`outlook`).
    clock: outlook::Clock,
    /// What the loads will take, and the disk plan where every dataset does not fit.
    load_plan: load_plan::LoadPlan,
    /// The readahead set for the run, put back when it ends.
    _readahead_holds: Vec<crate::cap::readahead::Hold>,
    /// The latency proxy between the engines and their servers (`--network-rtt`).
    _network: Option<crate::deploy::network::LatencyProxy>,
    /// The emulated disk the data directory is on (`--disk-latency`), taken down
    /// after every store and the readahead let go of it.
    _slow_disk: Option<crate::deploy::slow_disk::SlowDisk>,
    /// Dropped last (fields drop in order): the watchdogs, the proxy and the disk's
    /// servers are this process's children in its cgroups, and a cgroup with a
    /// process in it cannot be removed (every run left its own behind).
    _cap_guard: CapGuard,
}

impl Run {
    pub fn config(&self) -> &RunConfig {
        &self.results.config
    }

    /// Hand what a step just added to the results to every sink; `finding` picks it
    /// out of the results.
    pub(super) fn found(&mut self, finding: impl Fn(&RunResults) -> Finding<'_>) -> Result<()> {
        for sink in &mut self.sinks {
            sink.found(&self.results, &finding(&self.results))?;
        }
        Ok(())
    }

    /// Say what a step is doing to every sink (the terminal prints it).
    pub(super) fn progress(&self, event: Progress<'_>) {
        for sink in &self.sinks {
            sink.progress(&event);
        }
    }

    /// Mark the run complete and hand it to every sink (files, summary, report).
    pub fn finish(&mut self) -> Result<PathBuf> {
        self.results.complete = true;
        self.results.finished_at = Some(crate::now_rfc3339());
        self.end_part();
        for sink in &mut self.sinks {
            sink.finished(&self.results)?;
        }
        let dir = self.results.dir();
        // A rate asked for that could not be offered is an error, after everything
        // measured is saved and reported.
        let unreachable: Vec<String> = self
            .results
            .load_results
            .iter()
            .filter(|l| l.load.limit_reached)
            .map(|l| {
                format!(
                    "{} {} {}",
                    l.result.engine,
                    l.result.size,
                    l.load.point.label()
                )
            })
            .collect();
        if !self.results.failures.is_empty() {
            let what: Vec<String> = self
                .results
                .failures
                .iter()
                .map(|f| format!("{} of {} at {}", f.stage, f.who, f.size))
                .collect();
            anyhow::bail!(
                "{} step(s) failed and were left out (the reasons are above, in results.json and in the report; everything else was measured): {}",
                what.len(),
                what.join(", ")
            );
        }
        // A cell that measured no fetch has no figure to give: the run did not answer
        // for it, whatever else it measured, so it does not end as if it had.
        let empty: Vec<String> = self
            .results
            .results
            .iter()
            .filter(|r| r.measured.count == 0)
            .map(|r| format!("{} {} {}", r.engine, r.size, r.scenario.cache.name()))
            .chain(
                self.results
                    .load_results
                    .iter()
                    .filter(|l| l.result.measured.count == 0 && !l.load.limit_reached)
                    .map(|l| {
                        format!(
                            "{} {} {} {} ({})",
                            l.result.engine,
                            l.result.size,
                            l.result.scenario.cache.name(),
                            l.load.point.label(),
                            l.load.no_fetch_why()
                        )
                    }),
            )
            .collect();
        if !empty.is_empty() {
            anyhow::bail!(
                "{} cell(s) measured no fetch, so the run has no figure for them (everything else is saved and reported): {}",
                empty.len(),
                empty.join("; ")
            );
        }
        if !unreachable.is_empty() {
            anyhow::bail!(
                "the in-flight limit ({}) was reached, so the rate asked for could not be offered, at: {}. The engine serves less than that rate under this cap: lower --rate, or find the highest rate it sustains with `blobrace saturate`; raise --max-in-flight only to see how far the queue grows",
                self.results.config.max_in_flight,
                unreachable.join(", ")
            );
        }
        Ok(dir)
    }
}
