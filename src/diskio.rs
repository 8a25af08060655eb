//! Bytes this process read from storage, from `/proc/self/io` `read_bytes`.
//!
//! `read_bytes` counts reads that reached the block layer (page-cache misses and
//! the readahead they trigger), summed over all threads of the process — SQLite
//! runs on sqlx's worker thread and is counted too. A page-cache hit adds nothing.
//! Where the kernel does not provide the file the counter is "unavailable", never 0.

use std::fs::File;
use std::os::unix::fs::FileExt;

pub struct DiskReadCounter {
    file: File,
    buf: [u8; 512],
}

impl DiskReadCounter {
    /// None when `/proc/self/io` is missing or unreadable (no task I/O accounting).
    pub fn open() -> Option<Self> {
        let file = File::open("/proc/self/io").ok()?;
        let mut counter = Self {
            file,
            buf: [0; 512],
        };
        counter.read_bytes()?;
        Some(counter)
    }

    /// Current `read_bytes`; re-reads the open file (no allocation).
    pub fn read_bytes(&mut self) -> Option<u64> {
        let n = self.file.read_at(&mut self.buf, 0).ok()?;
        parse_read_bytes(&self.buf[..n])
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
        let Some(mut counter) = DiskReadCounter::open() else {
            eprintln!("skipped: /proc/self/io is not available here");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        crate::evict::evict_file(&path).unwrap();
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
