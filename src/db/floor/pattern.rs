//! Ways of reading S bytes at an offset of the floor's packed file. Which one a
//! disk serves fastest depends on the disk and on S: one large buffered `pread` is
//! split into readahead-sized requests issued a few at a time, while many small
//! reads in order let the kernel's readahead run ahead of the reader (SQLite's
//! page-by-page reads of a 4 MiB blob beat one 4 MiB `pread` by 40% on this
//! project's disk). `calibrate` measures them; the floor reads with the fastest.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// The pieces of `Pieces` and the alignment of O_DIRECT: a page, SQLite's default
/// page size, and every file system's logical block size or a multiple of it.
pub const PAGE: usize = 4096;
/// Threads of `Threads`: the default cap's 2 CPUs do not bound it (the threads
/// wait on the disk), and the disk's queue is what more of them would test.
pub const THREADS: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReadPattern {
    /// One buffered `pread` of the whole blob.
    Pread,
    /// `posix_fadvise(WILLNEED)` on the blob's range (the kernel queues reads for all
    /// of it at once), then one `pread`.
    WillNeed,
    /// `pread`s of one page each, in order: readahead sees a sequential reader.
    Pieces,
    /// `THREADS` threads each `pread` a quarter of the blob at once.
    Threads,
    /// One `pread` through an `O_DIRECT` descriptor into an aligned buffer, copied
    /// out: no page cache at all.
    Direct,
}

impl ReadPattern {
    pub const ALL: [ReadPattern; 5] = [
        ReadPattern::Pread,
        ReadPattern::WillNeed,
        ReadPattern::Pieces,
        ReadPattern::Threads,
        ReadPattern::Direct,
    ];

    /// The word `BLOBRACE_FLOOR_READ` takes for it.
    pub fn key(self) -> &'static str {
        match self {
            ReadPattern::Pread => "pread",
            ReadPattern::WillNeed => "willneed",
            ReadPattern::Pieces => "pieces",
            ReadPattern::Threads => "threads",
            ReadPattern::Direct => "direct",
        }
    }

    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.key() == key)
    }

    pub fn name(self) -> &'static str {
        match self {
            ReadPattern::Pread => "pread",
            ReadPattern::WillNeed => "fadvise(WILLNEED) + pread",
            ReadPattern::Pieces => "4KiB preads in order",
            ReadPattern::Threads => "4 threads × ¼ pread",
            ReadPattern::Direct => "O_DIRECT pread",
        }
    }

    /// Whether the floor may read this way. O_DIRECT may not: every engine reads
    /// through the page cache of its cap, so a floor that bypasses it never hits
    /// and any engine's cached fetches would "beat" it. It is still measured, as
    /// what the disk alone does.
    pub fn eligible(self) -> bool {
        self != ReadPattern::Direct
    }
}

/// A file open for one read pattern, with what that pattern keeps between reads
/// (an aligned buffer, a pool of threads), so a read allocates nothing.
pub struct PatternReader {
    pattern: ReadPattern,
    file: Arc<File>,
    direct: Option<DirectReader>,
    pool: Option<ChunkPool>,
}

impl PatternReader {
    pub fn open(path: &Path, pattern: ReadPattern) -> io::Result<Self> {
        let file = Arc::new(File::open(path)?);
        let direct = match pattern {
            ReadPattern::Direct => Some(DirectReader::open(path)?),
            _ => None,
        };
        let pool = match pattern {
            ReadPattern::Threads => Some(ChunkPool::start(file.clone(), THREADS)?),
            _ => None,
        };
        Ok(Self {
            pattern,
            file,
            direct,
            pool,
        })
    }

    pub fn pattern(&self) -> ReadPattern {
        self.pattern
    }

    /// Fill `out` with the bytes at `offset`.
    #[inline]
    /// One plain `pread` (looped to the end of `out`) through the page cache, whatever
    /// the pattern: a piece of a streamed read.
    pub fn read_piece_at(&self, out: &mut [u8], offset: u64) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.read_exact_at(out, offset)
    }

    pub fn read_at(&mut self, out: &mut [u8], offset: u64) -> io::Result<()> {
        match self.pattern {
            ReadPattern::Pread => self.file.read_exact_at(out, offset),
            ReadPattern::WillNeed => {
                // SAFETY: plain syscall on an fd we own.
                let rc = unsafe {
                    libc::posix_fadvise(
                        self.file.as_raw_fd(),
                        offset as libc::off_t,
                        out.len() as libc::off_t,
                        libc::POSIX_FADV_WILLNEED,
                    )
                };
                if rc != 0 {
                    return Err(io::Error::from_raw_os_error(rc));
                }
                self.file.read_exact_at(out, offset)
            }
            ReadPattern::Pieces => {
                let mut done = 0;
                while done < out.len() {
                    // Page-aligned pieces, as a page-by-page reader asks for them.
                    let at = offset + done as u64;
                    let piece = (PAGE - (at as usize % PAGE)).min(out.len() - done);
                    self.file.read_exact_at(&mut out[done..done + piece], at)?;
                    done += piece;
                }
                Ok(())
            }
            ReadPattern::Threads => self
                .pool
                .as_ref()
                .expect("a Threads reader has a pool")
                .read_at(out, offset),
            ReadPattern::Direct => self
                .direct
                .as_mut()
                .expect("a Direct reader has its file")
                .read_at(out, offset),
        }
    }
}

/// An O_DIRECT descriptor and a page-aligned buffer that grows to the largest read.
struct DirectReader {
    file: File,
    buffer: AlignedBuffer,
}

impl DirectReader {
    fn open(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)?;
        Ok(Self {
            file,
            buffer: AlignedBuffer::default(),
        })
    }

    /// O_DIRECT reads whole aligned blocks: read the blocks around the blob, copy it out.
    fn read_at(&mut self, out: &mut [u8], offset: u64) -> io::Result<()> {
        let start = offset / PAGE as u64 * PAGE as u64;
        let end = (offset + out.len() as u64).div_ceil(PAGE as u64) * PAGE as u64;
        let span = self.buffer.at_least((end - start) as usize);
        let mut got = 0;
        while got < span.len() {
            match self.file.read_at(&mut span[got..], start + got as u64)? {
                0 => break, // the file's end, inside the last block
                n => got += n,
            }
        }
        let skip = (offset - start) as usize;
        if got < skip + out.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file ends before the blob",
            ));
        }
        out.copy_from_slice(&span[skip..skip + out.len()]);
        Ok(())
    }
}

#[derive(Default)]
struct AlignedBuffer {
    ptr: Option<std::ptr::NonNull<u8>>,
    len: usize,
}

impl AlignedBuffer {
    fn layout(len: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(len, PAGE).expect("a page-aligned layout")
    }

    fn at_least(&mut self, len: usize) -> &mut [u8] {
        if self.len < len {
            self.release();
            // SAFETY: a non-zero size (len ≥ one page) and a valid alignment.
            let raw = unsafe { std::alloc::alloc_zeroed(Self::layout(len)) };
            let ptr = std::ptr::NonNull::new(raw)
                .unwrap_or_else(|| std::alloc::handle_alloc_error(Self::layout(len)));
            self.ptr = Some(ptr);
            self.len = len;
        }
        let ptr = self.ptr.expect("allocated above");
        // SAFETY: `ptr` holds `self.len ≥ len` initialised bytes we own.
        unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr(), len) }
    }

    fn release(&mut self) {
        if let Some(ptr) = self.ptr.take() {
            // SAFETY: allocated by `at_least` with this layout.
            unsafe { std::alloc::dealloc(ptr.as_ptr(), Self::layout(self.len)) };
            self.len = 0;
        }
    }
}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        self.release();
    }
}

// SAFETY: the buffer is owned memory, used by one thread at a time.
unsafe impl Send for AlignedBuffer {}

/// Threads that wait for a read, each `pread` its share of the blob, and report
/// back: started once, so a read spawns and allocates nothing.
struct ChunkPool {
    shared: Arc<PoolShared>,
    threads: Vec<JoinHandle<()>>,
}

struct PoolShared {
    file: Arc<File>,
    job: Mutex<Job>,
    start: Condvar,
    done: Condvar,
}

#[derive(Default)]
struct Job {
    generation: u64,
    /// The caller's buffer, borrowed until `pending` reaches 0.
    buffer: usize,
    len: usize,
    offset: u64,
    pending: usize,
    failed: Option<io::Error>,
    quit: bool,
}

/// Worker `index`'s byte range of a `len`-byte read among `workers`, page-aligned.
fn share(len: usize, workers: usize, index: usize) -> std::ops::Range<usize> {
    let chunk = len.div_ceil(workers).div_ceil(PAGE) * PAGE;
    let start = (index * chunk).min(len);
    start..(start + chunk).min(len)
}

impl ChunkPool {
    fn start(file: Arc<File>, workers: usize) -> io::Result<Self> {
        let shared = Arc::new(PoolShared {
            file,
            job: Mutex::new(Job::default()),
            start: Condvar::new(),
            done: Condvar::new(),
        });
        let threads = (0..workers)
            .map(|index| {
                let shared = shared.clone();
                std::thread::Builder::new()
                    .name(format!("floor-read-{index}"))
                    .spawn(move || worker(&shared, index, workers))
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Self { shared, threads })
    }

    fn read_at(&self, out: &mut [u8], offset: u64) -> io::Result<()> {
        let mut job = self.shared.job.lock().expect("floor pool lock");
        job.buffer = out.as_mut_ptr() as usize;
        job.len = out.len();
        job.offset = offset;
        job.pending = self.threads.len();
        job.failed = None;
        job.generation += 1;
        self.shared.start.notify_all();
        while job.pending > 0 {
            job = self.shared.done.wait(job).expect("floor pool lock");
        }
        match job.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

fn worker(shared: &PoolShared, index: usize, workers: usize) {
    let mut seen = 0;
    loop {
        let (buffer, len, offset) = {
            let mut job = shared.job.lock().expect("floor pool lock");
            while job.generation == seen && !job.quit {
                job = shared.start.wait(job).expect("floor pool lock");
            }
            if job.quit {
                return;
            }
            seen = job.generation;
            (job.buffer, job.len, job.offset)
        };
        let range = share(len, workers, index);
        let result = if range.is_empty() {
            Ok(())
        } else {
            // SAFETY: the caller's buffer outlives the job (read_at waits for every
            // worker) and workers' ranges are disjoint.
            let part = unsafe {
                std::slice::from_raw_parts_mut((buffer as *mut u8).add(range.start), range.len())
            };
            shared.file.read_exact_at(part, offset + range.start as u64)
        };
        let mut job = shared.job.lock().expect("floor pool lock");
        if let Err(e) = result {
            job.failed.get_or_insert(e);
        }
        job.pending -= 1;
        if job.pending == 0 {
            shared.done.notify_one();
        }
    }
}

impl Drop for ChunkPool {
    fn drop(&mut self) {
        if let Ok(mut job) = self.shared.job.lock() {
            job.quit = true;
        }
        self.shared.start.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn shares_cover_the_read_once_page_aligned() {
        for len in [1, 1024, 4096, 65536, 4 << 20, (4 << 20) + 12345] {
            let ranges: Vec<_> = (0..THREADS).map(|i| share(len, THREADS, i)).collect();
            assert_eq!(ranges[0].start, 0);
            for pair in ranges.windows(2) {
                assert_eq!(pair[0].end, pair[1].start, "{len}: {ranges:?}");
            }
            assert_eq!(ranges[THREADS - 1].end, len, "{len}: {ranges:?}");
            for r in &ranges[..THREADS - 1] {
                assert!(r.is_empty() || r.end == len || r.end % PAGE == 0, "{r:?}");
            }
        }
    }

    #[test]
    fn every_pattern_reads_the_same_bytes_at_any_offset() {
        // Under target/, not /tmp: O_DIRECT needs a disk file system (tmpfs may refuse it).
        // Made if missing: a build with CARGO_TARGET_DIR elsewhere has no target/ here.
        let under = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
        std::fs::create_dir_all(&under).unwrap();
        let dir = tempfile::tempdir_in(&under).unwrap();
        let path = dir.path().join("f.bin");
        let bytes: Vec<u8> = (0..(3 << 20) + 777u32)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        File::create(&path).unwrap().write_all(&bytes).unwrap();
        for pattern in ReadPattern::ALL {
            let mut reader = PatternReader::open(&path, pattern).unwrap();
            // Aligned, unaligned, across pages, and the file's last bytes.
            for (offset, len) in [
                (0usize, 1024usize),
                (5000, 70_000),
                (4096, 1 << 20),
                (bytes.len() - 1500, 1500),
                (123, (2 << 20) + 5),
            ] {
                let mut out = vec![0u8; len];
                reader.read_at(&mut out, offset as u64).unwrap();
                assert!(
                    out == bytes[offset..offset + len],
                    "{} at {offset}+{len}",
                    pattern.name()
                );
            }
            let mut past = vec![0u8; 4096];
            assert!(
                reader.read_at(&mut past, bytes.len() as u64 - 100).is_err(),
                "{} reads past the end",
                pattern.name()
            );
        }
    }
}
