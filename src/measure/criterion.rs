//! Inside criterion's `iter_custom`: which calls are its warm-up and which its
//! measurement, so the two never mix in the results.

use std::time::Duration;

use super::*;

/// Tells, inside criterion's `iter_custom`, whether a call is warm-up or measurement.
///
/// criterion 0.8 warms up by calling the routine with 1, 2, 4... iterations until
/// the summed wall time of those calls exceeds `warm_up_time`, then makes exactly
/// `sample_size` measurement calls. Summing the wall time of our own calls the
/// same way tells the phases apart, so warm-up fetches never mix into the
/// measured distribution, and the measured fetches are exactly the ones behind
/// criterion's own report.
#[derive(Debug)]
pub struct CriterionPhases {
    warm_up_time: Duration,
    wall: Duration,
    measured_calls: u64,
    measured_wall: Duration,
}

impl CriterionPhases {
    pub fn new(warm_up_time: Duration) -> Self {
        Self {
            warm_up_time,
            wall: Duration::ZERO,
            measured_calls: 0,
            measured_wall: Duration::ZERO,
        }
    }

    pub fn next(&self) -> Phase {
        if self.wall > self.warm_up_time {
            Phase::Measured
        } else {
            Phase::WarmUp
        }
    }

    /// Record the wall time of the call that just ran in `phase`.
    pub fn finished(&mut self, phase: Phase, wall: Duration) {
        self.wall += wall;
        if phase == Phase::Measured {
            self.measured_calls += 1;
            self.measured_wall += wall;
        }
    }

    /// The wall time of the measured calls.
    pub fn measured_wall(&self) -> Duration {
        self.measured_wall
    }

    pub fn measured_calls(&self) -> u64 {
        self.measured_calls
    }
}
