//! A comparison as a gate (`blobrace compare --fail-on-regression PCT`): the cells
//! that got slower beyond noise and by more than a threshold. An engine's p50 is judged
//! against its own run's floor (engine ÷ floor in both runs: what stays when the disk
//! moved between them); the floor's own p50 and every p99 by their 95% intervals
//! (pooled over repeats where both runs have them), an engine's p99 divided by the
//! floor's own p99 change where the floor's moved too.

use super::compare::{ChangeVerdict, Comparison, JudgedBy};
use crate::db::registry::EngineKind;
use crate::size::format_bytes;

/// A cell that got slower beyond noise and the threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    pub engine: EngineKind,
    pub size_bytes: u64,
    pub percentile: &'static str,
    /// How many times slower, as judged (against the floor where it was).
    pub by: f64,
    /// What it was judged on, in words.
    pub why: String,
}

impl Regression {
    pub fn line(&self) -> String {
        format!(
            "{} {} {}: {:.2}x slower ({})",
            self.engine.name(),
            format_bytes(self.size_bytes),
            self.percentile,
            self.by,
            self.why
        )
    }
}

/// A p50 or p99 cell the gate could not judge (no interval in one run), with its raw
/// ratio: what the gate passes over must be said, and a 10,000x one loudly.
#[derive(Debug, Clone, PartialEq)]
pub struct Unjudged {
    pub engine: EngineKind,
    pub size_bytes: u64,
    pub percentile: &'static str,
    /// This run's figure ÷ the baseline's, unjudged.
    pub ratio: f64,
}

impl Unjudged {
    pub fn line(&self) -> String {
        format!(
            "{} {} {}: {:.2}x the baseline, not judged (no interval)",
            self.engine.name(),
            format_bytes(self.size_bytes),
            self.percentile,
            self.ratio
        )
    }
}

/// The gate's reading of one comparison: what got slower beyond noise and
/// `threshold` (0.10: 10%), and the p50/p99 cells that could not be judged.
pub fn regressions(c: &Comparison, threshold: f64) -> (Vec<Regression>, Vec<Unjudged>) {
    let mut found = Vec::new();
    let mut not_judged = Vec::new();
    for change in c
        .changes
        .iter()
        .filter(|ch| ch.percentile == "p50" || ch.percentile == "p99")
    {
        let (slower, by, why) = match change.vs_floor {
            Some(v) if change.percentile == "p50" => (
                v.verdict == Some(ChangeVerdict::Slower),
                v.current.ratio / v.baseline.ratio,
                format!("judged against its own run's floor: {}", v.label()),
            ),
            _ => {
                if change.judged_by == JudgedBy::NotJudged {
                    not_judged.push(Unjudged {
                        engine: change.engine,
                        size_bytes: change.size_bytes,
                        percentile: change.percentile,
                        ratio: change.ratio,
                    });
                    continue;
                }
                let floor = c.floor_moved(change);
                let by = change.ratio / floor.map_or(1.0, |f| f.ratio);
                let why = match floor {
                    Some(f) => format!(
                        "{:.2}x, the floor {:.2}x the same way [{}]",
                        change.ratio,
                        f.ratio,
                        change.basis()
                    ),
                    None => format!("intervals apart [{}]", change.basis()),
                };
                (change.verdict == Some(ChangeVerdict::Slower), by, why)
            }
        };
        if slower && by > 1.0 + threshold {
            found.push(Regression {
                engine: change.engine,
                size_bytes: change.size_bytes,
                percentile: change.percentile,
                by,
                why,
            });
        }
    }
    (found, not_judged)
}
