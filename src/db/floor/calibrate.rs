//! Which read pattern this disk serves fastest at one size. Every pattern reads
//! random blobs of the floor's own file from a cold cache, taking turns round by
//! round (so a disk that slows down mid-way slows every pattern alike), until each
//! has `MIN_ROUNDS` reads and the time budget is spent. The floor then reads with
//! the eligible pattern of lowest median (`ReadPattern::eligible`) only where that
//! median beats plain `pread`'s beyond noise (their 95% intervals apart); where they
//! overlap it keeps `pread` and says so: a noisy disk (p99 0.5 to 33 ms within an hour
//! here) otherwise picks a different pattern run to run for a difference it cannot show.

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use super::pattern::{PatternReader, ReadPattern};
use crate::disk::evict::drop_cached_range;
use crate::stats::format_ns;

/// Reads per pattern at least: 11 give the median a 95% interval, from the 2nd to the
/// 10th read (`median_interval`); 5 had none.
pub const MIN_ROUNDS: usize = 11;
/// Reads per pattern at most, where reads are fast (101 reads of 1 KiB take about
/// 0.1 s for all five patterns).
pub const MAX_ROUNDS: usize = 101;
/// The confidence of the median intervals a choice must stand on.
const CONFIDENCE: f64 = 0.95;
/// Readahead a read may have started beyond the blob, dropped after it so the
/// next pattern's read (and the measurement after) finds the cache as it was.
const READAHEAD_MARGIN: u64 = 16 << 20;

/// One pattern's cold reads.
#[derive(Debug, Clone)]
pub struct Trial {
    pub pattern: ReadPattern,
    /// Median of its cold reads; None where it could not read (`failed` says why).
    pub p50_ns: Option<u64>,
    /// The median's interval at `CONFIDENCE` (order statistics, no shape assumed);
    /// None with too few reads.
    pub p50_interval_ns: Option<(u64, u64)>,
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
    /// Why `chosen` is plain `pread` although another pattern's median was lower: the
    /// difference was within noise, or could not be judged.
    pub kept_pread: Option<String>,
}

impl Calibration {
    /// A pattern chosen by the user, not timed.
    pub fn pinned(pattern: ReadPattern, by: &'static str) -> Self {
        Self {
            chosen: pattern,
            trials: Vec::new(),
            reads_each: 0,
            pinned_by: Some(by),
            kept_pread: None,
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
        let kept = self
            .kept_pread
            .as_ref()
            .map(|why| format!("; {why}"))
            .unwrap_or_default();
        format!(
            "{}; median of {} cold reads each{kept}",
            trials.join(", "),
            self.reads_each
        )
    }
}

/// The interval of the median of `sorted` at `confidence`, from order statistics:
/// [x_j, x_(n-1-j)] covers the median with probability 1 - 2 P(B <= j), B ~ Bin(n, 1/2),
/// for the largest j that keeps that at `confidence` or more. None under 6 reads (the
/// widest interval, all of them, covers less than 95% of the time).
pub fn median_interval(sorted: &[u64], confidence: f64) -> Option<(u64, u64)> {
    let n = sorted.len();
    let mut cdf = 0.0; // P(B <= j)
    let mut term = 0.5f64.powi(n as i32); // P(B = j), from j = 0
    let mut found = None;
    for j in 0..n / 2 {
        cdf += term;
        if 1.0 - 2.0 * cdf < confidence {
            break;
        }
        found = Some(j);
        term *= (n - j) as f64 / (j + 1) as f64;
    }
    found.map(|j| (sorted[j], sorted[n - 1 - j]))
}

/// The pattern to read with: the eligible one of lowest median where it beats plain
/// `pread` beyond noise, else `pread`, with why it was kept where another looked faster.
fn choose(trials: &[Trial]) -> (ReadPattern, Option<String>) {
    let fastest = trials
        .iter()
        .filter(|t| t.pattern.eligible())
        .filter_map(|t| Some((t.p50_ns?, t)))
        .min_by_key(|(p50, _)| *p50);
    let Some((_, fastest)) = fastest else {
        return (ReadPattern::Pread, None);
    };
    let pread = trials
        .iter()
        .find(|t| t.pattern == ReadPattern::Pread && t.p50_ns.is_some());
    let Some(pread) = pread else {
        // Plain pread could not read: nothing to keep.
        return (fastest.pattern, None);
    };
    if fastest.pattern == ReadPattern::Pread {
        return (ReadPattern::Pread, None);
    }
    let show = |t: &Trial| match t.p50_interval_ns {
        Some((lo, hi)) => format!("{}–{}", format_ns(lo as f64), format_ns(hi as f64)),
        None => "no interval".into(),
    };
    match (fastest.p50_interval_ns, pread.p50_interval_ns) {
        (Some((_, fast_hi)), Some((pread_lo, _))) if fast_hi < pread_lo => (fastest.pattern, None),
        (Some(_), Some(_)) => (
            ReadPattern::Pread,
            Some(format!(
                "pread kept: {} was faster by its median but within noise (95% intervals of the medians {} and {} overlap)",
                fastest.pattern.name(),
                show(fastest),
                show(pread)
            )),
        ),
        _ => (
            ReadPattern::Pread,
            Some(format!(
                "pread kept: too few reads to tell {} from it beyond noise",
                fastest.pattern.name()
            )),
        ),
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
            let read = failed.is_none() && !times.is_empty();
            Trial {
                pattern: *pattern,
                p50_ns: read.then(|| times[times.len() / 2]),
                p50_interval_ns: read.then(|| median_interval(times, CONFIDENCE)).flatten(),
                failed,
            }
        })
        .collect();
    let (chosen, kept_pread) = choose(&trials);
    Ok(Calibration {
        chosen,
        trials,
        reads_each: rounds,
        pinned_by: None,
        kept_pread,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn every_pattern_is_timed_and_the_fastest_eligible_one_is_chosen() {
        // Made if missing: a build with CARGO_TARGET_DIR elsewhere has no target/ here.
        let under = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
        std::fs::create_dir_all(&under).unwrap();
        let dir = tempfile::tempdir_in(&under).unwrap();
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
        // The fastest by median, or pread kept saying why.
        let fastest = eligible.iter().min().unwrap().1;
        match &c.kept_pread {
            None => assert_eq!(fastest, c.chosen, "{c:?}"),
            Some(why) => {
                assert_eq!(c.chosen, ReadPattern::Pread, "{c:?}");
                assert!(why.contains(fastest.name()), "{why}");
            }
        }
        let text = c.describe();
        assert!(text.contains(&format!("{} ", c.chosen.name())), "{text}");
        assert!(
            text.contains("(chosen)") && text.contains("cold reads each"),
            "{text}"
        );
        assert!(text.contains("O_DIRECT pread"), "{text}");
    }

    #[test]
    fn the_median_interval_covers_95_percent_by_order_statistics() {
        let sorted: Vec<u64> = (1..=11).collect();
        // n = 11: [x_2, x_8] (0-based) covers 1 - 2 * 67/2048 = 93.5%, [x_1, x_9] 98.8%.
        assert_eq!(median_interval(&sorted, 0.95), Some((2, 10)));
        assert_eq!(median_interval(&sorted, 0.90), Some((3, 9)));
        // n = 6: all of them cover 1 - 2/64 = 96.9%; n = 5 only 93.75%.
        assert_eq!(median_interval(&sorted[..6], 0.95), Some((1, 6)));
        assert_eq!(median_interval(&sorted[..5], 0.95), None);
        let many: Vec<u64> = (0..101).collect();
        let (lo, hi) = median_interval(&many, 0.95).unwrap();
        assert!(lo < 50 && hi > 50 && hi - lo < 24, "{lo}..{hi}");
    }

    fn trial(pattern: ReadPattern, times: &[u64]) -> Trial {
        let mut times = times.to_vec();
        times.sort_unstable();
        Trial {
            pattern,
            p50_ns: Some(times[times.len() / 2]),
            p50_interval_ns: median_interval(&times, CONFIDENCE),
            failed: None,
        }
    }

    #[test]
    fn another_pattern_is_chosen_only_beyond_noise() {
        let pread = trial(
            ReadPattern::Pread,
            &[100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110],
        );
        // Every read 20 faster: the intervals are apart.
        let apart = trial(
            ReadPattern::Pieces,
            &[80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90],
        );
        assert_eq!(choose(&[pread.clone(), apart]), (ReadPattern::Pieces, None));
        // Its median lower, but its reads spread over pread's: pread kept, said.
        let noisy = trial(
            ReadPattern::Pieces,
            &[60, 70, 95, 98, 100, 102, 104, 106, 150, 200, 300],
        );
        let (chosen, why) = choose(&[pread.clone(), noisy]);
        assert_eq!(chosen, ReadPattern::Pread);
        let why = why.expect("said why");
        assert!(
            why.contains("4KiB preads in order") && why.contains("overlap"),
            "{why}"
        );
        // Too few reads for an interval.
        let few = trial(ReadPattern::WillNeed, &[10, 11, 12]);
        let (chosen, why) = choose(&[pread.clone(), few]);
        assert_eq!(chosen, ReadPattern::Pread);
        assert!(why.unwrap().contains("too few reads"));
        // O_DIRECT is never chosen, however fast; pread fastest needs no word.
        let direct = trial(ReadPattern::Direct, &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
        assert_eq!(choose(&[pread, direct]), (ReadPattern::Pread, None));
    }
}
