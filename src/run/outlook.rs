//! Where a run stands and when it will end. At the start: its cells, what earlier parts
//! measured, what is left to load and to measure, and an estimate of each (loads from
//! the rows per second recorded here, measuring from the presets). Before each cell:
//! which one of how many, the time so far and an updated estimate of what is left (the
//! presets' figure for the cells left, scaled by how this part's cells have compared
//! with theirs). At the end: the time it took, split into loads, measuring and the rest.

use std::time::{Duration, Instant};

use crate::size::{SizeClass, format_bytes_approx};
use crate::steady::CacheState;

use super::plan::{Estimate, format_duration};

/// A run at its start.
#[derive(Debug, Clone)]
pub struct Outlook {
    /// `6 size(s) × 14 engine(s) × 2 cache state(s) × 1 repeat(s)`.
    pub shape: String,
    pub cells: usize,
    /// Measured to their end by earlier parts of this run.
    pub done_before: usize,
    /// The presets' time for the cells left.
    pub measuring: Estimate,
    pub loads: LoadsOutlook,
}

/// The datasets still to load (or to finish loading) for the cells left.
#[derive(Debug, Clone, Default)]
pub struct LoadsOutlook {
    pub datasets: usize,
    /// Blob bytes still to write.
    pub bytes: u64,
    /// Seconds estimated from loads recorded here, else from the store's own figures
    /// (`Database::load_cost`, as the disk plan weighs them).
    pub seconds: f64,
    /// `fs 1KiB`: datasets with no load of their store and size recorded here, whose
    /// seconds are the store's own figures.
    pub from_store_figures: Vec<String>,
    /// Seconds estimated per size class, for the loads made size by size.
    pub per_size: Vec<(SizeClass, f64)>,
}

impl Outlook {
    pub fn lines(&self) -> Vec<String> {
        let to_measure = self.cells - self.done_before;
        let mut lines = vec![format!(
            "run: {} = {} cell(s){}",
            self.shape,
            self.cells,
            if self.done_before > 0 {
                format!(
                    ", {} measured by earlier parts, {to_measure} to measure",
                    self.done_before
                )
            } else {
                String::new()
            }
        )];
        let loads = &self.loads;
        let load_words = if loads.datasets == 0 {
            "nothing to load".to_string()
        } else {
            let mut words = format!(
                "{} dataset(s) to load ({} of blobs)",
                loads.datasets,
                format_bytes_approx(loads.bytes)
            );
            let about = format_duration(Duration::from_secs_f64(loads.seconds));
            let guessed = &loads.from_store_figures;
            if guessed.is_empty() {
                words.push_str(&format!(": about {about} from the loads recorded here"));
            } else if guessed.len() == loads.datasets {
                words.push_str(&format!(
                    ": about {about} from the stores' own figures (no load recorded here)"
                ));
            } else {
                words.push_str(&format!(
                    ": about {about} from the loads recorded here, else the stores' own figures (no load recorded for {})",
                    guessed.join(", ")
                ));
            }
            words
        };
        lines.push(format!(
            "run: measuring {} from the presets; {load_words}",
            self.measuring.label()
        ));
        lines
    }
}

/// The time of this part, as it goes.
#[derive(Debug)]
pub struct Clock {
    started: Instant,
    pub load: Duration,
    pub measure: Duration,
    /// Cells measured in this part, per cache state (a steady cell's presets span
    /// its prefill's limit, a cold cell's do not): the presets' middle figure for
    /// them, and the time they took.
    done: Vec<(CacheState, Duration, Duration)>,
}

impl Default for Clock {
    fn default() -> Self {
        Self {
            started: Instant::now(),
            load: Duration::ZERO,
            measure: Duration::ZERO,
            done: Vec::new(),
        }
    }
}

impl Clock {
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// One cell in `cache` took `took`, where the presets gave it `preset`.
    pub fn cell_took(&mut self, cache: CacheState, preset: Estimate, took: Duration) {
        self.measure += took;
        match self.done.iter_mut().find(|(c, _, _)| *c == cache) {
            Some((_, presets, actual)) => {
                *presets += preset.middle();
                *actual += took;
            }
            None => self.done.push((cache, preset.middle(), took)),
        }
    }

    /// How this part's cells in `cache` compared with their presets; None before one
    /// was measured (a steady cell's presets span its whole prefill limit, a cold
    /// cell's do not: one says nothing of the other).
    fn pace(&self, cache: CacheState) -> Option<f64> {
        let (_, presets, actual) = self.done.iter().find(|(c, _, _)| *c == cache)?;
        (!presets.is_zero()).then(|| actual.as_secs_f64() / presets.as_secs_f64())
    }

    /// What is left: each cell left's presets scaled by this part's pace in its
    /// cache state, plus the loads still to come; None until a cell of every cache
    /// state left has been measured (the presets' range says it until then).
    pub fn left(&self, cells_left: &[(CacheState, Estimate)], loads_left: f64) -> Option<Duration> {
        let mut seconds = loads_left;
        for &(cache, estimate) in cells_left {
            seconds += estimate.middle().as_secs_f64() * self.pace(cache)?;
        }
        Some(Duration::from_secs_f64(seconds))
    }
}

/// One cell starting: `[cell 38 of 168] sqlite-raw.steady 64KiB · 1 h 02 min in ·
/// about 1 h 10 min left (until 18:12 UTC)`.
pub struct CellProgress<'a> {
    pub n: usize,
    pub of: usize,
    pub label: &'a str,
    pub size: SizeClass,
    pub elapsed: Duration,
    /// The estimate from this part's pace, once there is one.
    pub left: Option<Duration>,
    /// The presets' figure for the cells left (this one included).
    pub presets_left: Estimate,
}

impl CellProgress<'_> {
    pub fn line(&self) -> String {
        let left = match self.left {
            Some(left) => format!(
                "about {} left (until {} UTC)",
                format_duration(left),
                (chrono::Utc::now() + chrono::Duration::from_std(left).unwrap_or_default())
                    .format("%H:%M")
            ),
            None => format!("{} left from the presets", self.presets_left.label()),
        };
        format!(
            "[cell {} of {}] {} {} · {} in · {left}",
            self.n,
            self.of,
            self.label,
            self.size,
            format_duration(self.elapsed)
        )
    }
}

/// `took 2 h 10 min: loads 40 min 00 s, measuring 1 h 20 min, the rest 10 min 00 s`.
pub fn took_line(total: f64, load: f64, measure: f64, parts: usize, all_parts: f64) -> String {
    let d = |s: f64| format_duration(Duration::from_secs_f64(s.max(0.0)));
    let mut line = format!(
        "took {}: loads {}, measuring {}, the rest {}",
        d(total),
        d(load),
        d(measure),
        d(total - load - measure)
    );
    if parts > 1 {
        line.push_str(&format!(
            " (this part; the run's {parts} parts: {} in all)",
            d(all_parts)
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_left_follows_this_part_s_pace_per_cache_state() {
        let (cold, steady) = (CacheState::Cold, CacheState::Steady);
        let mut clock = Clock::default();
        let ten = Estimate::between(Duration::from_secs(5), Duration::from_secs(15));
        let hundred = Estimate::between(Duration::ZERO, Duration::from_secs(200));
        assert_eq!(
            clock.left(&[(cold, ten)], 0.0),
            None,
            "no pace before a cell"
        );
        // A cold cell the presets gave 10 s took 20 s: cold cells left take twice
        // their presets.
        clock.cell_took(cold, ten, Duration::from_secs(20));
        assert_eq!(
            clock.left(&[(cold, ten)], 0.0),
            Some(Duration::from_secs(20))
        );
        assert_eq!(
            clock.left(&[(cold, ten)], 30.0),
            Some(Duration::from_secs(50))
        );
        // Steady cells are not known until one is measured: the presets say it.
        assert_eq!(clock.left(&[(cold, ten), (steady, hundred)], 0.0), None);
        // A steady cell settled at once: 10 s of its 100 s middle; steady cells follow it.
        clock.cell_took(steady, hundred, Duration::from_secs(10));
        let left = clock.left(&[(cold, ten), (steady, hundred)], 0.0);
        assert_eq!(left, Some(Duration::from_secs(30)));
        assert_eq!(clock.measure, Duration::from_secs(30));
    }

    #[test]
    fn the_split_adds_up_and_names_the_parts() {
        let line = took_line(7200.0, 2400.0, 4200.0, 1, 7200.0);
        assert_eq!(
            line,
            "took 2 h 00 min: loads 40 min 00 s, measuring 1 h 10 min, the rest 10 min 00 s"
        );
        assert!(
            took_line(60.0, 0.0, 50.0, 3, 600.0)
                .ends_with("the run's 3 parts: 10 min 00 s in all)")
        );
    }
}
