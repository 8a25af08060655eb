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
    /// The run's measuring time (its parts' `measure_seconds`: every cell from its
    /// eviction to its record); None in a merged run, which keeps no parts.
    pub wall: Option<f64>,
    pub eviction: f64,
    pub prefill: f64,
    pub settle: f64,
    pub measuring: f64,
}

impl CellPhases {
    pub fn of(run: &RunResults) -> Self {
        let mut p = CellPhases {
            // A cell's own start and end stamps bracket its fetches only, not its
            // eviction or prefill: the parts' clock holds the whole.
            wall: (!run.parts.is_empty())
                .then(|| run.parts.iter().map(|part| part.measure_seconds).sum()),
            ..CellPhases::default()
        };
        for r in &run.results {
            p.cells += 1;
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
    pub fn rest(&self) -> Option<f64> {
        self.wall
            .map(|w| (w - self.eviction - self.prefill - self.settle - self.measuring).max(0.0))
    }
}

fn d(seconds: f64) -> String {
    format_duration(Duration::from_secs_f64(seconds.max(0.0)))
}

/// "cells (32) 12 min 01 s: eviction 1 min 02 s, prefill 40 s, settling 1 min 36 s,
/// measuring 6 min 00 s, the rest 2 min 43 s", then "loads: 12 min 30 s, the longest:
/// seaweedfs 4KiB 5 min 30 s, dolt 4KiB 2 min 06 s, ..."; nothing where the run
/// measured or loaded nothing.
pub fn lines(run: &RunResults) -> Vec<String> {
    let mut lines = Vec::new();
    let p = CellPhases::of(run);
    if p.cells > 0 {
        let (total, rest) = match (p.wall, p.rest()) {
            (Some(w), Some(r)) => (
                format!(" {}", d(w)),
                format!(", the rest (opening, warm-up, checks) {}", d(r)),
            ),
            _ => (String::new(), String::new()),
        };
        lines.push(format!(
            "cells ({}){total}: eviction {}, steady prefill {}, settling {}, measuring {}{rest}",
            p.cells,
            d(p.eviction),
            d(p.prefill),
            d(p.settle),
            d(p.measuring),
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
            r.eviction.seconds = 2.0;
        }
        assert!(!run.parts.is_empty(), "the fixture keeps its part");
        run.parts
            .iter_mut()
            .for_each(|part| part.measure_seconds = 0.0);
        run.parts[0].measure_seconds = 60.0;
        let p = CellPhases::of(&run);
        assert_eq!(p.cells, 2);
        assert_eq!(p.wall, Some(60.0));
        assert_eq!(p.eviction, 4.0);
        let measuring: f64 = run
            .results
            .iter()
            .filter_map(|r| r.precision.as_ref().map(|x| x.seconds))
            .sum();
        assert_eq!(p.measuring, measuring);
        assert!((p.rest().unwrap() - (60.0 - 4.0 - measuring)).abs() < 1e-9);
        let said = lines(&run);
        assert!(
            said[0].starts_with("cells (2) 1 min 00 s: eviction 4 s"),
            "{said:?}"
        );
        // A merged run keeps no parts: the phases, no total to take them from.
        run.parts.clear();
        let said = lines(&run);
        assert!(said[0].starts_with("cells (2): eviction 4 s"), "{said:?}");
        assert!(!said[0].contains("the rest"), "{said:?}");
    }
}
