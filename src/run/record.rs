//! What the run keeps of each step: what a cell found (`cell::Found`) added to the
//! run's results and handed to every sink, or the step's failure.

use anyhow::Result;

use crate::dataset::DatasetSpec;
use crate::error::InputError;
use crate::records::results::{FailedStage, StepFailure};

use super::cell::Found;
use super::{Finding, Run};

impl Run {
    /// Record a step that failed for one engine or store and go on (or, with
    /// `--fail-fast`, stop the run with it). The run exits non-zero at its end.
    pub fn step_failed(
        &mut self,
        stage: FailedStage,
        who: String,
        spec: DatasetSpec,
        error: anyhow::Error,
    ) -> Result<()> {
        // A bad input stops the run (every step would meet it); one dataset found
        // damaged while it is read is that step's failure, and the rest go on.
        let input = error
            .downcast_ref::<InputError>()
            .is_some_and(|e| !matches!(e, InputError::DatasetDamaged { .. }));
        if self.config().fail_fast || input {
            return Err(error);
        }
        let failure = StepFailure::new(stage, who, spec.size, &error);
        self.results.failures.push(failure);
        self.found(|r| Finding::Failure(r.failures.last().expect("just added")))
    }

    /// Add what a cell found to the results, and hand it to every sink (the results
    /// files are rewritten, the terminal prints its line).
    pub(super) fn record(&mut self, found: Found) -> Result<()> {
        let results = &mut self.results;
        match found {
            Found::Result(r) => {
                results.results.push(*r);
                self.found(|r| Finding::Result(r.results.last().expect("just added")))
            }
            Found::Load(l) => {
                results.load_results.push(*l);
                self.found(|r| Finding::Load(r.load_results.last().expect("just added")))
            }
            Found::SkippedLoad(s) => {
                results.skipped_loads.push(s);
                self.found(|r| Finding::SkippedLoad(r.skipped_loads.last().expect("just added")))
            }
            Found::DiskLimit(d) => {
                results.disk_limits.push(d);
                self.found(|r| Finding::DiskLimit(r.disk_limits.last().expect("just added")))
            }
            Found::Saturation(s) => {
                results.saturations.push(*s);
                self.found(|r| Finding::Saturation(r.saturations.last().expect("just added")))
            }
            Found::Profile(p) => {
                results.profiles.push(p);
                self.found(|r| Finding::Profile(r.profiles.last().expect("just added")))
            }
            Found::FirstBytes(f) => {
                results.first_bytes.push(f);
                self.found(|r| Finding::FirstBytes(r.first_bytes.last().expect("just added")))
            }
        }
    }
}
