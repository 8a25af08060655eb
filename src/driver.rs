//! The one loop over sizes and engines, shared by `cargo bench` (criterion drives
//! the fetches: benches/fetch.rs) and `blobrace measure` (`FixedTime` below):
//!
//! ```text
//! for each size:     load it (--drop-after) · open the driver's scope (criterion: a group)
//!   for each engine: evict, open cold, attach counters  (Run::prepare)
//!                    warm up + measure                  (the Driver)
//!                    record, rewrite results            (Run::record)
//!                    close, drop its pages if the cap cannot be emptied
//!                    drop the size's datasets (--drop-after)
//! ```

use std::time::Duration;

use anyhow::Result;
use tokio::runtime::Runtime;

use crate::dataset::DatasetSpec;
use crate::engine::EngineKind;
use crate::run::{Prepared, Run};

/// What the driver did with one engine at one size.
pub enum Driven {
    /// Measured; with criterion, the number of its measurement calls (samples).
    Measured { criterion_samples: Option<u64> },
    /// Nothing to record (criterion's filter skipped it, or it only profiled).
    Skipped,
}

/// Drives the fetches of each engine. `size` opens a scope per size class.
pub trait Driver {
    type Size<'a>: SizeScope
    where
        Self: 'a;
    fn size(&mut self, spec: DatasetSpec) -> Self::Size<'_>;
}

pub trait SizeScope {
    /// Warm up and measure one engine, prepared cold.
    fn drive(
        &mut self,
        rt: &Runtime,
        engine: EngineKind,
        prepared: &mut Prepared,
    ) -> Result<Driven>;
    fn finish(self);
}

/// Every engine at every size of the run, in the run's order.
pub fn measure_all<D: Driver>(run: &mut Run, rt: &Runtime, driver: &mut D) -> Result<()> {
    let config = run.config().clone();
    for spec in config.datasets() {
        rt.block_on(run.before_size(spec))?;
        let mut scope = driver.size(spec);
        for &engine in &config.engines {
            let mut prepared = rt.block_on(run.prepare(engine, spec))?;
            if let Driven::Measured { criterion_samples } =
                scope.drive(rt, engine, &mut prepared)?
            {
                rt.block_on(run.record(engine, spec, &prepared, criterion_samples))?;
            }
            rt.block_on(prepared.fetch_loop.close())?;
            rt.block_on(run.release(engine, spec))?;
        }
        scope.finish();
        rt.block_on(run.after_size(spec))?;
    }
    Ok(())
}

/// `blobrace measure`: warm up for a fixed time, then measure for a fixed time.
pub struct FixedTime {
    pub warm_up: Duration,
    pub measure: Duration,
}

impl Driver for FixedTime {
    type Size<'a> = &'a FixedTime;
    fn size(&mut self, _spec: DatasetSpec) -> &FixedTime {
        self
    }
}

impl SizeScope for &FixedTime {
    fn drive(
        &mut self,
        rt: &Runtime,
        _engine: EngineKind,
        prepared: &mut Prepared,
    ) -> Result<Driven> {
        let measured = rt.block_on(prepared.fetch_loop.run_for(self.warm_up, self.measure));
        match measured {
            Ok(()) => Ok(Driven::Measured {
                criterion_samples: None,
            }),
            Err(e) => Err(rt.block_on(prepared.explain(e))),
        }
    }

    fn finish(self) {}
}
