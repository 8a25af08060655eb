//! The disk's own state, probed: O_DIRECT random reads of one block size from a
//! dataset file, for a short time, before and after each engine. The disk under
//! these machines changes by an order of magnitude within an hour (64 KiB reads
//! with p99 0.5 ms, then 33 ms 45 minutes later), so an engine's figures mean
//! little without the disk's figures of the same minutes. O_DIRECT bypasses the
//! page cache: the probe neither hits the cache nor fills it (nothing is charged to
//! the cap). A filesystem without O_DIRECT (tmpfs) makes the probe unavailable.

use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

const ALIGN: u64 = 4096;
/// The largest read: a 32 MiB class reads 4 MiB blocks, so a short probe has
/// enough reads for a p90.
pub const MAX_BLOCK: u64 = 4 << 20;

/// The probe's own file in the data directory, where no local dataset of a size class
/// is there to read (a run of servers alone, or the servers' datasets measured before
/// the floor's was loaded: those cells said "disk probe unavailable"). 16 of the largest
/// blocks, written once with bytes no disk compresses and kept for later runs.
pub const OWN_FILE: &str = "disk-probe.bin";
const OWN_FILE_BYTES: u64 = 16 * MAX_BLOCK;

/// The probe's own file under `data_dir`, written (synced, then renamed into place)
/// where it is not there whole.
pub fn own_file(data_dir: &Path) -> Result<std::path::PathBuf, String> {
    use std::io::Write;
    let path = data_dir.join(OWN_FILE);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == OWN_FILE_BYTES) {
        return Ok(path);
    }
    let part = data_dir.join(format!("{OWN_FILE}.part"));
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(data_dir)?;
        let mut f = File::create(&part)?;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x0d15_c0de);
        let mut chunk = vec![0u8; 1 << 20];
        for _ in 0..OWN_FILE_BYTES / chunk.len() as u64 {
            rng.fill_bytes(&mut chunk);
            f.write_all(&chunk)?;
        }
        f.sync_all()?;
        std::fs::rename(&part, &path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&part);
        format!("cannot write the probe's own file {}: {e}", path.display())
    })?;
    Ok(path)
}

/// One probe: random O_DIRECT reads of `block_bytes` from `file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskProbe {
    pub file: String,
    pub block_bytes: u64,
    pub reads: u64,
    pub seconds: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
}

impl DiskProbe {
    /// A probe of `file` begun at `started`, from its reads' latencies.
    fn of(file: String, block_bytes: u64, started: Instant, latencies: &Histogram<u64>) -> Self {
        let p = crate::stats::Percentiles::of(latencies);
        Self {
            file,
            block_bytes,
            reads: p.count,
            seconds: started.elapsed().as_secs_f64(),
            p50_ns: p.p50_ns,
            p90_ns: p.p90_ns,
            p99_ns: p.p99_ns,
        }
    }
}

/// The probes around one engine's measurement; each a probe or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskProbes {
    pub before: Result<DiskProbe, String>,
    pub after: Result<DiskProbe, String>,
    /// Right after `after`, the engine's own dataset (`probe_files`): whether this
    /// disk served its bytes as fast as the floor's file in the same minute (a VM's
    /// disk once read a dataset just written several times slower than one read
    /// before). None for the floor (its file is `after`'s) and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_after: Option<Result<DiskProbe, String>>,
}

/// Probes whose p50 moved by more than this factor say the disk changed.
pub const CHANGED_FACTOR: f64 = 2.0;

/// An engine's own files read faster than the floor's file by more than this factor
/// (p50, the same minute): the floor was no floor for it then.
pub const OWN_FASTER_FACTOR: f64 = 1.5;

impl DiskProbes {
    /// "O_DIRECT 4KiB p50 52.1µs on its own files against 230.4µs on the floor's,
    /// just after its cell", where both were probed.
    pub fn own_against_floor(&self) -> Option<(f64, String)> {
        let (Ok(floor), Some(Ok(own))) = (&self.after, &self.own_after) else {
            return None;
        };
        let ratio = floor.p50_ns.max(1) as f64 / own.p50_ns.max(1) as f64;
        Some((
            ratio,
            format!(
                "O_DIRECT {} reads p50 {} on its own files against {} on the floor's, just after its cell",
                crate::size::format_bytes(own.block_bytes),
                crate::stats::format_ns(own.p50_ns as f64),
                crate::stats::format_ns(floor.p50_ns as f64)
            ),
        ))
    }

    /// "disk p50 0.41ms → 2.3ms (5.6x) during the measurement", when it moved by
    /// more than `CHANGED_FACTOR` either way; None when steady or not probed.
    pub fn changed(&self) -> Option<String> {
        let (Ok(b), Ok(a)) = (&self.before, &self.after) else {
            return None;
        };
        let ratio = a.p50_ns.max(1) as f64 / b.p50_ns.max(1) as f64;
        (!(1.0 / CHANGED_FACTOR..=CHANGED_FACTOR).contains(&ratio)).then(|| {
            format!(
                "the disk changed during the measurement: {} reads p50 {} before, {} after ({ratio:.1}x)",
                crate::size::format_bytes(b.block_bytes),
                crate::stats::format_ns(b.p50_ns as f64),
                crate::stats::format_ns(a.p50_ns as f64)
            )
        })
    }
}

/// The block a size class probes with: the blob size rounded up to 4 KiB, at most 4 MiB.
pub fn block_for(size_bytes: u64) -> u64 {
    size_bytes.div_ceil(ALIGN).clamp(1, MAX_BLOCK / ALIGN) * ALIGN
}

/// Read random aligned blocks of `block` bytes from `path` with O_DIRECT for
/// `budget` (at least 5 reads). Err says why not.
pub fn probe(path: &Path, block: u64, budget: Duration, seed: u64) -> Result<DiskProbe, String> {
    let started = Instant::now();
    let latencies = read_randomly(path, block, started, budget, seed)?;
    Ok(DiskProbe::of(
        path.display().to_string(),
        block,
        started,
        &latencies,
    ))
}

/// Random O_DIRECT reads of `block` bytes from `files` (the files in a shuffled order,
/// each once before any again, at a random aligned offset; a file shorter than a block is read
/// from its start, a short read) for `budget`, at least 5 reads: the dataset's own
/// bytes, where `probe` reads the floor's file. Opening the files is not timed.
pub fn probe_files(
    files: &[std::path::PathBuf],
    block: u64,
    budget: Duration,
    seed: u64,
) -> Result<DiskProbe, String> {
    let opened: Vec<(File, u64)> = files
        .iter()
        .map(|path| open_direct(path))
        .filter(|f: &Result<(File, u64), String>| f.as_ref().map_or(true, |(_, len)| *len > 0))
        .collect::<Result<_, String>>()?;
    if opened.is_empty() {
        return Err("no file of the dataset holds a byte to read".into());
    }
    let mut raw = vec![0u8; (block + ALIGN) as usize];
    let skew = raw.as_ptr().align_offset(ALIGN as usize);
    let buf = &mut raw[skew..skew + block as usize];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut latencies = crate::stats::new_histogram();
    let started = Instant::now();
    // Files in a shuffled order, each read once while they last: a few files read
    // again and again would be served by a device's or host's cache.
    let mut order: Vec<usize> = (0..opened.len()).collect();
    let mut next = order.len();
    while started.elapsed() < budget || latencies.len() < 5 {
        if next == order.len() {
            for i in (1..order.len()).rev() {
                order.swap(i, rng.random_range(0..=i));
            }
            next = 0;
        }
        let (file, len) = &opened[order[next]];
        next += 1;
        let slots = len.saturating_sub(block) / ALIGN + 1;
        let offset = rng.random_range(0..slots) * ALIGN;
        let t = Instant::now();
        let n = file
            .read_at(buf, offset)
            .map_err(|e| format!("O_DIRECT read of the dataset's files failed: {e}"))?;
        let took = t.elapsed();
        if n == 0 {
            return Err(format!("a file of the dataset read nothing at {offset}"));
        }
        latencies.saturating_record(took.as_nanos().max(1) as u64);
    }
    let file = match files {
        [one] => one.display().to_string(),
        many => format!("{} of the dataset's files", many.len()),
    };
    Ok(DiskProbe::of(file, block, started, &latencies))
}

/// The disk's own random-read throughput at one block size and queue depth: the
/// physical limit of a load with that many clients (each client has one fetch in
/// flight, so N clients keep at most N reads queued).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskThroughput {
    pub file: String,
    pub block_bytes: u64,
    pub queue_depth: u32,
    pub reads: u64,
    pub seconds: f64,
    pub reads_per_s: f64,
    pub mb_per_s: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
}

/// `queue_depth` threads, each reading random aligned blocks of `block` bytes from
/// `path` with O_DIRECT (its own descriptor, buffer and seeded offsets) for `budget`.
pub fn throughput(
    path: &Path,
    block: u64,
    queue_depth: u32,
    budget: Duration,
    seed: u64,
) -> Result<DiskThroughput, String> {
    let started = Instant::now();
    let threads: Vec<Result<Histogram<u64>, String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..u64::from(queue_depth.max(1)))
            .map(|i| {
                scope.spawn(move || {
                    read_randomly(path, block, started, budget, seed.wrapping_add(i))
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err("a reader panicked".into())))
            .collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    let mut all = crate::stats::new_histogram();
    for latencies in threads {
        all.add(latencies?).map_err(|e| e.to_string())?;
    }
    let p = crate::stats::Percentiles::of(&all);
    Ok(DiskThroughput {
        file: path.display().to_string(),
        block_bytes: block,
        queue_depth,
        reads: p.count,
        seconds,
        reads_per_s: p.count as f64 / seconds,
        mb_per_s: (p.count * block) as f64 / seconds / 1e6,
        p50_ns: p.p50_ns,
        p99_ns: p.p99_ns,
    })
}

/// `path` opened for O_DIRECT reads, and its length.
fn open_direct(path: &Path) -> Result<(File, u64), String> {
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| format!("cannot open {} with O_DIRECT: {e}", path.display()))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot stat {}: {e}", path.display()))?
        .len();
    Ok((file, len))
}

/// Random aligned O_DIRECT reads of `block` bytes from `path` until `budget` after
/// `started` (at least 5), each read's latency recorded.
fn read_randomly(
    path: &Path,
    block: u64,
    started: Instant,
    budget: Duration,
    seed: u64,
) -> Result<Histogram<u64>, String> {
    let (file, len) = open_direct(path)?;
    if len < block {
        return Err(format!(
            "{} holds {len} bytes, less than one {block}-byte block",
            path.display()
        ));
    }
    // O_DIRECT needs a buffer aligned to the block device's sector size.
    let mut raw = vec![0u8; (block + ALIGN) as usize];
    let skew = raw.as_ptr().align_offset(ALIGN as usize);
    let buf = &mut raw[skew..skew + block as usize];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut latencies = crate::stats::new_histogram();
    let slots = (len - block) / ALIGN + 1;
    while started.elapsed() < budget || latencies.len() < 5 {
        let offset = rng.random_range(0..slots) * ALIGN;
        let t = Instant::now();
        let n = file
            .read_at(buf, offset)
            .map_err(|e| format!("O_DIRECT read of {} failed: {e}", path.display()))?;
        let took = t.elapsed();
        if n == 0 {
            return Err(format!("{} read nothing at {offset}", path.display()));
        }
        latencies.saturating_record(took.as_nanos().max(1) as u64);
    }
    Ok(latencies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probes_own_file_is_written_once_whole_and_read_like_a_dataset() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("not-made-yet");
        let path = own_file(&data).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), OWN_FILE_BYTES);
        assert!(!data.join(format!("{OWN_FILE}.part")).exists());
        // Kept: the next cell or run reads the same file, not a new one.
        assert_eq!(own_file(&data).unwrap(), path);
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            meta.modified().unwrap()
        );
        // Cut short (a kill while it was written elsewhere): written again whole.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        assert_eq!(
            std::fs::metadata(own_file(&data).unwrap()).unwrap().len(),
            OWN_FILE_BYTES
        );
        match probe(&path, MAX_BLOCK, Duration::from_millis(50), 7) {
            Ok(p) => assert!(p.reads >= 5, "{p:?}"),
            // tmpfs has no O_DIRECT: said, as for a dataset's file.
            Err(why) => assert!(why.contains("O_DIRECT"), "{why}"),
        }
    }

    #[test]
    fn blocks_follow_the_size_class_up_to_4_mib() {
        assert_eq!(block_for(1024), 4096);
        assert_eq!(block_for(64 << 10), 64 << 10);
        assert_eq!(block_for(32 << 20), 4 << 20);
    }

    #[test]
    fn a_disk_that_moved_more_than_twofold_is_flagged() {
        let p = |p50_ns| DiskProbe {
            file: "f".into(),
            block_bytes: 65536,
            reads: 100,
            seconds: 1.0,
            p50_ns,
            p90_ns: p50_ns,
            p99_ns: p50_ns,
        };
        let steady = DiskProbes {
            before: Ok(p(400_000)),
            after: Ok(p(600_000)),
            own_after: None,
        };
        assert_eq!(steady.changed(), None);
        let moved = DiskProbes {
            before: Ok(p(400_000)),
            after: Ok(p(2_300_000)),
            own_after: None,
        };
        let why = moved.changed().unwrap();
        assert!(why.contains("400.0µs before, 2.30ms after (5.8x)"), "{why}");
        let unknown = DiskProbes {
            before: Err("tmpfs".into()),
            after: Ok(p(1)),
            own_after: None,
        };
        assert_eq!(unknown.changed(), None);
    }

    #[test]
    fn an_engine_s_own_files_are_set_against_the_floor_s_file() {
        let p = |p50_ns| DiskProbe {
            file: "f".into(),
            block_bytes: 4096,
            reads: 100,
            seconds: 1.0,
            p50_ns,
            p90_ns: p50_ns,
            p99_ns: p50_ns,
        };
        let slow_floor = DiskProbes {
            before: Ok(p(40_000)),
            after: Ok(p(230_000)),
            own_after: Some(Ok(p(50_000))),
        };
        let (ratio, line) = slow_floor.own_against_floor().unwrap();
        assert!((ratio - 4.6).abs() < 1e-9, "{ratio}");
        assert!(
            line.contains("p50 50.0µs on its own files against 230.0µs"),
            "{line}"
        );
        let floor_itself = DiskProbes {
            own_after: None,
            ..slow_floor
        };
        assert_eq!(floor_itself.own_against_floor(), None);
    }
}
