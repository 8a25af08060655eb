//! `--content dir:PATH`: blobs that hold the bytes of the user's own files. The folder is
//! read once, when the flag is: its regular files (every level down), taken in an order
//! fixed by their paths' hashes until `MAX_CORPUS_BYTES`, each up to `MAX_FILE_BYTES`.
//! A row cuts its bytes from a file at least its size and under twice it where there is
//! one (at an offset drawn from its seed), so rows of a `--size-mix dir:` of the same
//! folder take both their sizes and their bytes from files of about their size; a row
//! larger than every file holds files back to back. The corpus is in the measuring
//! process's memory while it runs (charged to its cap): hence the ceiling.
//!
//! A dataset names the digest of the bytes it was cut from (`-dir1a2b3c4d`), so a folder
//! that changed is another dataset, never continued or verified as the old one; results
//! keep `dir:PATH@<digest>`, which reads back without the folder (`Corpus::described`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;

/// The most bytes read from the folder: what the measuring process holds.
pub const MAX_CORPUS_BYTES: u64 = 64 << 20;
/// The most read from one file: the largest blob.
const MAX_FILE_BYTES: u64 = 32 << 20;
/// The most paths listed before sampling (a folder of millions of files is sampled from
/// its first ones found).
const MAX_LISTED: usize = 1_000_000;

/// A user's files, as a dataset's content.
#[derive(Debug)]
pub struct Corpus {
    /// The folder as written.
    pub source: String,
    /// FNV-1a of the files' lengths and bytes, in the order read.
    pub digest: u64,
    pub files: usize,
    pub bytes: u64,
    /// What a user uploading them would say they are (SeaweedFS gzips text).
    pub mime: &'static str,
    /// None: described by results, not read (cannot fill a blob).
    held: Option<Held>,
}

#[derive(Debug)]
struct Held {
    bytes: Vec<u8>,
    /// (start in `bytes`, length), shortest first.
    files: Vec<(usize, usize)>,
}

impl Corpus {
    /// Read `dir`'s files. Err: one line saying what is wrong and what to give instead.
    pub fn read(source: &str) -> Result<Corpus, String> {
        let dir = Path::new(source);
        let meta = std::fs::metadata(dir).map_err(|e| {
            format!("dir:{source}: cannot open it ({e}): give the folder whose files the blobs should hold, e.g. dir:./docs")
        })?;
        if meta.is_file() {
            return Err(format!(
                "dir:{source} is a file, not a folder: give the folder that holds the files (dir:{})",
                dir.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."))
                    .display()
            ));
        }
        if !meta.is_dir() {
            return Err(format!(
                "dir:{source} is not a folder (a device, pipe or socket): give the folder whose files the blobs should hold"
            ));
        }
        let (mut paths, unreadable_dirs) = list(dir);
        // A fixed order that is not the folders' order: a sample of the whole tree, not
        // of its first folder.
        paths.sort_by_key(|(p, _)| (fnv(p.as_os_str().as_encoded_bytes(), FNV_OFFSET), p.clone()));
        let (mut empty, mut unreadable) = (0usize, unreadable_dirs);
        let mut bytes = Vec::new();
        let mut files = Vec::new();
        let mut digest = FNV_OFFSET;
        for (path, len) in paths {
            if bytes.len() as u64 >= MAX_CORPUS_BYTES {
                break;
            }
            if len == 0 {
                empty += 1;
                continue;
            }
            let room = MAX_CORPUS_BYTES - bytes.len() as u64;
            let take = len.min(MAX_FILE_BYTES).min(room) as usize;
            match read_prefix(&path, take) {
                Ok(read) if !read.is_empty() => {
                    digest = fnv(&(read.len() as u64).to_le_bytes(), digest);
                    digest = fnv(&read, digest);
                    files.push((bytes.len(), read.len(), path));
                    bytes.extend_from_slice(&read);
                }
                Ok(_) => empty += 1,
                Err(_) => unreadable += 1,
            }
        }
        if files.is_empty() {
            return Err(match (empty, unreadable) {
                (0, 0) => format!(
                    "dir:{source} holds no files: give the folder whose files the blobs should hold"
                ),
                (0, n) => format!(
                    "dir:{source}: none of its files can be read ({n} refused): give a folder this user may read, or run as one who may"
                ),
                (n, _) => format!(
                    "dir:{source}'s {n} file(s) are all empty: there are no bytes to store; give the folder whose files hold the documents"
                ),
            });
        }
        let mime = mime_of(files.iter().map(|(_, _, p)| p.as_path()));
        files.sort_by(|a, b| (a.1, &a.2).cmp(&(b.1, &b.2)));
        Ok(Corpus {
            source: source.to_string(),
            digest,
            files: files.len(),
            bytes: bytes.len() as u64,
            mime,
            held: Some(Held {
                bytes,
                files: files.into_iter().map(|(s, l, _)| (s, l)).collect(),
            }),
        })
    }

    /// As results hold it: its name and digest, nothing read.
    pub fn described(source: &str, digest: u64) -> Corpus {
        Corpus {
            source: source.to_string(),
            digest,
            files: 0,
            bytes: 0,
            mime: "application/octet-stream",
            held: None,
        }
    }

    /// `buf` cut from a file of about its size, or files back to back.
    pub fn fill(&self, rng: &mut Xoshiro256PlusPlus, buf: &mut [u8]) {
        let held = self.held.as_ref().unwrap_or_else(|| {
            panic!(
                "dir:{} was read back from results, not from the folder: a blob cannot be made from it",
                self.source
            )
        });
        let n = buf.len();
        if n == 0 {
            return;
        }
        let first = held.files.partition_point(|&(_, len)| len < n);
        if first < held.files.len() {
            let last = held
                .files
                .partition_point(|&(_, len)| len < 2 * n)
                .max(first + 1);
            let (start, len) = held.files[rng.random_range(first..last)];
            let at = start + rng.random_range(0..=len - n);
            buf.copy_from_slice(&held.bytes[at..at + n]);
            return;
        }
        // Larger than every file: files back to back, from one drawn.
        let mut i = rng.random_range(0..held.files.len());
        let mut filled = 0;
        while filled < n {
            let (start, len) = held.files[i];
            let take = len.min(n - filled);
            buf[filled..filled + take].copy_from_slice(&held.bytes[start..start + take]);
            filled += take;
            i = (i + 1) % held.files.len();
        }
    }
}

/// Regular files under `dir`, every level down, with their lengths; and how many
/// folders could not be listed.
fn list(dir: &Path) -> (Vec<(PathBuf, u64)>, usize) {
    let mut found = Vec::new();
    let mut refused = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            refused += 1;
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file()
                && let Ok(meta) = entry.metadata()
            {
                found.push((entry.path(), meta.len()));
                if found.len() >= MAX_LISTED {
                    return (found, refused);
                }
            }
        }
    }
    (found, refused)
}

fn read_prefix(path: &Path, take: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::with_capacity(take);
    std::fs::File::open(path)?
        .take(take as u64)
        .read_to_end(&mut out)?;
    Ok(out)
}

/// The type most of the files' names say (by bytes would favour one large file).
fn mime_of<'a>(paths: impl Iterator<Item = &'a Path>) -> &'static str {
    let mut counts: HashMap<&'static str, usize> = HashMap::new();
    for path in paths {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let mime = match ext.as_deref() {
            Some("json" | "ndjson" | "jsonl") => "application/json",
            Some("html" | "htm" | "xhtml") => "text/html; charset=utf-8",
            Some("txt" | "md" | "markdown" | "rst" | "csv" | "log" | "tsv") => {
                "text/plain; charset=utf-8"
            }
            Some("xml") => "application/xml",
            _ => "application/octet-stream",
        };
        *counts.entry(mime).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(mime, n)| (n, mime))
        .map_or("application/octet-stream", |(mime, _)| mime)
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over 8-byte words (then the tail): stable across releases, unlike std's
/// hasher, and quick enough for 64 MiB.
fn fnv(bytes: &[u8], mut hash: u64) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        hash ^= u64::from_le_bytes(w.try_into().expect("8 bytes"));
        hash = hash.wrapping_mul(PRIME);
    }
    for &b in words.remainder() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(PRIME);
    }
    hash
}

/// This process's corpora, each once, leaked: a `CorpusRef` is `Copy` inside a `Content`
/// and must stay valid as long as any spec holding it.
static CORPORA: RwLock<Vec<&'static Corpus>> = RwLock::new(Vec::new());

/// A corpus as a `Content` holds it: equal for the same folder's same bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CorpusRef(u32);

impl CorpusRef {
    pub fn get(self) -> &'static Corpus {
        CORPORA.read().unwrap_or_else(|e| e.into_inner())[self.0 as usize]
    }
}

/// The corpus's one `CorpusRef` (a read one is kept over one only described).
pub fn intern(corpus: Corpus) -> CorpusRef {
    let mut all = CORPORA.write().unwrap_or_else(|e| e.into_inner());
    let same = |c: &&Corpus| c.source == corpus.source && c.digest == corpus.digest;
    if let Some(i) = all.iter().position(same) {
        if all[i].held.is_some() || corpus.held.is_none() {
            return CorpusRef(i as u32);
        }
        all[i] = Box::leak(Box::new(corpus));
        return CorpusRef(i as u32);
    }
    all.push(Box::leak(Box::new(corpus)));
    CorpusRef((all.len() - 1) as u32)
}

impl std::fmt::Debug for CorpusRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = self.get();
        write!(f, "dir:{}@{:016x}", c.source, c.digest)
    }
}

#[cfg(test)]
#[path = "corpus/tests.rs"]
mod tests;
