//! The sustainable rate: the highest rate offered in open loop whose p99 response
//! time stays within the target, found by bisection over `run_load` steps.

use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::stats::Percentiles;

use super::LoadMeasured;

/// One step of a saturation search: a rate offered and what came of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SaturationStep {
    pub rate: f64,
    pub achieved: f64,
    pub response: Percentiles,
    pub unserved: u64,
    pub limit_reached: bool,
    /// p99 response time at or under the target, and the in-flight limit not reached.
    pub met: bool,
}

impl SaturationStep {
    pub fn of(rate: f64, measured: &LoadMeasured, target: Duration) -> Self {
        let response = measured.headline();
        Self {
            rate,
            achieved: measured.achieved_rate(),
            response,
            unserved: measured.unserved,
            limit_reached: measured.limit_reached,
            met: !measured.limit_reached
                && response.count > 0
                && response.p99_ns <= target.as_nanos() as u64,
        }
    }
}

/// The highest rate found whose p99 response time meets the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    /// Fetches/s the clients reached in a closed loop: the most they can be offered.
    pub capacity: f64,
    pub steps: Vec<SaturationStep>,
    /// The highest rate that met the target; None when none did.
    pub sustainable: Option<f64>,
}

/// Search for the sustainable rate in `steps` open-loop steps below `capacity` (the
/// closed loop's throughput with the same clients: a higher rate only queues):
/// first the capacity itself, then bisection between the highest rate that met the
/// target and the lowest that did not. After n steps the answer is within
/// capacity / 2^(n-1) of the true rate.
pub fn search(
    capacity: f64,
    steps: u32,
    mut try_rate: impl FnMut(f64) -> Result<SaturationStep>,
) -> Result<Saturation> {
    let mut tried = Vec::new();
    let (mut met, mut missed) = (0.0f64, capacity);
    for n in 0..steps {
        let rate = if n == 0 {
            capacity
        } else {
            (met + missed) / 2.0
        };
        let step = try_rate(rate)?;
        if step.met {
            met = rate;
        } else {
            missed = rate;
        }
        tried.push(step);
        if n == 0 && step.met {
            break;
        }
    }
    Ok(Saturation {
        capacity,
        sustainable: (met > 0.0).then_some(met),
        steps: tried,
    })
}
