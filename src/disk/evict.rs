//! Cold start: push a dataset's pages out of the page cache before measuring it.
//!
//! A page is charged to the cgroup that first touched it. Pages left cached by a
//! loader (or an earlier run) in another cgroup would serve the capped reader for
//! free and make the cap a lie, so every file is flushed (DONTNEED skips dirty
//! pages) and dropped with `posix_fadvise(DONTNEED)` before measuring.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::size::format_bytes_approx;

/// What an eviction did, recorded with the result.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct EvictionReport {
    pub method: String,
    pub files: u64,
    pub bytes: u64,
    /// Bytes of the dataset still in the page cache afterwards (mincore), where checked.
    pub resident_after_bytes: Option<u64>,
    pub seconds: f64,
    /// How the cap's whole page cache was emptied first (pages of other datasets), if it could be.
    #[serde(default)]
    pub cgroup_reclaim: Option<String>,
    /// Page cache still charged to the measuring cgroup after eviction, where readable.
    #[serde(default)]
    pub cgroup_cache_after_bytes: Option<u64>,
    /// Kernel memory charged to the measuring cgroup before it was emptied (the
    /// dentries and inodes of the datasets measured earlier) and after, where readable
    /// (`cap::cgroup_kernel_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_kernel_before_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_kernel_after_bytes: Option<u64>,
}

/// Kernel memory left charged to the cap after it was emptied beyond this share of
/// the cap is said in the report: the engine measured had that much less memory.
pub const KERNEL_LEFT_SHARE: f64 = 0.05;

impl EvictionReport {
    /// "210MiB of kernel memory (... 1.2GiB before it was emptied)": where what stayed
    /// charged to the cap of `cap_bytes` is more than `KERNEL_LEFT_SHARE` of it.
    pub fn kernel_left(&self, cap_bytes: Option<u64>) -> Option<String> {
        let after = self.cgroup_kernel_after_bytes?;
        let cap = cap_bytes?;
        (after as f64 > cap as f64 * KERNEL_LEFT_SHARE).then(|| {
            let before = self
                .cgroup_kernel_before_bytes
                .map(|b| format!(", {} before it was emptied", format_bytes_approx(b)))
                .unwrap_or_default();
            format!(
                "{} of kernel memory (dentries and inodes of files opened earlier{before}) stayed charged to the {} cap while it was measured",
                format_bytes_approx(after),
                crate::size::format_bytes(cap)
            )
        })
    }
}

/// Flush and drop one file's cached pages. Returns its size.
pub fn evict_file(path: &Path) -> Result<u64> {
    evict(path, true)
}

/// Drop the cached pages of a file already flushed (see `sync_filesystem`).
pub fn evict_flushed_file(path: &Path) -> Result<u64> {
    evict(path, false)
}

/// Flush every dirty page of the filesystem holding `dir` (one `syncfs`), so a
/// tree of many small files can then be evicted without a sync per file.
pub fn sync_filesystem(dir: &Path) -> Result<()> {
    let d = File::open(dir).with_context(|| format!("cannot open {}", dir.display()))?;
    // SAFETY: plain syscall on an fd we own.
    if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
        anyhow::bail!(
            "syncfs on {} failed: {}",
            dir.display(),
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

fn evict(path: &Path, flush: bool) -> Result<u64> {
    let file = File::options().read(true).open(path).with_context(|| {
        format!(
            "cannot open {} to evict it from the page cache",
            path.display()
        )
    })?;
    if flush {
        file.sync_data()
            .with_context(|| format!("cannot flush {}", path.display()))?;
    }
    // SAFETY: plain syscall on an fd we own.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        anyhow::bail!(
            "posix_fadvise(DONTNEED) failed on {}: {}",
            path.display(),
            std::io::Error::from_raw_os_error(rc)
        );
    }
    Ok(file.metadata()?.len())
}

/// Drop the page-aligned range around `[offset, offset + len)` of an open file from
/// the page cache (one blob, where `evict_file` drops a whole dataset). A failure
/// leaves the pages cached: the caller's next read is then a hit, never wrong.
pub fn drop_cached_range(file: &File, offset: u64, len: u64) {
    let page = 4096;
    let start = offset / page * page;
    let end = (offset + len).div_ceil(page) * page;
    // SAFETY: plain syscall on an fd the caller owns.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            start as libc::off_t,
            (end - start) as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        );
    }
}

/// Bytes of `path` resident in the page cache right now (mmap + mincore).
pub fn resident_bytes(path: &Path) -> Result<u64> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = file.metadata()?.len() as usize;
    if len == 0 {
        return Ok(0);
    }
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let mut resident = 0u64;
    // Map in 1 GiB windows so the map itself stays small on huge files.
    let window = 1usize << 30;
    let mut vec = vec![0u8; window / page];
    let mut offset = 0usize;
    while offset < len {
        let this = window.min(len - offset);
        // SAFETY: a read-only shared mapping of a file we opened; never dereferenced.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                this,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if addr == libc::MAP_FAILED {
            anyhow::bail!(
                "mmap of {} failed: {}",
                path.display(),
                std::io::Error::last_os_error()
            );
        }
        let pages = this.div_ceil(page);
        let rc = unsafe { libc::mincore(addr, this, vec.as_mut_ptr()) };
        let err = std::io::Error::last_os_error();
        unsafe { libc::munmap(addr, this) };
        if rc != 0 {
            anyhow::bail!("mincore on {} failed: {err}", path.display());
        }
        resident += vec[..pages].iter().filter(|&&b| b & 1 == 1).count() as u64 * page as u64;
        offset += this;
    }
    Ok(resident.min(len as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_memory_left_in_the_cap_is_said_past_a_twentieth_of_it() {
        let cap = Some(1u64 << 30);
        let left = |before: Option<u64>, after: Option<u64>| EvictionReport {
            cgroup_kernel_before_bytes: before,
            cgroup_kernel_after_bytes: after,
            ..Default::default()
        };
        // 10 MiB of 1 GiB: said nowhere; not readable: nothing claimed.
        assert_eq!(left(Some(134 << 20), Some(10 << 20)).kernel_left(cap), None);
        assert_eq!(left(None, None).kernel_left(cap), None);
        assert_eq!(left(None, Some(900 << 20)).kernel_left(None), None);
        let said = left(Some(1200 << 20), Some(200 << 20))
            .kernel_left(cap)
            .expect("a fifth of the cap");
        assert!(said.starts_with("200.00MiB of kernel memory"), "{said}");
        assert!(
            said.contains("1.17GiB before") && said.contains("1GiB cap"),
            "{said}"
        );
    }

    #[test]
    fn eviction_empties_the_page_cache_for_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blob");
        std::fs::write(&path, vec![1u8; 4 << 20]).unwrap();
        std::fs::read(&path).unwrap();
        assert!(
            resident_bytes(&path).unwrap() > 0,
            "freshly written file should be cached"
        );
        assert_eq!(evict_file(&path).unwrap(), 4 << 20);
        let left = resident_bytes(&path).unwrap();
        assert!(left < 64 << 10, "{left} bytes still cached after eviction");
    }
}
