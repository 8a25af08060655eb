//! What one file per blob costs the cap beyond its bytes. Every file the fs store opens
//! leaves an inode and a dentry in the kernel's caches, and on cgroup v1 (and v2) that
//! kernel memory is charged to the reader's memory cgroup, beside its page cache: a
//! 1 KiB file also takes a whole 4 KiB page of cache. At 1 KiB under the quick 256 MiB
//! cap the fs store's 786k files would want about 1 GiB of inodes and dentries alone, so
//! the kernel reclaims them while fetches run: the cell measures files under metadata
//! pressure, and a process short of memory there was OOM-killed in a GFP_NOFS allocation
//! (issue 31). This is said with its arithmetic before the cell is measured, and in the
//! report beside the kernel-memory peak the step recorded.

use crate::db::registry::EngineKind;
use crate::records::results::{EngineResult, RunResults};

/// Kernel memory one opened file costs its reader's cgroup: an ext4 inode (1,128 bytes
/// in `ext4_inode_cache`) and a dentry (192). Measured: 100,000 files of 1 KiB opened and
/// read in a fresh v1 memory cgroup raised `memory.kmem.usage_in_bytes` by 136 MB, 1.36 KB
/// a file (this machine, ext4, kernel 6.18, 2026-11-25).
pub const KERNEL_BYTES_PER_FILE: u64 = 1_360;

/// The page cache's unit: a file's last page is cached whole.
const PAGE_BYTES: u64 = 4096;

/// Kernel memory this share of the cap or more is worth saying before the numbers.
const NOTABLE_SHARE: f64 = 0.1;

/// What a one-file-per-blob dataset costs memory once every file was opened.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FilesFootprint {
    pub files: u64,
    /// Inodes and dentries.
    pub kernel_bytes: u64,
    /// The files' pages, each rounded up to a whole page.
    pub cache_bytes: u64,
}

impl FilesFootprint {
    pub fn of(files: u64, blob_bytes: u64) -> Self {
        FilesFootprint {
            files,
            kernel_bytes: files * KERNEL_BYTES_PER_FILE,
            cache_bytes: files * blob_bytes.div_ceil(PAGE_BYTES) * PAGE_BYTES,
        }
    }

    /// The share of its files the cap can hold, inodes and pages together.
    pub fn share_cached(&self, cap_bytes: u64) -> f64 {
        (cap_bytes as f64 / (self.kernel_bytes + self.cache_bytes).max(1) as f64).min(1.0)
    }
}

/// A one-file-per-blob dataset whose files' kernel memory is a notable share of the
/// cap (`report::words::fs_pressure` says it, with the arithmetic).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pressure {
    pub footprint: FilesFootprint,
    /// Bytes of one blob.
    pub blob_bytes: u64,
    pub cap_bytes: u64,
}

impl Pressure {
    /// The inodes and dentries alone want more than the cap: the kernel reclaims them
    /// while fetches run, so the cell measures files under metadata pressure.
    pub fn over_cap(&self) -> bool {
        self.footprint.kernel_bytes > self.cap_bytes
    }

    /// The share of its files that can stay cached.
    pub fn share_cached(&self) -> f64 {
        self.footprint.share_cached(self.cap_bytes)
    }
}

/// Whether the cap is pressed by the files' kernel memory; None where the engine keeps
/// no file per blob, is uncapped, or its inodes are a small share.
pub fn pressure(
    engine: EngineKind,
    files: u64,
    blob_bytes: u64,
    cap: Option<u64>,
) -> Option<Pressure> {
    if !engine.store().is_file_per_blob() {
        return None;
    }
    let cap_bytes = cap?;
    let footprint = FilesFootprint::of(files, blob_bytes);
    ((footprint.kernel_bytes as f64) >= NOTABLE_SHARE * cap_bytes as f64).then_some(Pressure {
        footprint,
        blob_bytes,
        cap_bytes,
    })
}

/// An engine and size measured under that pressure, with the kernel-memory peaks its
/// steps recorded: said once, however many cache states and repeats measured it.
#[derive(Debug, Clone, PartialEq)]
pub struct Pressed {
    /// "fs 1KiB".
    pub who: String,
    pub pressure: Pressure,
    /// (cache state, the kernel memory its step peaked at), where recorded.
    pub peaks: Vec<(&'static str, u64)>,
}

/// Every engine and size of the run whose files' kernel memory pressed its cap.
pub fn pressed(run: &RunResults) -> Vec<Pressed> {
    let mut said: Vec<(EngineKind, u64)> = Vec::new();
    let mut out = Vec::new();
    for r in &run.results {
        if said.contains(&(r.engine, r.size_bytes)) {
            continue;
        }
        let cap = r.cap.as_ref().and_then(|c| c.memory_limit_bytes);
        let Some(pressure) = pressure(r.engine, r.dataset.rows, r.size_bytes, cap) else {
            continue;
        };
        said.push((r.engine, r.size_bytes));
        let same = |o: &&EngineResult| o.engine == r.engine && o.size_bytes == r.size_bytes;
        let peaks = run
            .results
            .iter()
            .filter(same)
            .filter_map(|o| {
                let peak = o.step_memory.as_ref()?.kernel_peak_bytes?;
                Some((o.scenario.cache.name(), peak))
            })
            .collect();
        out.push(Pressed {
            who: format!("{} {}", r.engine, r.size),
            pressure,
            peaks,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_small_file_costs_a_whole_page_and_its_inode() {
        let f = FilesFootprint::of(786_432, 1024);
        assert_eq!(f.kernel_bytes, 786_432 * 1_360);
        assert_eq!(f.cache_bytes, 786_432 * 4096);
        let f = FilesFootprint::of(10, 4097);
        assert_eq!(f.cache_bytes, 10 * 8192);
        // 256 MiB over 786k files of 4 KiB + 1.36 KB: about 6% of them.
        let share = FilesFootprint::of(786_432, 1024).share_cached(256 * MIB);
        assert!((0.06..0.07).contains(&share), "{share}");
    }

    #[test]
    fn only_the_fs_store_under_a_cap_its_inodes_press_is_named() {
        let fs = "fs".parse::<EngineKind>().unwrap();
        let sqlite = "sqlite".parse::<EngineKind>().unwrap();
        let quick_1kib = pressure(fs, 786_432, 1024, Some(256 * MIB)).expect("pressed");
        assert_eq!(quick_1kib.footprint.kernel_bytes, 786_432 * 1_360);
        assert!(quick_1kib.over_cap(), "{quick_1kib:?}");
        assert_eq!(pressure(sqlite, 786_432, 1024, Some(256 * MIB)), None);
        assert_eq!(pressure(fs, 786_432, 1024, None), None, "uncapped");
        // Quick 64 KiB: 12,288 files, 16 MB of inodes, 6% of 256 MiB: not worth a note.
        assert_eq!(pressure(fs, 12_288, 64 << 10, Some(256 * MIB)), None);
        // Full 1 KiB under 1 GiB: 3.1M files, 4.3 GB.
        assert!(pressure(fs, 3 << 20, 1024, Some(1 << 30)).is_some());
        // Full 64 KiB under 1 GiB: 49k files, 67 MB of inodes, 6% of the cap: pressed
        // no more than any store's index would.
        assert_eq!(pressure(fs, 49_152, 64 << 10, Some(1 << 30)), None);
    }
}
