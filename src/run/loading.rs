//! Filling the datasets a run needs: all at once, or one size class at a time
//! (`--drop-after`), and which engines lost theirs.

use anyhow::{Context, Result};

use crate::dataset::{DatasetSpec, DatasetState};
use crate::db::registry::EngineKind;
use crate::db::store::Store;
use crate::load::ensure_loaded;
use crate::results::{FailedStage, StepFailure};

use super::{Finding, Progress, Run, fit_servers, reachable_engines, stores_for};

impl Run {
    /// Load every dataset the run needs (skipping complete ones); with
    /// `drop_after`, only check that the disk can take the largest size class
    /// (each is loaded by `before_size`).
    pub async fn load(&mut self) -> Result<()> {
        self.results.runner_image = crate::docker::own_container_image().await;
        reachable_engines(&mut self.results.config).await?;
        self.server_caps = fit_servers(&mut self.results.config).await?;
        self.results.server_fits = self.server_caps.fits();
        let config = &self.results.config;
        let stores = stores_for(&config.engines);
        if config.drop_after {
            crate::load::plan(&config.locations(), &stores, &config.datasets(), true).await?;
            return Ok(());
        }
        let (loads, failed) = ensure_loaded(
            &config.locations(),
            &stores,
            &config.datasets(),
            config.fail_fast,
        )
        .await?;
        self.results.loads = loads;
        self.record_failed_loads(failed);
        self.found(|_| Finding::Loads)?;
        Ok(())
    }

    pub(super) fn record_failed_loads(&mut self, failed: Vec<crate::load::FailedLoad>) {
        for f in failed {
            self.results.failures.push(StepFailure::new(
                FailedStage::Load,
                f.store.name().to_string(),
                f.spec.size,
                &f.error,
            ));
        }
    }

    /// Whether `engine`'s store failed to load `spec` in this run: nothing to measure.
    pub fn load_failed(&self, engine: EngineKind, spec: DatasetSpec) -> bool {
        let store = engine.store().name();
        self.results
            .failures
            .iter()
            .any(|f| f.stage == FailedStage::Load && f.who == store && f.size == spec.size)
    }

    /// Before measuring a size class: with `drop_after`, load it now.
    pub async fn before_size(&mut self, spec: DatasetSpec) -> Result<()> {
        if !self.config().drop_after {
            return Ok(());
        }
        let config = &self.results.config;
        let (loads, failed) = ensure_loaded(
            &config.locations(),
            &stores_for(&config.engines),
            &[spec],
            config.fail_fast,
        )
        .await?;
        self.results.loads.extend(loads);
        self.record_failed_loads(failed);
        self.found(|_| Finding::Loads)?;
        Ok(())
    }

    /// After measuring a size class: with `drop_after`, delete its datasets.
    pub async fn after_size(&mut self, spec: DatasetSpec) -> Result<()> {
        if !self.config().drop_after {
            return Ok(());
        }
        let at = self.config().locations();
        for kind in stores_for(&self.config().engines) {
            let mut store = kind.open(&at, spec);
            let dropped = async {
                if store.state().await? == DatasetState::Absent {
                    return Ok(false);
                }
                store
                    .remove()
                    .await
                    .with_context(|| format!("cannot drop {}", store.location().display()))?;
                anyhow::Ok(true)
            };
            match dropped.await {
                Ok(true) => self.progress(Progress::Dropped(store.location())),
                Ok(false) => {}
                Err(e) => self.step_failed(FailedStage::Drop, kind.name().into(), spec, e)?,
            }
        }
        Ok(())
    }
}
