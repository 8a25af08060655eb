//! Where a run's time went, said at its end: each cell's phases summed over the cells
//! (the eviction that makes a cache cold, the steady state's prefill and settling, the
//! measuring itself, and the rest: opening, warm-up, checks, profiles), and the loads
//! that took longest. Read from what each result and load recorded, so a run continued
//! in parts, or merged, says it the same way. The default run's three hours are spent
//! here; a saving is found by reading these lines, not by guessing.

use std::time::Duration;

use super::plan::format_duration;
use crate::records::results::RunResults;

/// The phases of every cell, in seconds, summed.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CellPhases {
    pub cells: u64,
    /// From each cell's start to its end.
    pub wall: f64,
    pub eviction: f64,
    pub prefill: f64,
    pub settle: f64,
    pub measuring: f64,
}

impl CellPhases {
    pub fn of(run: &RunResults) -> Self {
        let time = |at: &str| chrono::DateTime::parse_from_rfc3339(at).ok();
        let mut p = CellPhases::default();
        for r in &run.results {
            p.cells += 1;
            if let (Some(a), Some(b)) = (time(&r.started_at), time(&r.finished_at)) {
                p.wall += (b - a).as_seconds_f64().max(0.0);
            }
            p.eviction += r.eviction.seconds;
            if let Some(s) = &r.steady {
                p.prefill += s.prefill.seconds;
                p.settle += s.settle_seconds;
            }
            p.measuring += r.precision.as_ref().map_or(0.0, |x| x.seconds);
        }
        p
    }

    /// The rest of the cells' time: opening, warm-up, checks after the clock, profiles.
    pub fn rest(&self) -> f64 {
        (self.wall - self.eviction - self.prefill - self.settle - self.measuring).max(0.0)
    }
}

fn d(seconds: f64) -> String {
    format_duration(Duration::from_secs_f64(seconds.max(0.0)))
}

/// "cells (32): 12 min 01 s: eviction 1 min 02 s, prefill 40 s, settling 1 min 36 s,
/// measuring 6 min 00 s, the rest 2 min 43 s", then "loads: 12 min 30 s, the longest:
/// seaweedfs 4KiB 5 min 30 s, dolt 4KiB 2 min 06 s, ..."; nothing where the run
/// measured or loaded nothing.
pub fn lines(run: &RunResults) -> Vec<String> {
    let mut lines = Vec::new();
    let p = CellPhases::of(run);
    if p.cells > 0 {
        lines.push(format!(
            "cells ({}): {}: eviction {}, steady prefill {}, settling {}, measuring {}, the rest (opening, warm-up, checks) {}",
            p.cells,
            d(p.wall),
            d(p.eviction),
            d(p.prefill),
            d(p.settle),
            d(p.measuring),
            d(p.rest())
        ));
    }
    let mut loads: Vec<(String, f64)> = run
        .loads
        .iter()
        .filter(|l| l.seconds > 0.0)
        .map(|l| {
            let size = crate::size::format_bytes(l.size_bytes);
            (format!("{} {size}", l.store.name()), l.seconds)
        })
        .collect();
    if !loads.is_empty() {
        let total: f64 = loads.iter().map(|l| l.1).sum();
        loads.sort_by(|a, b| b.1.total_cmp(&a.1));
        let longest: Vec<String> = loads
            .iter()
            .take(5)
            .map(|(what, s)| format!("{what} {}", d(*s)))
            .collect();
        lines.push(format!(
            "loads: {}, the longest: {}",
            d(total),
            longest.join(", ")
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_s_phases_add_up_to_its_time() {
        let mut run: RunResults =
            serde_json::from_str(include_str!("../../tests/fixtures/one-cold-round.json")).unwrap();
        for r in &mut run.results {
            r.started_at = "2026-12-07T05:00:00Z".into();
            r.finished_at = "2026-12-07T05:00:30Z".into();
            r.eviction.seconds = 2.0;
        }
        let p = CellPhases::of(&run);
        assert_eq!(p.cells, 2);
        assert_eq!(p.wall, 60.0);
        assert_eq!(p.eviction, 4.0);
        let measuring: f64 = run
            .results
            .iter()
            .filter_map(|r| r.precision.as_ref().map(|x| x.seconds))
            .sum();
        assert_eq!(p.measuring, measuring);
        assert!((p.rest() - (60.0 - 4.0 - measuring)).abs() < 1e-9);
        let lines = lines(&run);
        assert!(
            lines[0].starts_with("cells (2): 1 min 00 s: eviction 4 s"),
            "{lines:?}"
        );
    }
}
