//! Where a run stands and when it will end. At the start: its cells, what earlier parts
//! measured, what is left to load and to measure, and an estimate of each (loads from
//! the rows per second recorded here, measuring from the presets). Before each cell:
//! which one of how many, the time so far and an updated estimate of what is left (the
//! presets' figure for the cells left, scaled by how this part's cells have compared
//! with theirs). At the end: the time it took, split into loads, measuring and the rest.

use std::time::{Duration, Instant};

use crate::records::run_parts::CellKey;
use crate::size::{SizeClass, format_bytes_approx};
use crate::workload::steady::CacheState;

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
    /// Cells measured, in the order they ended: earlier parts' first (`learned`),
    /// then this part's.
    done: Vec<CellTime>,
}

/// One cell measured in this part: where the presets put it and what it took.
#[derive(Debug, Clone, Copy)]
pub struct CellTime {
    /// Which cell (its repeat aside: the estimate matches engine, cache and size).
    pub at: CellKey,
    /// The presets' middle figure for it.
    pub preset: Duration,
    pub took: Duration,
    /// Its one client's fetches, where it recorded them.
    pub fetches: Option<Fetches>,
}

/// One client's measured fetches in a cell.
#[derive(Debug, Clone, Copy)]
pub struct Fetches {
    pub count: u64,
    /// The mean fetch, in seconds.
    pub mean: f64,
    /// Seconds they were measured for.
    pub seconds: f64,
}

/// A cell still to measure.
#[derive(Debug, Clone, Copy)]
pub struct CellLeft {
    /// Which cell (its repeat aside: the estimate matches engine, cache and size).
    pub at: CellKey,
    pub estimate: Estimate,
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

    /// A cell an earlier part of the run measured: its time teaches the estimate of
    /// the cells left, not this part's measuring total.
    pub fn learned(&mut self, cell: CellTime) {
        self.done.push(cell);
    }

    /// One cell ended.
    pub fn cell_took(&mut self, cell: CellTime) {
        self.measure += cell.took;
        self.done.push(cell);
    }

    /// How this part's cells in `cache` compared with their presets; None before one
    /// was measured (a steady cell's presets span its whole prefill limit, a cold
    /// cell's do not: one says nothing of the other).
    fn pace(&self, cache: CacheState) -> Option<f64> {
        let (presets, actual) = self
            .done
            .iter()
            .filter(|d| d.at.cache == cache)
            .fold((0.0, 0.0), |(p, a), d| {
                (p + d.preset.as_secs_f64(), a + d.took.as_secs_f64())
            });
        (presets > 0.0).then(|| actual / presets)
    }

    /// What is left: each cell left as this part's cells say it will take (`predict`),
    /// plus the loads still to come; None until a cell of every cache state left has
    /// been measured (the presets' range says it until then). `measuring`: the least
    /// and most one client's fetches are measured for.
    pub fn left(
        &self,
        cells_left: &[CellLeft],
        loads_left: f64,
        measuring: Estimate,
        min_fetches: u64,
    ) -> Option<Duration> {
        let mut seconds = loads_left;
        for cell in cells_left {
            seconds += self.predict(cell, measuring, min_fetches)?;
        }
        Some(Duration::from_secs_f64(seconds))
    }

    /// Seconds one cell left will take. The same engine, cache state and size measured
    /// already (an earlier repeat): what it took. The same engine and cache state at
    /// two other sizes: its mean fetch drawn as a line through their sizes (a fixed
    /// cost plus the bytes at the disk's rate) to this size, times the fetches a
    /// precision will need there (drawn on from the two), within the least and most a
    /// cell measures, plus
    /// that cell's time around its fetches (cold start, prefill, probes, loads). A
    /// pace alone (the presets scaled) put a full run's 32 MiB cells at a third of
    /// what they took: they measure to the limit where smaller cells stop early.
    /// Else the presets, scaled by this part's pace in that cache state.
    fn predict(&self, cell: &CellLeft, measuring: Estimate, min_fetches: u64) -> Option<f64> {
        let mine = |d: &&CellTime| d.at.engine == cell.at.engine && d.at.cache == cell.at.cache;
        if let Some(same) = self
            .done
            .iter()
            .filter(mine)
            .rfind(|d| d.at.size == cell.at.size)
        {
            return Some(same.took.as_secs_f64());
        }
        // The latest cell of each other size measured, nearest this size first.
        let mut sizes: Vec<(&CellTime, Fetches)> = Vec::new();
        for d in self.done.iter().filter(mine).rev() {
            if let Some(f) = d.fetches.filter(|f| f.count > 0)
                && !sizes.iter().any(|(s, _)| s.at.size == d.at.size)
            {
                sizes.push((d, f));
            }
        }
        let distance = |d: &CellTime| d.at.size.bytes().abs_diff(cell.at.size.bytes());
        sizes.sort_by_key(|(d, _)| distance(d));
        if let [(near, f1), (other, f2), ..] = sizes[..] {
            let (s1, s2) = (near.at.size.bytes() as f64, other.at.size.bytes() as f64);
            let slope = ((f1.mean - f2.mean) / (s1 - s2)).max(0.0);
            let mean =
                (f1.mean + slope * (cell.at.size.bytes() as f64 - s1)).max(f1.mean.min(f2.mean));
            // The fetches a precision needs fell with size in every run looked at
            // (sqlite-raw: 3,418 at 64 KiB, 1,774 at 1 MiB, 500 at 8 MiB): drawn on
            // along the two sizes' trend, never more than the nearest needed nor
            // fewer than --min-fetches.
            let per_doubling = (f1.count as f64 / f2.count as f64).powf(1.0 / (s1 / s2).log2());
            let doublings = (cell.at.size.bytes() as f64 / s1).log2();
            let count = (f1.count as f64 * per_doubling.powf(doublings))
                .min(f1.count as f64)
                .max(min_fetches as f64);
            let fetching =
                (count * mean).clamp(measuring.least.as_secs_f64(), measuring.most.as_secs_f64());
            let around = (near.took.as_secs_f64() - f1.seconds).max(0.0);
            return Some(around + fetching);
        }
        Some(cell.estimate.middle().as_secs_f64() * self.pace(cell.at.cache)?)
    }
}

/// One cell starting: `[cell 38 of 168] sqlite-raw.steady 64KiB · 1 h 02 min in ·
/// about 1 h 10 min left (until 18:12 UTC)`.
pub struct CellProgress<'a> {
    pub n: usize,
    pub of: usize,
    pub label: &'a str,
    pub size: String,
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

    const KIB: u64 = 1 << 10;

    fn at(cache: CacheState, size_bytes: u64) -> CellKey {
        CellKey {
            engine: "sqlite-raw".parse().unwrap(),
            size: SizeClass::new(size_bytes).unwrap(),
            cache,
            repeat: 1,
        }
    }

    fn left(at: CellKey, estimate: Estimate) -> CellLeft {
        CellLeft { at, estimate }
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn what_is_left_follows_this_part_s_pace_per_cache_state() {
        let (cold, steady) = (CacheState::Cold, CacheState::Steady);
        let measuring = Estimate::between(secs(1), secs(10));
        let mut clock = Clock::default();
        let ten = Estimate::between(secs(5), secs(15));
        let hundred = Estimate::between(Duration::ZERO, secs(200));
        let (cold_64k, steady_64k) = (
            left(at(cold, 64 * KIB), ten),
            left(at(steady, 64 * KIB), hundred),
        );
        assert_eq!(
            clock.left(&[cold_64k], 0.0, measuring, 500),
            None,
            "no pace before a cell"
        );
        // A cold 1 KiB cell the presets gave 10 s took 20 s: cold cells of other sizes
        // left take twice their presets (one size says nothing of how fetches grow).
        clock.cell_took(CellTime {
            at: at(cold, KIB),
            preset: ten.middle(),
            took: secs(20),
            fetches: None,
        });
        assert_eq!(clock.left(&[cold_64k], 0.0, measuring, 500), Some(secs(20)));
        assert_eq!(
            clock.left(&[cold_64k], 30.0, measuring, 500),
            Some(secs(50))
        );
        // The same cell again (a repeat): what it took.
        assert_eq!(
            clock.left(&[left(at(cold, KIB), ten)], 0.0, measuring, 500),
            Some(secs(20))
        );
        // Steady cells are not known until one is measured: the presets say it.
        assert_eq!(
            clock.left(&[cold_64k, steady_64k], 0.0, measuring, 500),
            None
        );
        // A steady cell settled at once: 10 s of its 100 s middle; steady cells follow it.
        clock.cell_took(CellTime {
            at: at(steady, KIB),
            preset: hundred.middle(),
            took: secs(10),
            fetches: None,
        });
        let left = clock.left(&[cold_64k, steady_64k], 0.0, measuring, 500);
        assert_eq!(left, Some(secs(30)));
        assert_eq!(clock.measure, secs(30));
    }

    /// sqlite-raw's cold cells of a full run on this project's machine (2026-11-28,
    /// 3 GiB per size, presets 2 s to 60 s of measuring): 64 KiB took 8 s (2,552
    /// fetches in 2.0 s), 4 MiB 11 s (750 in 4.5 s), and 32 MiB then took 34 s (500
    /// fetches, --min-fetches), where the pace of the smaller cells said 11 s.
    #[test]
    fn a_larger_size_left_is_told_from_how_the_fetches_grew_with_size() {
        let cold = CacheState::Cold;
        let measuring = Estimate::between(secs(2), secs(60));
        let preset = Estimate::between(secs(5), secs(65));
        let mut clock = Clock::default();
        for (size_bytes, took, count, seconds) in
            [(64 * KIB, 8, 2552, 2.006), (4096 * KIB, 11, 750, 4.532)]
        {
            clock.cell_took(CellTime {
                at: at(cold, size_bytes),
                preset: preset.middle(),
                took: secs(took),
                fetches: Some(Fetches {
                    count,
                    mean: seconds / count as f64,
                    seconds,
                }),
            });
        }
        let largest = left(at(cold, 32768 * KIB), preset);
        let told = clock
            .left(&[largest], 0.0, measuring, 500)
            .unwrap()
            .as_secs_f64();
        assert!(
            (24.0..=40.0).contains(&told),
            "32 MiB told {told:.1} s, took 34 s"
        );
        // Fetches of another engine say nothing of this one's: its pace says it.
        let other = CellLeft {
            at: CellKey {
                engine: crate::db::registry::EngineKind::floor(),
                ..largest.at
            },
            estimate: preset,
        };
        let paced = clock
            .left(&[other], 0.0, measuring, 500)
            .unwrap()
            .as_secs_f64();
        assert!((paced - 9.5).abs() < 0.01, "{paced}");
        // Fetching is held within what a cell measures: twice the limit at most.
        let huge = left(at(cold, 256 << 20), preset);
        let most = clock
            .left(&[huge], 0.0, measuring, 500)
            .unwrap()
            .as_secs_f64();
        assert!((most - (60.0 + 11.0 - 4.532)).abs() < 0.01, "{most}");
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
