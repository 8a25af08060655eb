//! Bytes this process read from storage, from `/proc/self/io` `read_bytes`.
//!
//! `read_bytes` counts reads that reached the block layer (page-cache misses and
//! the readahead they trigger), summed over all threads of the process — SQLite
//! runs on sqlx's worker thread and is counted too. A page-cache hit adds nothing.
//! Where the kernel does not provide the file the counter is "unavailable", never 0.
//!
//! A server reads in its own container: there the counter sums `/proc/<pid>/io`
//! of the container's processes (host pids, from Docker's `top`), which counts
//! O_DIRECT reads too (InnoDB), checked on this project's machines.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// Storage reads of one or more processes, summed.
pub struct DiskReadCounter {
    files: Vec<File>,
    /// Last value read per file: a process that exits keeps its final count
    /// instead of making the sum jump backwards (PostgreSQL backends come and go).
    last: Vec<u64>,
    buf: [u8; 512],
    /// What is counted, for the results: "/proc/self/io", or which processes.
    pub source: String,
}

impl DiskReadCounter {
    /// This process (and all its threads). Err says why it is unavailable.
    pub fn open_self() -> Result<Self, String> {
        let file = File::open("/proc/self/io")
            .map_err(|e| format!("/proc/self/io cannot be opened ({e})"))?;
        Self::from_files(vec![file], "/proc/self/io".into())
    }

    /// Other processes by pid, e.g. a server container's processes seen from the host.
    /// Reading another process's counters needs the same pid namespace and ptrace rights.
    pub fn open_pids(pids: &[u32], what: &str) -> Result<Self, String> {
        if pids.is_empty() {
            return Err(format!("{what}: no processes"));
        }
        let files = pids
            .iter()
            .map(|pid| {
                File::open(format!("/proc/{pid}/io"))
                    .map_err(|e| format!("/proc/{pid}/io of {what} cannot be opened ({e})"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_files(
            files,
            format!(
                "/proc/<pid>/io of {} process{} of {what}",
                pids.len(),
                if pids.len() == 1 { "" } else { "es" }
            ),
        )
    }

    fn from_files(files: Vec<File>, source: String) -> Result<Self, String> {
        let mut counter = Self {
            last: vec![0; files.len()],
            files,
            buf: [0; 512],
            source,
        };
        for i in 0..counter.files.len() {
            let value = counter
                .read_one(i)
                .ok_or_else(|| {
                    format!(
                        "{}: read_bytes is not readable (another user's counters need root with CAP_SYS_PTRACE)",
                        counter.source
                    )
                })?;
            counter.last[i] = value;
        }
        Ok(counter)
    }

    fn read_one(&mut self, i: usize) -> Option<u64> {
        let n = self.files[i].read_at(&mut self.buf, 0).ok()?;
        parse_read_bytes(&self.buf[..n])
    }

    /// Current `read_bytes`, summed; re-reads the open files (no allocation).
    /// None only when no file can be read any more.
    pub fn read_bytes(&mut self) -> Option<u64> {
        let mut sum = 0u64;
        let mut any = false;
        for i in 0..self.files.len() {
            if let Some(value) = self.read_one(i) {
                self.last[i] = value;
                any = true;
            }
            sum += self.last[i];
        }
        any.then_some(sum)
    }
}

fn parse_read_bytes(text: &[u8]) -> Option<u64> {
    const KEY: &[u8] = b"\nread_bytes: ";
    let start = text.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let mut value: u64 = 0;
    let mut digits = 0;
    for &b in &text[start..] {
        if !b.is_ascii_digit() {
            break;
        }
        value = value * 10 + u64::from(b - b'0');
        digits += 1;
    }
    (digits > 0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_proc_format() {
        let text =
            b"rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 123456\nwrite_bytes: 0\n";
        assert_eq!(parse_read_bytes(text), Some(123456));
        assert_eq!(parse_read_bytes(b"rchar: 1\n"), None);
    }

    #[test]
    fn counts_a_real_storage_read() {
        // A file written, flushed and evicted must be read from storage again.
        // This thread's counter, the same format as the process's: other tests read
        // from disk in parallel in this process (the floor's calibration does).
        let Ok(mut counter) = File::open("/proc/thread-self/io")
            .map_err(|e| e.to_string())
            .and_then(|f| DiskReadCounter::from_files(vec![f], "/proc/thread-self/io".into()))
        else {
            say!("skipped: /proc/thread-self/io is not available here");
            return;
        };
        assert!(
            DiskReadCounter::open_self().is_ok(),
            "/proc/self/io opens where the thread's does"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        crate::disk::evict::evict_file(&path).unwrap();
        let before = counter.read_bytes().unwrap();
        let data = std::fs::read(&path).unwrap();
        let after = counter.read_bytes().unwrap();
        assert_eq!(data.len(), 1 << 20);
        assert!(
            after - before >= 1 << 20,
            "read {} bytes from disk",
            after - before
        );
        let again_before = counter.read_bytes().unwrap();
        std::fs::read(&path).unwrap();
        assert_eq!(
            counter.read_bytes().unwrap(),
            again_before,
            "second read must be a cache hit"
        );
    }
}
