//! What every client of a load fetches, and when: its own seeded id stream, and in
//! open loop the arrival times all clients share.

use std::time::Duration;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use crate::dataset::DatasetSpec;
use crate::measure::id_sequence;

use super::Arrivals;

/// The stream of ids of client `client`: client 0 draws what the single-client
/// loop draws; each other client its own reproducible stream.
pub fn client_id_sequence(spec: &DatasetSpec, client: u32) -> Xoshiro256PlusPlus {
    if client == 0 {
        return id_sequence(spec);
    }
    let mut base = id_sequence(spec);
    let seed: u64 = base.random::<u64>() ^ u64::from(client).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// Intended start times (ns from the start) of an open loop's arrivals over `span`.
pub fn schedule(rate: f64, arrivals: Arrivals, span: Duration, seed: u64) -> Vec<u64> {
    let span_ns = span.as_nanos() as f64;
    let gap_ns = 1e9 / rate;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6172_7269_7661_6c73);
    let mut at = 0.0f64;
    let mut times = Vec::with_capacity((span_ns / gap_ns * 1.05) as usize + 16);
    loop {
        at += match arrivals {
            Arrivals::Constant => gap_ns,
            // Inverse transform of a uniform in [0, 1): -ln(1 - u) is Exp(1).
            Arrivals::Poisson => -(1.0 - rng.random::<f64>()).ln() * gap_ns,
        };
        if at >= span_ns {
            return times;
        }
        times.push(at as u64);
    }
}
