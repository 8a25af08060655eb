//! Where a dataset lives and how it is loaded: the `Store` trait, one
//! implementation per database (`db/<name>/store.rs`; every server shares
//! `db/server/store.rs`). A store owns its manifest, resume point, disk estimate and
//! cache eviction. Engines read what a store loaded: `sqlite`, `sqlite-raw` and
//! `sqlite-blobio` share the SQLite store.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::dataset::{DatasetSpec, DatasetState, Manifest};
use crate::disk::evict::EvictionReport;

/// Rows present in a store, as counted by `verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdRange {
    pub count: u64,
    /// The lowest and highest id ((0, 0) when empty); None for a keyed dataset, which
    /// stores no ids: `verify` then fetches every id's key.
    pub ids: Option<(u64, u64)>,
}

/// A database's store: its methods written once, here. `async_trait` boxes each async
/// method's future so a store can be a trait object (`BoxedStore`): stores are not
/// on the timed path, and a database's store then needs no variant anywhere.
#[async_trait::async_trait(?Send)]
pub trait Store {
    fn spec(&self) -> &DatasetSpec;
    /// What a load writes first and every dataset of this store has: its location where
    /// that is one file, else the file in its folder that says it is this store's
    /// (`env`'s inventory tells a dataset from a foreign file or folder of the same name
    /// by it).
    fn marker(&self) -> PathBuf {
        self.location().to_path_buf()
    }
    /// The file or directory that holds the dataset (for messages and results).
    fn location(&self) -> &Path;
    /// Inspect without creating anything. Errors on foreign files and other datasets.
    async fn state(&mut self) -> Result<DatasetState>;
    /// Create what is missing and return how many rows (ids 1..=n) are already durable.
    async fn begin(&mut self) -> Result<u64>;
    /// Rows the loader hands to one `append` (bounded so memory stays small).
    fn rows_per_batch(&self) -> usize;
    /// Durably add rows `first_id..first_id + blobs.len()`; may take the buffers.
    async fn append(&mut self, first_id: u64, blobs: &mut Vec<Vec<u8>>) -> Result<()>;
    /// Mark the dataset complete.
    async fn finish(&mut self) -> Result<()>;
    /// Bytes on disk that `rows` rows will take.
    fn estimated_disk_bytes(&self, rows: u64) -> u64;
    /// Bytes a load holds on disk beside the rows it has written, given back when it
    /// ends, and what they are (RocksDB's write-ahead log of the memtables not yet
    /// flushed): the disk plan counts them at the load's peak. None: nothing beyond the
    /// rows (what a store's estimate already holds, such as SQLite's WAL, it holds).
    fn load_scratch(&self) -> Option<(u64, &'static str)> {
        None
    }
    /// Flush and drop the dataset's pages from the page cache.
    async fn evict(&mut self) -> Result<EvictionReport>;
    /// Before a steady-state prefill: set whatever makes its reads land in the cache
    /// the way a long-running service's do (InnoDB's young sublist: see
    /// `SqlServer::prefill_settings`); a note of what was set, None where nothing.
    async fn prefill_begin(&mut self) -> Result<Option<String>> {
        Ok(None)
    }
    /// After the prefill: put back what `prefill_begin` set.
    async fn prefill_end(&mut self) -> Result<()> {
        Ok(())
    }
    /// Count the ids actually present (a full scan: for `verify`, not for loading).
    async fn id_range(&mut self) -> Result<IdRange>;
    /// Rows `first..=last` in id order, each handed to `each(id, bytes)` (every id
    /// inside the range, none twice), read in one round trip: how `verify` reads a server's rows (one fetch per round trip read
    /// 3,500 rows a second from PostgreSQL: a quarter of an hour for a full-scale 1 KiB
    /// dataset). Ok(false) where the store has no such read (a keyed dataset, which
    /// stores no ids; stores whose engines read in-process, as fast): `verify` then
    /// fetches every id through the store's rawest engine.
    async fn read_rows(
        &mut self,
        first: u64,
        last: u64,
        each: &mut dyn for<'b> FnMut(u64, &'b [u8]),
    ) -> Result<bool> {
        let _ = (first, last, each);
        Ok(false)
    }
    /// Delete the dataset.
    async fn remove(&mut self) -> Result<()>;
    /// Delete what a `remove` cut short left aside (not a dataset); its path, if any.
    async fn remove_leftovers(&mut self) -> Result<Option<PathBuf>> {
        Ok(None)
    }
    /// For a complete dataset: finish what a load stopped after marking it complete
    /// left undone (Dolt's commit); a note saying what was done, None where nothing was.
    async fn finish_interrupted(&mut self) -> Result<Option<String>> {
        Ok(None)
    }
    /// Read about `bytes` of the dataset starting at fraction `at` (0..1) of it, the
    /// way its engines' caches keep it, for the steady-state prefill (`steady.rs`).
    /// Returns the bytes read.
    async fn read_chunk(&mut self, at: f64, bytes: u64) -> Result<u64>;
    /// `read_chunk` of each `(at, bytes)`, the bytes read summed. One after the other
    /// here; a server reads them on connections of their own at once
    /// (`ServerStore`): the same chunks end in its cache either way, sooner.
    async fn read_chunks(&mut self, chunks: &[(f64, u64)]) -> Result<u64> {
        read_one_by_one(self, chunks).await
    }
    /// Bytes the complete dataset takes on disk (table, TOAST and indexes; the file);
    /// None where the store cannot say (then reported as unavailable).
    async fn disk_bytes(&mut self) -> Result<Option<u64>> {
        Ok(None)
    }
    /// Up to `count` files holding the dataset's own bytes, for the disk probe after a
    /// cell (`diskprobe::probe_files`): whether the disk serves this dataset as fast as
    /// the floor's file in the same minute. Err says why there are none to read here (a
    /// server's files are in its container).
    fn own_files(&mut self, count: usize, seed: u64) -> Result<Vec<PathBuf>, String> {
        let _ = (count, seed);
        Err("its files are not this process's to read".into())
    }
    /// Its rows changed in place (`--churn`, `--write-rate`): the capability, where the
    /// store has it (SQL servers and SQLite); checked before a churned dataset is loaded.
    fn churner(&mut self) -> Option<&mut dyn Churn> {
        None
    }
}

/// Changing a loaded dataset's rows in place (`churn.rs`, `live.rs`): an optional
/// capability of a store (`Store::churner`).
#[async_trait::async_trait(?Send)]
pub trait Churn {
    /// How many of the churn's changes are in, counted in its order.
    async fn churn_applied(&mut self) -> Result<crate::dataset::churn::ChurnProgress>;
    /// `--maintenance` (`spec().churn`): before the first change (`after` false),
    /// `none` turns the database's own cleanup off for the dataset; after the last,
    /// `full` compacts it and records that with the churn's count. What it did, or why
    /// it could not, in a phrase; None where there was nothing to do.
    async fn churn_maintenance(&mut self, after: bool) -> Result<Option<String>>;
    /// What the database says of its own cleanup of the dataset after a churn (dead
    /// rows, autovacuum runs, free pages), read from it; empty where it says nothing.
    async fn cleanup_facts(&mut self) -> Result<Vec<(String, i64)>>;
    /// Write `blobs`, the new versions of rows `ids`, through the store's ordinary write
    /// path the churn's way (`spec().churn`), and record `applied` with them: in the
    /// rows' own transaction where the store has transactions, once they are durable
    /// otherwise, so a killed churn resumes with every row's version known.
    async fn churn(&mut self, ids: &[u64], blobs: &mut Vec<Vec<u8>>, applied: u64) -> Result<()>;
    /// After the last change: close what the churn opened and leave the dataset the way
    /// a reader opens it (SQLite's WAL folded into its file).
    async fn churn_finish(&mut self) -> Result<()>;
}

/// A database's store behind a trait object (`Database::open_store`). The registry
/// wraps it with its kind (`AnyStore`).
pub type BoxedStore = Box<dyn Store>;

/// Box a database's store.
pub fn boxed(store: impl Store + 'static) -> BoxedStore {
    Box::new(store)
}

/// Read `bytes` of a file from fraction `at` of it (page-aligned) through the page
/// cache, so its pages are charged to this process's cgroup: the cache a page-cache
/// engine (SQLite, the floor) reads from.
pub(crate) fn read_file_chunk(path: &Path, at: f64, bytes: u64) -> Result<u64> {
    use std::os::unix::fs::FileExt;
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = file.metadata()?.len();
    let offset = ((at * len.saturating_sub(bytes) as f64) as u64) & !4095;
    let mut buf = vec![0u8; bytes.min(len) as usize];
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }
    Ok(done as u64)
}

/// The ids a chunk of `bytes` at fraction `at` covers: at least one row.
pub(crate) fn chunk_ids(spec: &DatasetSpec, at: f64, bytes: u64) -> std::ops::RangeInclusive<u64> {
    let count = bytes.div_ceil(spec.mean_blob_bytes()).clamp(1, spec.rows);
    let first = 1 + ((at * (spec.rows - count + 1) as f64) as u64).min(spec.rows - count);
    first..=first + count - 1
}

/// `Store::read_chunks` one chunk after another: the default, and a server's where it
/// reads on one connection.
pub(crate) async fn read_one_by_one<S: Store + ?Sized>(
    store: &mut S,
    chunks: &[(f64, u64)],
) -> Result<u64> {
    let mut read = 0;
    for &(at, bytes) in chunks {
        read += store.read_chunk(at, bytes).await?;
    }
    Ok(read)
}

/// Rows per batch so that one batch holds about `target_bytes` (at least one row): of
/// a mix, by its mean blob (the loader ends a batch early once it holds that many
/// bytes, so a batch of a mix is at most one blob over).
pub(crate) fn rows_for_batch(spec: &DatasetSpec, target_bytes: u64, max_rows: u64) -> usize {
    (target_bytes / spec.mean_blob_bytes()).clamp(1, max_rows) as usize
}

/// Read a JSON manifest beside a file store; None when absent.
pub(crate) fn read_manifest(path: &Path) -> Result<Option<Manifest>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            crate::error::InputError::ForeignFile {
                path: path.to_path_buf(),
                why: format!("its manifest is not readable JSON ({e})"),
            }
            .into()
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Remove a file that may already be gone (removed by another path since it was
/// listed): only a failure to remove one that is there is an error.
pub(crate) fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Replace a JSON manifest atomically (write a temporary file, then rename over).
pub(crate) fn write_manifest(path: &Path, manifest: &Manifest) -> Result<()> {
    let tmp: PathBuf = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(manifest)?)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
}

/// Where a dataset's folder goes before it is deleted: `<stem>.removing`, so a removal
/// cut short never leaves a folder under the dataset's name that could pass as complete.
fn removing_dir(dir: &Path) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_owned();
    name.push(".removing");
    dir.with_file_name(name)
}

/// Remove a dataset's folder: what an earlier removal left aside first, then the folder
/// out of its name (one rename), then its files (`delete`, the store's way).
pub(crate) fn remove_dataset_dir(dir: &Path, delete: fn(&Path) -> Result<()>) -> Result<()> {
    remove_leftover_dir(dir, delete)?;
    if !dir.exists() {
        return Ok(());
    }
    let removing = removing_dir(dir);
    std::fs::rename(dir, &removing)
        .with_context(|| format!("cannot rename {} to {}", dir.display(), removing.display()))?;
    delete(&removing)
}

/// Delete a dataset's folder and everything in it (a store whose dataset is a few
/// files: redb's, LMDB's); `fs`'s millions of files have their own.
pub(crate) fn delete_dir(dir: &Path) -> Result<()> {
    std::fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))
}

/// Delete what a removal of `dir` cut short left aside; its path, if any.
pub(crate) fn remove_leftover_dir(
    dir: &Path,
    delete: fn(&Path) -> Result<()>,
) -> Result<Option<PathBuf>> {
    let removing = removing_dir(dir);
    if !removing.exists() {
        return Ok(None);
    }
    delete(&removing)?;
    Ok(Some(removing))
}

/// Bytes `path` holds on disk (allocated blocks, so sparse and compressed files
/// count what they use), a folder with everything under it.
pub fn allocated_bytes(path: &Path) -> std::io::Result<u64> {
    let meta = std::fs::symlink_metadata(path)?;
    let mut bytes = meta.blocks() * 512;
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            bytes += allocated_bytes(&entry?.path()).unwrap_or(0);
        }
    }
    Ok(bytes)
}

/// The first `len` bytes of a store's data file, where they were written: None where
/// the file is shorter or they are all zero, a load killed as the store created it
/// (redb sizes its file and writes its header with the magic number zeroed, syncs, and
/// only then writes the magic: a kill in between leaves zeros where the magic goes).
/// Why a store's file may fail to open or read for its folder's sake, where that can be
/// seen: a folder missing or not one, a read-only mount, a full disk, permissions. SQLite in WAL mode writes its `-shm` (and may
/// write its `-wal`) beside the file even to read, and only said "unable to open
/// database file" or "disk I/O error". None where the folder looks writable with room.
pub fn folder_trouble(file: &Path) -> Option<String> {
    let dir = file.parent()?;
    if file.is_dir() {
        return Some(format!(
            "{} is a directory, where the store's file goes: move it away",
            file.display()
        ));
    }
    match std::fs::metadata(dir) {
        Err(e) => return Some(format!("its folder {}: {e}", dir.display())),
        Ok(m) if !m.is_dir() => {
            return Some(format!("{} is not a directory", dir.display()));
        }
        Ok(_) => {}
    }
    let st = crate::machine::statvfs(dir).ok()?;
    if st.f_flag & libc::ST_RDONLY != 0 {
        return Some(format!(
            "{} is on a read-only mount: the store writes beside its file even to read (SQLite its -shm), so mount it writable or work on a writable copy",
            dir.display()
        ));
    }
    let free = st.f_bavail as u64 * st.f_frsize as u64;
    if free < 1 << 20 {
        return Some(format!(
            "the disk holding {} is full ({free} bytes free): the store writes beside its file even to read (SQLite its -shm and -wal); make room there",
            dir.display()
        ));
    }
    // After the mount's own flags: access(2) says EROFS for a read-only mount too.
    // SAFETY: access(2) with a NUL-terminated path; it only reads.
    let may = |path: &Path, mode: libc::c_int| {
        std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
            .is_ok_and(|c| unsafe { libc::access(c.as_ptr(), mode) } == 0)
    };
    if !may(dir, libc::W_OK | libc::X_OK) {
        return Some(format!(
            "this user cannot write in {} (the store writes beside its file even to read: SQLite its -shm and -wal): give a --data-dir you can write in, or its permissions",
            dir.display()
        ));
    }
    if file.exists() && !may(file, libc::R_OK | libc::W_OK) {
        return Some(format!(
            "this user cannot read and write {}: its permissions",
            file.display()
        ));
    }
    None
}

pub(crate) fn written_head(path: &Path, len: usize) -> Result<Option<Vec<u8>>> {
    use std::io::Read;
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut head = vec![0u8; len];
    let mut n = 0;
    while n < len {
        match f
            .read(&mut head[n..])
            .with_context(|| format!("cannot read {}", path.display()))?
        {
            0 => break,
            read => n += read,
        }
    }
    Ok((n == len && head.iter().any(|&b| b != 0)).then_some(head))
}

/// Checks every store of a few files shares (redb's, LMDB's).
#[cfg(test)]
pub(crate) mod checks {
    use std::path::Path;

    use super::{IdRange, Store};
    use crate::dataset::{DatasetSpec, DatasetState};

    /// What the disk plan reserves for a dataset against what a load of it takes, for a
    /// store whose datasets `make` opens under a folder: within a third above, never below.
    pub(crate) fn assert_disk_estimate_holds<S: Store>(make: fn(&Path, DatasetSpec) -> S) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        use crate::dataset::key::KeyType::{Int, Uuidv4};
        use crate::size::SizeClass;
        for (size, rows, key) in [
            (1024u64, 8192u64, Int),
            (1024, 8192, Uuidv4),
            (65536, 128, Int),
            (1 << 20, 16, Int),
        ] {
            let root = tempfile::tempdir().unwrap();
            let spec = DatasetSpec {
                size: SizeClass::new(size).unwrap(),
                rows,
                seed: 3,
                key,
                churn: None,
                live: false,
                mix: None,
                content: Default::default(),
            };
            let mut store = make(root.path(), spec);
            let (estimate, taken) = rt.block_on(async {
                assert_eq!(store.begin().await.unwrap(), 0);
                let per = store.rows_per_batch() as u64;
                let mut id = 1;
                while id <= rows {
                    let n = per.min(rows - id + 1);
                    let mut blobs = vec![vec![0x5au8; size as usize]; n as usize];
                    store.append(id, &mut blobs).await.unwrap();
                    id += n;
                }
                store.finish().await.unwrap();
                assert_eq!(store.state().await.unwrap(), DatasetState::Complete);
                let range = store.id_range().await.unwrap();
                let ids = (key == Int).then_some((1, rows));
                assert_eq!(range, IdRange { count: rows, ids });
                (
                    store.estimated_disk_bytes(rows),
                    store.disk_bytes().await.unwrap().unwrap(),
                )
            });
            let ratio = estimate as f64 / taken as f64;
            assert!(
                (1.0..1.34).contains(&ratio),
                "{size} B x {rows}, key {key:?}: estimated {estimate}, took {taken} ({ratio:.2})"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_already_gone_is_removed_and_one_that_cannot_go_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.sqlite-wal");
        std::fs::write(&file, b"wal").unwrap();
        super::remove_if_present(&file).unwrap();
        assert!(!file.exists());
        super::remove_if_present(&file).unwrap();
        // A directory is not a file to remove: said, with its path.
        let err = super::remove_if_present(dir.path()).unwrap_err();
        assert!(format!("{err:#}").contains("cannot remove"), "{err:#}");
    }

    #[test]
    fn a_store_file_that_cannot_be_opened_is_said_why_by_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let trouble = |p: &std::path::Path| super::folder_trouble(p).unwrap_or_default();
        // Writable, with room: nothing to say.
        assert_eq!(super::folder_trouble(&dir.path().join("a.sqlite")), None);
        let missing = dir.path().join("gone").join("a.sqlite");
        assert!(trouble(&missing).contains("gone"), "{}", trouble(&missing));
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").unwrap();
        let under_file = file.join("a.sqlite");
        assert!(
            trouble(&under_file).contains("is not a directory"),
            "{}",
            trouble(&under_file)
        );
        let a_dir = dir.path().join("b.sqlite");
        std::fs::create_dir(&a_dir).unwrap();
        assert!(
            trouble(&a_dir).contains("is a directory"),
            "{}",
            trouble(&a_dir)
        );
    }
}
