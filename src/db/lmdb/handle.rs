//! Opening an LMDB environment. heed refuses to open one environment twice in a process,
//! and one handle serves readers and the writer alike, so the process keeps one handle per
//! environment while anything holds it: the loader while it writes, the engines of a
//! run's clients while they read (N clients, one map, as the threads of an application
//! sharing its environment would). When the last holder lets go, the environment is
//! closed and its map unmapped: only then can its pages leave the page cache (a mapped
//! page is skipped by `posix_fadvise(DONTNEED)`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use anyhow::Result;
use heed::types::{Bytes, Str};
use heed::{CommitOrAbort, Env, EnvOpenOptions};

/// The rows: a blob under its key (the id, big-endian so the B+tree keeps id order and
/// a load appends, or the dataset's 16-byte key).
pub type Blobs = heed::Database<'static, Bytes, Bytes>;
pub const BLOBS: &str = "blobs";
/// The manifest (JSON), in the same environment as the rows and written in their
/// transactions: the resume point is always the rows that are there.
pub type ManifestTable = heed::Database<'static, Str, Str>;
pub const MANIFEST: &str = "manifest";
pub const MANIFEST_KEY: &str = "manifest";
/// Both tables of an environment.
pub type Tables = (Blobs, ManifestTable);

/// The map's size: address space, not memory. Without `MDB_WRITEMAP` the data file
/// grows only as pages are written, and a read maps only what it touches; the map
/// must only exceed the largest dataset (the full profile's are 3 GiB, which LMDB
/// stores in about 4 GiB at 1 KiB), with room for the copies of the pages a write
/// transaction changes. 64 GiB of a 64-bit process's 128 TiB.
pub const MAP_BYTES: usize = 64 << 30;

/// How the map is read: with the kernel's read-ahead (LMDB's default), or without
/// (`MDB_NORDAHEAD`, `madvise(MADV_RANDOM)`: each page fault reads its one page). A
/// fault in a map reads around it as much as the disk's `read_ahead_kb` (8 MiB on this
/// project's VM disk, 128 KiB on many), which LMDB's documentation advises turning off
/// for a database larger than memory; but a value of many pages is then read a page
/// per fault. The two are two engines; the loader reads nothing and takes the default.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ReadAhead {
    Kernel,
    Off,
}

/// An environment this process opened, with the read-ahead it was opened with.
type Opened = (ReadAhead, Weak<Env>);

static OPEN: LazyLock<Mutex<HashMap<PathBuf, Opened>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The process's handle on the environment in `dir` (a folder holding `data.mdb` and
/// `lock.mdb`), opened if none is open; `dir` must exist. An environment open with the
/// other read-ahead is refused: LMDB sets it when it opens.
pub fn env(dir: &Path, read_ahead: ReadAhead) -> Result<Arc<Env>> {
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((how, env)) = open
        .get(dir)
        .and_then(|(how, w)| Some((*how, w.upgrade()?)))
    {
        if how != read_ahead {
            anyhow::bail!(
                "{} is open in this process with read-ahead {how:?}, asked {read_ahead:?}",
                dir.display()
            );
        }
        return Ok(env);
    }
    check_not_cut_short(&dir.join("data.mdb"))?;
    let mut options = EnvOpenOptions::new();
    options.map_size(MAP_BYTES).max_dbs(2);
    if read_ahead == ReadAhead::Off {
        // SAFETY: a read hint, no change to what LMDB writes or how it locks.
        unsafe { options.flags(heed::EnvFlags::NO_READ_AHEAD) };
    }
    // SAFETY: heed's contract for a memory map: the file is not changed under the map
    // by anything but LMDB. The environment is this store's own folder, opened once
    // in this process (the map above), and other processes reach it only through LMDB
    // and its lock file, under the dataset locks of `crate::lock`.
    let env = unsafe { options.open(dir) }.map_err(|e| explain(e, dir))?;
    let env = Arc::new(env);
    open.retain(|_, (_, weak)| weak.strong_count() > 0);
    open.insert(dir.to_path_buf(), (read_ahead, Arc::downgrade(&env)));
    Ok(env)
}

/// Where the fields of LMDB's meta page lie (`MDB_meta` after the 16-byte page
/// header, 64-bit): the page size (`mm_psize`, the free table's `md_pad`), the last page
/// written (`mm_last_pg`) and the transaction that wrote it (`mm_txnid`). Two meta
/// pages, 0 and 1; the newer one is in force.
const META_PSIZE_AT: usize = 40;
const META_LAST_PAGE_AT: usize = 136;
const META_TXNID_AT: usize = 144;

/// A data file shorter than the pages its meta page says were written is refused as
/// damaged before it is mapped: a read of a page past the end of a mapped file is a
/// SIGBUS, which killed `verify` and `measure` with no word (exit 135).
fn check_not_cut_short(file: &Path) -> Result<()> {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(file) else {
        return Ok(()); // Not there yet: LMDB creates it.
    };
    let len = f.metadata()?.len();
    let mut head = Vec::new();
    f.take(2 * 4096).read_to_end(&mut head)?;
    let got = head.len();
    let u64_at = |page: &[u8], at: usize| {
        page.get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    let psize = head
        .get(META_PSIZE_AT..META_PSIZE_AT + 4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
        .filter(|p| p.is_power_of_two() && (512..=65536).contains(p));
    let Some(psize) = psize else {
        return Ok(()); // Not LMDB's (or not written yet): said by the store's own checks.
    };
    let metas = [&head[..got.min(psize)], head.get(psize..got).unwrap_or(&[])];
    let newest = metas
        .iter()
        .filter_map(|m| Some((u64_at(m, META_TXNID_AT)?, u64_at(m, META_LAST_PAGE_AT)?)))
        .max();
    let Some((_, last_page)) = newest else {
        return Err(crate::error::InputError::DatasetDamaged {
            path: file.to_path_buf(),
            why: format!("it is cut short ({len} bytes): its meta pages are not whole"),
        }
        .into());
    };
    let written = last_page.saturating_add(1).saturating_mul(psize as u64);
    if len < written {
        return Err(crate::error::InputError::DatasetDamaged {
            path: file.to_path_buf(),
            why: format!(
                "it is cut short: {len} bytes where LMDB's meta page says {written} were written (pages 0..={last_page} of {psize} bytes)"
            ),
        }
        .into());
    }
    Ok(())
}

/// Whether something in this process holds the environment in `dir` open.
pub fn is_open(dir: &Path) -> bool {
    let open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    open.get(dir).is_some_and(|(_, w)| w.strong_count() > 0)
}

/// heed's error with what it means here.
fn explain(e: heed::Error, dir: &Path) -> anyhow::Error {
    match e {
        heed::Error::Mdb(heed::MdbError::Invalid) => anyhow::anyhow!(
            "{} does not hold an LMDB environment (its data.mdb is not LMDB's)",
            dir.display()
        ),
        heed::Error::Mdb(heed::MdbError::VersionMismatch) => anyhow::anyhow!(
            "{} was written by another LMDB version: drop it (`blobrace drop`) and load it again",
            dir.display()
        ),
        other => anyhow::Error::new(other).context(format!(
            "cannot open {} as an LMDB environment",
            dir.display()
        )),
    }
}

/// The tables of an open environment: None before the first commit made them.
pub fn tables(env: &Env) -> Result<Option<Tables>> {
    let txn = env.read_txn()?;
    let opened = env.open_databases_and_commit(txn, |tables, txn| -> Result<_, heed::Error> {
        let blobs = tables.open_database::<Bytes, Bytes>(txn, Some(BLOBS))?;
        let manifest = tables.open_database::<Str, Str>(txn, Some(MANIFEST))?;
        Ok(CommitOrAbort::<_, ()>::Commit(blobs.zip(manifest)))
    })?;
    Ok(opened.unwrap_commit())
}

/// The tables, made where the environment has none yet (the loader's first step).
pub fn create_tables(env: &Env) -> Result<Tables> {
    let txn = env.write_txn()?;
    let made = env.create_databases_and_commit(txn, |tables, txn| -> Result<_, heed::Error> {
        let blobs = tables.create_database::<Bytes, Bytes>(txn, Some(BLOBS))?;
        let manifest = tables.create_database::<Str, Str>(txn, Some(MANIFEST))?;
        Ok(CommitOrAbort::<_, ()>::Commit((blobs, manifest)))
    })?;
    Ok(made.unwrap_commit())
}

/// The disk's read-ahead under `path` (`/sys/dev/block/<dev>/queue/read_ahead_kb`, a
/// partition's from its disk), or why it cannot be read.
pub fn disk_read_ahead(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return "unavailable (the data directory cannot be read)".into();
    };
    let dev = meta.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let base = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    for queue in [
        base.join("queue/read_ahead_kb"),
        base.join("../queue/read_ahead_kb"),
    ] {
        if let Ok(kb) = std::fs::read_to_string(&queue) {
            return format!("{} KiB (the disk's read_ahead_kb)", kb.trim());
        }
    }
    format!(
        "unavailable (no {}/queue/read_ahead_kb: not a block device's file system)",
        base.display()
    )
}
