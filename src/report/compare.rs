//! Two runs side by side: the ratio current / baseline per (engine, size,
//! percentile); a ratio outside 1 ± noise is a change, anything inside is noise.
//! Only what both runs measured is compared; the rest is listed, not guessed.

use crate::engine::EngineKind;
use crate::report::data::{engines, sizes};
use crate::results::RunResults;
use crate::size::format_bytes;

#[derive(Debug, Clone)]
pub struct Change {
    pub engine: EngineKind,
    pub size_bytes: u64,
    pub percentile: &'static str,
    pub baseline_ns: f64,
    pub current_ns: f64,
    pub ratio: f64,
    /// Beyond noise: slower or faster; None within noise.
    pub verdict: Option<ChangeVerdict>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeVerdict {
    Slower,
    Faster,
}

impl ChangeVerdict {
    pub fn word(self) -> &'static str {
        match self {
            ChangeVerdict::Slower => "slower",
            ChangeVerdict::Faster => "faster",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Comparison {
    pub baseline_id: String,
    pub current_id: String,
    pub noise: f64,
    pub changes: Vec<Change>,
    /// (engine, size) measured in only one of the runs, said in words.
    pub not_compared: Vec<String>,
}

impl Comparison {
    pub fn of(baseline: &RunResults, current: &RunResults, noise: f64) -> Self {
        let mut changes = Vec::new();
        let mut not_compared = Vec::new();
        let mut all_engines = engines(baseline);
        all_engines.extend(engines(current));
        all_engines.sort();
        all_engines.dedup();
        let mut all_sizes = sizes(baseline);
        all_sizes.extend(sizes(current));
        all_sizes.sort();
        all_sizes.dedup();
        for &size in &all_sizes {
            for &engine in &all_engines {
                match (baseline.result(engine, size), current.result(engine, size)) {
                    (Some(b), Some(c)) => {
                        let (bl, cl) = (&b.measured.latency, &c.measured.latency);
                        for (percentile, bv, cv) in [
                            ("mean", bl.mean_ns, cl.mean_ns),
                            ("p50", bl.p50_ns as f64, cl.p50_ns as f64),
                            ("p90", bl.p90_ns as f64, cl.p90_ns as f64),
                            ("p99", bl.p99_ns as f64, cl.p99_ns as f64),
                            ("p99.9", bl.p999_ns as f64, cl.p999_ns as f64),
                        ] {
                            if bv <= 0.0 {
                                continue;
                            }
                            let ratio = cv / bv;
                            let verdict = if ratio > 1.0 + noise {
                                Some(ChangeVerdict::Slower)
                            } else if ratio < 1.0 / (1.0 + noise) {
                                Some(ChangeVerdict::Faster)
                            } else {
                                None
                            };
                            changes.push(Change {
                                engine,
                                size_bytes: size,
                                percentile,
                                baseline_ns: bv,
                                current_ns: cv,
                                ratio,
                                verdict,
                            });
                        }
                    }
                    (Some(_), None) => not_compared.push(format!(
                        "{} {}: only in the baseline",
                        engine.name(),
                        format_bytes(size)
                    )),
                    (None, Some(_)) => not_compared.push(format!(
                        "{} {}: only in this run",
                        engine.name(),
                        format_bytes(size)
                    )),
                    (None, None) => {}
                }
            }
        }
        Self {
            baseline_id: baseline.run_id.clone(),
            current_id: current.run_id.clone(),
            noise,
            changes,
            not_compared,
        }
    }

    /// The comparison as a plain table for the terminal.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{} against baseline {} (changes beyond ±{:.0}% marked)\n{:<13} {:>7} {:>6} {:>11} {:>11} {:>7}\n",
            self.current_id,
            self.baseline_id,
            self.noise * 100.0,
            "engine",
            "size",
            "stat",
            "baseline",
            "this run",
            "ratio"
        );
        for c in &self.changes {
            out.push_str(&format!(
                "{:<13} {:>7} {:>6} {:>11} {:>11} {:>6.2}x {}\n",
                c.engine.name(),
                format_bytes(c.size_bytes),
                c.percentile,
                crate::stats::format_ns(c.baseline_ns),
                crate::stats::format_ns(c.current_ns),
                c.ratio,
                c.verdict.map(ChangeVerdict::word).unwrap_or("")
            ));
        }
        for n in &self.not_compared {
            out.push_str(&format!("not compared: {n}\n"));
        }
        out
    }
}
