//! One cell of a run (an engine at a size class or mix, in one cache state and
//! repeat), measured and handed back as values: prepared from its cache state,
//! measured under each of its loads, profiled where asked, and returned as
//! `Measured` for the run's loop to record (`Run::record`). A cell reads the run's
//! settings, its cap and what earlier cells recorded, and tells the sinks what it is
//! doing while it works; it records nothing itself (hyperfine's `Benchmark` beside its
//! `Scheduler`).
//!
//! ```text
//! CellRun::measure     for each load of the cell (--clients, --rate):
//!                        prepare (prepare.rs: evict, probe the disk; steady: prefill, settle)
//!                        1 client: the driver warms up and measures (`SizeScope::drive`),
//!                          then the result (result.rs), its CPU profile, its first bytes
//!                        more clients or a rate: whether they fit the caps, the load, the
//!                          disk's own limit at that depth, the sustainable-rate search
//!                          (clients.rs), with --write-rate a writer beside (writer.rs)
//!                      saturate mode: a sustainable-rate search per client count
//! ```

mod clients;
mod prepare;
mod result;
pub mod writer;

use anyhow::Result;
use tokio::runtime::Runtime;

use crate::config::RunConfig;
use crate::cpu_profile::FetchProfile;
use crate::dataset::DatasetSpec;
use crate::db::registry::EngineKind;
use crate::load_gen::LoadPoint;
use crate::load_gen::memory_fit::SkippedLoad;
use crate::measure::first_bytes::FirstBytes;
use crate::records::results::{
    DiskLimit, EngineResult, LoadResult, RunResults, SaturationResult, Scenario,
};

use super::driver::{Driven, SizeScope};
use super::plan::{Cell, Work};
use super::{Progress, Sink};

pub use prepare::{Prepared, release};

/// One thing a cell found, for the run to record in that order. The results are
/// boxed: a few kilobytes each, against a few bytes for a skipped load.
pub enum Found {
    /// Measured by one client.
    Result(Box<EngineResult>),
    /// A many-client load measured.
    Load(Box<LoadResult>),
    /// A many-client load left out: it would not fit the caps.
    SkippedLoad(SkippedLoad),
    /// The disk's own throughput at a size and a number of reads at once.
    DiskLimit(DiskLimit),
    /// A sustainable rate found.
    Saturation(Box<SaturationResult>),
    /// A CPU profile of the fetch.
    Profile(FetchProfile),
    /// The time to the first bytes of a large blob.
    FirstBytes(FirstBytes),
}

/// What a cell hands back.
pub struct Measured {
    /// What it found, in order; kept where it failed after finding some.
    pub found: Vec<Found>,
    /// Every load measured or skipped for the cap; false where the driver left one
    /// out (criterion's filter, `--profile-time`): the cell is then not done, and a
    /// later run measures it.
    pub whole: bool,
    /// Why it stopped before its end (its server OOM-killed or gone, a lost
    /// connection): the run records it as that cell's failure and goes on.
    pub failed: Option<anyhow::Error>,
}

/// One cell being measured, borrowing the run it is part of.
pub struct CellRun<'r> {
    pub engine: EngineKind,
    pub spec: DatasetSpec,
    pub scenario: Scenario,
    /// The run so far: its settings, cap and machine, and what earlier cells recorded.
    run: &'r RunResults,
    /// Told what the cell is doing while it works (the terminal prints it).
    sinks: &'r [Box<dyn Sink>],
    found: Vec<Found>,
}

impl<'r> CellRun<'r> {
    pub fn new(run: &'r RunResults, sinks: &'r [Box<dyn Sink>], cell: &Cell) -> Self {
        Self {
            engine: cell.engine,
            spec: cell.spec,
            scenario: cell.scenario,
            run,
            sinks,
            found: Vec::new(),
        }
    }

    pub fn config(&self) -> &'r RunConfig {
        &self.run.config
    }

    /// The context of a step of this cell that failed: "postgres 64KiB: the {what}
    /// failed", the line the run's failure record and the terminal show.
    fn failed(&self, what: &str) -> String {
        format!(
            "{} {}: the {what} failed",
            self.engine.name(),
            self.spec.size
        )
    }

    fn progress(&self, event: Progress<'_>) {
        for sink in self.sinks {
            sink.progress(&event);
        }
    }

    /// Every load of the cell: in latency mode each load (1 client through the
    /// driver, more through the load generator), then, for `--saturate-sizes`, the
    /// search; in saturate mode a saturation search per client count.
    pub fn measure<S: SizeScope>(mut self, rt: &Runtime, scope: &mut S, work: &Work) -> Measured {
        let measured = self.loads(rt, scope, work);
        let (whole, failed) = match measured {
            Ok(whole) => (whole, None),
            Err(e) => (false, Some(e)),
        };
        Measured {
            found: self.found,
            whole,
            failed,
        }
    }

    fn loads<S: SizeScope>(&mut self, rt: &Runtime, scope: &mut S, work: &Work) -> Result<bool> {
        let mut whole = true;
        match work {
            Work::Latency { loads, search } => {
                // --saturate-sizes: the search goes on from the closed loop of its client
                // count, a load measured here anyway.
                let mut saturate = search.then(|| self.most_clients_that_fit(rt));
                for &point in loads {
                    let then_search = saturate.filter(|&c| point == LoadPoint::closed(c) && c > 1);
                    let measured = self.measure_one(rt, scope, point, then_search)?;
                    if measured.searched {
                        saturate = None;
                    }
                    whole &= measured.driven;
                }
                if let Some(clients) = saturate {
                    self.saturate_one(rt, clients)?;
                }
            }
            Work::Saturate { clients } => {
                for &clients in clients {
                    self.saturate_one(rt, clients)?;
                }
            }
        }
        Ok(whole)
    }

    /// The cell under one load: prepared from its cache state (evicted, or prefilled
    /// and settled), measured, closed. With `then_search`, a closed loop of that many
    /// clients is followed on the same prepared engine by the sustainable-rate search
    /// below it.
    fn measure_one<S: SizeScope>(
        &mut self,
        rt: &Runtime,
        scope: &mut S,
        point: LoadPoint,
        then_search: Option<u32>,
    ) -> Result<One> {
        if !point.is_single_closed()
            && let Some(why) = rt.block_on(self.load_misfit(point))
        {
            self.skip_load(point, why);
            return Ok(One {
                searched: false,
                driven: true,
            });
        }
        let mut driven = true;
        let config = self.config();
        let mut label = self
            .scenario
            .label(self.engine, &config.cache, config.repeat);
        let mut prepared = rt.block_on(self.prepare())?;
        let mut searched = false;
        if point.is_single_closed() {
            let driven_by = self.beside_writer(&mut prepared, |_, prepared| {
                scope.drive(rt, &label, prepared)
            })?;
            match driven_by {
                Driven::Measured { criterion_samples } => {
                    let result = rt.block_on(self.one_client_result(&prepared, criterion_samples));
                    self.found.push(Found::Result(Box::new(result)));
                    self.profile_fetches(rt, &mut prepared)?;
                    self.time_first_bytes(rt, &mut prepared)?;
                }
                Driven::Skipped => driven = false,
            }
        } else {
            label = format!("{label}.{}", point.label());
            self.progress(Progress::UnderLoad {
                cell: &label,
                size: self.spec.size_label(),
                engine: self.engine,
            });
            let measured = self.beside_writer(&mut prepared, |cell, prepared| {
                cell.drive_load(rt, prepared, point, cell.load_settings())
            })?;
            let load = rt.block_on(self.load_result(&prepared, point, &measured));
            self.found.push(Found::Load(Box::new(load)));
            self.measure_disk_limit(point.clients);
            if let Some(clients) = then_search {
                self.search_sustainable(rt, &prepared, clients, &measured)?;
                searched = true;
            }
        }
        rt.block_on(prepared.fetch_loop.close())?;
        Ok(One { searched, driven })
    }

    /// The most of the run's client counts whose fetches in flight fit under the caps
    /// (`load_misfit`), for `--saturate-sizes`: 64 clients of 4 MiB blobs do not fit
    /// a 1 GiB process, 16 do. None fit: the most, which `saturate_one` then skips,
    /// saying why.
    fn most_clients_that_fit(&self, rt: &Runtime) -> u32 {
        let mut counts = self.config().clients.clone();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        counts
            .iter()
            .copied()
            .find(|&c| {
                rt.block_on(self.load_misfit(LoadPoint::closed(c)))
                    .is_none()
            })
            .unwrap_or(counts.first().copied().unwrap_or(1))
    }

    /// The sustainable rate with `clients` clients, prepared from the cell's cache
    /// state; skipped when their fetches would not fit under the caps.
    fn saturate_one(&mut self, rt: &Runtime, clients: u32) -> Result<()> {
        let point = LoadPoint::closed(clients);
        if let Some(why) = rt.block_on(self.load_misfit(point)) {
            self.skip_load(point, why);
            return Ok(());
        }
        let prepared = rt.block_on(self.prepare())?;
        self.saturate(rt, &prepared, clients)?;
        self.measure_disk_limit(clients);
        rt.block_on(prepared.fetch_loop.close())?;
        Ok(())
    }
}

/// What `measure_one` did.
struct One {
    /// The sustainable-rate search followed the closed loop.
    searched: bool,
    /// False where the driver measured nothing (criterion's filter skipped it).
    driven: bool,
}
