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
        // Each kind of finding goes on the end of its own list, and the sinks are
        // handed that entry as it now stands in the results.
        macro_rules! push_and_tell {
            ($run:expr, $list:ident, $item:expr, $finding:ident) => {{
                $run.results.$list.push($item);
                $run.found(|r| Finding::$finding(r.$list.last().expect("just added")))
            }};
        }
        match found {
            Found::Result(r) => push_and_tell!(self, results, *r, Result),
            Found::Load(l) => push_and_tell!(self, load_results, *l, Load),
            Found::SkippedLoad(s) => push_and_tell!(self, skipped_loads, s, SkippedLoad),
            Found::DiskLimit(d) => push_and_tell!(self, disk_limits, d, DiskLimit),
            Found::Saturation(s) => push_and_tell!(self, saturations, *s, Saturation),
            Found::Profile(p) => push_and_tell!(self, profiles, p, Profile),
            Found::FirstBytes(f) => push_and_tell!(self, first_bytes, f, FirstBytes),
        }
    }
}
