//! Which read pattern this disk serves fastest at one size. Every pattern reads
//! random blobs of the floor's own file from a cold cache, taking turns round by
//! round (so a disk that slows down mid-way slows every pattern alike), until each
//! has `MIN_ROUNDS` reads and the time budget is spent. The floor then reads with
//! the eligible pattern of lowest median (`ReadPattern::eligible`).

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use super::pattern::{PatternReader, ReadPattern};
use crate::evict::drop_cached_range;
use crate::stats::format_ns;

/// Reads per pattern at least: the median of 5 is the 3rd.
pub const MIN_ROUNDS: usize = 5;
/// Reads per pattern at most, where reads are fast.
pub const MAX_ROUNDS: usize = 41;
/// Readahead a read may have started beyond the blob, dropped after it so the
/// next pattern's read (and the measurement after) finds the cache as it was.
const READAHEAD_MARGIN: u64 = 16 << 20;

/// One pattern's cold reads.
#[derive(Debug, Clone)]
pub struct Trial {
    pub pattern: ReadPattern,
    /// Median of its cold reads; None where it could not read (`failed` says why).
    pub p50_ns: Option<u64>,
    pub failed: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Calibration {
    pub chosen: ReadPattern,
    /// Empty where the pattern was pinned, not timed.
    pub trials: Vec<Trial>,
    pub reads_each: usize,
    /// The variable that pinned `chosen`, where one did.
    pub pinned_by: Option<&'static str>,
}

impl Calibration {
    /// A pattern chosen by the user, not timed.
    pub fn pinned(pattern: ReadPattern, by: &'static str) -> Self {
        Self {
            chosen: pattern,
            trials: Vec::new(),
            reads_each: 0,
            pinned_by: Some(by),
        }
    }

    /// "pread 4.16ms, 4KiB preads in order 3.59ms (chosen), …, O_DIRECT pread
    /// 3.60ms (not eligible: …); 9 cold reads each".
    pub fn describe(&self) -> String {
        if let Some(by) = self.pinned_by {
            return format!(
                "not measured: {by}={} pinned it (unset it to time every pattern)",
                self.chosen.key()
            );
        }
        let trials: Vec<String> = self
            .trials
            .iter()
            .map(|t| {
                let p50 = t.p50_ns.map(|ns| format_ns(ns as f64)).unwrap_or_else(|| {
                    format!("unavailable ({})", t.failed.as_deref().unwrap_or("?"))
                });
                let mark = if t.pattern == self.chosen {
                    " (chosen)"
                } else if !t.pattern.eligible() {
                    " (not eligible: bypasses the page cache every engine reads through)"
                } else {
                    ""
                };
                format!("{} {p50}{mark}", t.pattern.name())
            })
            .collect();
        format!(
            "{}; median of {} cold reads each",
            trials.join(", "),
            self.reads_each
        )
    }
}

/// Measure every pattern on `rows` blobs of `size` bytes packed in `path`, for up
/// to about `budget` once each has `MIN_ROUNDS` reads.
pub fn calibrate(path: &Path, size: usize, rows: u64, budget: Duration) -> io::Result<Calibration> {
    let file = File::open(path)?;
    // DONTNEED skips dirty pages: a file just loaded must reach the disk first.
    file.sync_data()?;
    let mut readers: Vec<(ReadPattern, Result<PatternReader, String>)> = ReadPattern::ALL
        .iter()
        .map(|&p| (p, PatternReader::open(path, p).map_err(|e| e.to_string())))
        .collect();
    let mut times: Vec<Vec<u64>> = vec![Vec::new(); readers.len()];
    let mut failed: Vec<Option<String>> = readers
        .iter()
        .map(|(_, r)| r.as_ref().err().cloned())
        .collect();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(size as u64 ^ rows);
    let mut out = vec![0u8; size];
    let started = Instant::now();
    let mut rounds = 0;
    while rounds < MAX_ROUNDS && (rounds < MIN_ROUNDS || started.elapsed() < budget) {
        // Rotate who goes first, so no pattern always follows the same one.
        for turn in 0..readers.len() {
            let i = (turn + rounds) % readers.len();
            let (_, Ok(reader)) = &mut readers[i] else {
                continue;
            };
            if failed[i].is_some() {
                continue;
            }
            let offset = rng.random_range(0..rows.max(1)) * size as u64;
            drop_cached_range(&file, offset, size as u64);
            let t = Instant::now();
            let read = reader.read_at(&mut out, offset);
            let ns = t.elapsed().as_nanos() as u64;
            drop_cached_range(&file, offset, size as u64 + READAHEAD_MARGIN);
            match read {
                Ok(()) => times[i].push(ns),
                Err(e) => failed[i] = Some(e.to_string()),
            }
        }
        rounds += 1;
    }
    let trials: Vec<Trial> = readers
        .iter()
        .zip(times.iter_mut().zip(failed))
        .map(|((pattern, _), (times, failed))| {
            times.sort_unstable();
            Trial {
                pattern: *pattern,
                p50_ns: (failed.is_none() && !times.is_empty()).then(|| times[times.len() / 2]),
                failed,
            }
        })
        .collect();
    let chosen = trials
        .iter()
        .filter(|t| t.pattern.eligible())
        .filter_map(|t| Some((t.p50_ns?, t.pattern)))
        .min()
        .map(|(_, p)| p)
        .unwrap_or(ReadPattern::Pread);
    Ok(Calibration {
        chosen,
        trials,
        reads_each: rounds,
        pinned_by: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn every_pattern_is_timed_and_the_fastest_eligible_one_is_chosen() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR").to_owned() + "/target").unwrap();
        let path = dir.path().join("floor.bin");
        let size = 256 << 10;
        let mut f = File::create(&path).unwrap();
        for row in 0..16u8 {
            f.write_all(&vec![row; size]).unwrap();
        }
        drop(f);
        let c = calibrate(&path, size, 16, Duration::from_millis(50)).unwrap();
        assert!(c.reads_each >= MIN_ROUNDS, "{c:?}");
        assert_eq!(c.trials.len(), ReadPattern::ALL.len());
        let eligible: Vec<(u64, ReadPattern)> = c
            .trials
            .iter()
            .filter(|t| t.pattern.eligible())
            .map(|t| (t.p50_ns.expect("a page-cache read always works"), t.pattern))
            .collect();
        assert_eq!(eligible.len(), ReadPattern::ALL.len() - 1);
        assert!(c.chosen.eligible());
        assert_eq!(eligible.iter().min().unwrap().1, c.chosen, "{c:?}");
        let text = c.describe();
        assert!(text.contains(&format!("{} ", c.chosen.name())), "{text}");
        assert!(
            text.contains("(chosen)") && text.contains("cold reads each"),
            "{text}"
        );
        assert!(text.contains("O_DIRECT pread"), "{text}");
    }
}
