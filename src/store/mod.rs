//! Where a dataset lives and how it is loaded: one trait, one file per store.
//!
//! Engines read stores: `sqlite` and `sqlite-raw` share the SQLite store, `fs`
//! and `floor` have stores of their own. A store owns its manifest, resume
//! point, disk estimate and cache eviction.

mod floor;
mod fs;
mod orm;
mod server;
mod sqlite;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::dataset::{DatasetSpec, DatasetState, Manifest};
use crate::evict::EvictionReport;
use crate::locations::Locations;
use crate::server::Server;

pub use floor::FloorStore;
pub use fs::{FsStore, blob_path_into};
pub use server::ServerStore;
pub use sqlite::{SqliteStore, sqlite_connect_options};
pub mod sqlite_c;

/// Every store: the three embedded layouts, then one per registered server
/// (`server::SERVERS`). Ordered as listed; written to results by name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StoreKind {
    /// One SQLite file per size class.
    Sqlite,
    /// One file per blob in a sharded directory tree.
    Fs,
    /// All blobs of a size class packed in one file at `(id - 1) * size`.
    Floor,
    /// One namespace (schema, database) per size class in a server's capped container.
    Server(Server),
}

impl StoreKind {
    pub fn all() -> impl Iterator<Item = StoreKind> {
        [StoreKind::Sqlite, StoreKind::Fs, StoreKind::Floor]
            .into_iter()
            .chain(Server::all().map(StoreKind::Server))
    }

    pub fn name(self) -> &'static str {
        match self {
            StoreKind::Sqlite => "sqlite",
            StoreKind::Fs => "fs",
            StoreKind::Floor => "floor",
            StoreKind::Server(server) => server.name(),
        }
    }

    /// The server holding this store, for stores in a server container.
    pub fn server(self) -> Option<Server> {
        match self {
            StoreKind::Server(server) => Some(server),
            _ => None,
        }
    }

    /// Stores that can hold rows under a 16-byte key (`--key`): the databases. fs names
    /// a file by its id and the floor reads at the id's offset.
    pub fn has_keys(self) -> bool {
        !matches!(self, StoreKind::Fs | StoreKind::Floor)
    }

    /// Stores in a server container rather than under the data directory.
    pub fn is_server(self) -> bool {
        self.server().is_some()
    }

    pub fn open(self, at: &Locations, spec: DatasetSpec) -> AnyStore {
        let data_dir = &at.data_dir;
        match self {
            StoreKind::Sqlite => {
                AnyStore::Sqlite(SqliteStore::new(data_dir, spec, at.sqlite_page_size))
            }
            StoreKind::Fs => AnyStore::Fs(FsStore::new(data_dir, spec)),
            StoreKind::Floor => AnyStore::Floor(FloorStore::new(data_dir, spec)),
            StoreKind::Server(server) => AnyStore::Server(ServerStore::new(
                server,
                at.server_url(server),
                spec,
                at.server_options,
            )),
        }
    }
}

by_name!(StoreKind, "store", |name| StoreKind::all()
    .find(|k| k.name() == name));

/// Rows present in a store, as counted by `verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdRange {
    pub count: u64,
    /// The lowest and highest id ((0, 0) when empty); None for a keyed dataset, which
    /// stores no ids: `verify` then fetches every id's key.
    pub ids: Option<(u64, u64)>,
}

#[allow(async_fn_in_trait)]
pub trait Store {
    fn kind(&self) -> StoreKind;
    fn spec(&self) -> &DatasetSpec;
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
    /// Flush and drop the dataset's pages from the page cache.
    async fn evict(&mut self) -> Result<EvictionReport>;
    /// Count the ids actually present (a full scan: for `verify`, not for loading).
    async fn id_range(&mut self) -> Result<IdRange>;
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
    /// Bytes the complete dataset takes on disk (table, TOAST and indexes; the file);
    /// None where the store cannot say (then reported as unavailable).
    async fn disk_bytes(&mut self) -> Result<Option<u64>> {
        Ok(None)
    }
}

pub enum AnyStore {
    Sqlite(SqliteStore),
    Fs(FsStore),
    Floor(FloorStore),
    Server(ServerStore),
}

macro_rules! each_store {
    ($self:ident, $s:ident => $body:expr) => {
        match $self {
            AnyStore::Sqlite($s) => $body,
            AnyStore::Fs($s) => $body,
            AnyStore::Floor($s) => $body,
            AnyStore::Server($s) => $body,
        }
    };
}

impl Store for AnyStore {
    fn kind(&self) -> StoreKind {
        each_store!(self, s => s.kind())
    }
    fn spec(&self) -> &DatasetSpec {
        each_store!(self, s => s.spec())
    }
    fn location(&self) -> &Path {
        each_store!(self, s => s.location())
    }
    async fn state(&mut self) -> Result<DatasetState> {
        each_store!(self, s => s.state().await)
    }
    async fn begin(&mut self) -> Result<u64> {
        each_store!(self, s => s.begin().await)
    }
    fn rows_per_batch(&self) -> usize {
        each_store!(self, s => s.rows_per_batch())
    }
    async fn append(&mut self, first_id: u64, blobs: &mut Vec<Vec<u8>>) -> Result<()> {
        each_store!(self, s => s.append(first_id, blobs).await)
    }
    async fn finish(&mut self) -> Result<()> {
        each_store!(self, s => s.finish().await)
    }
    fn estimated_disk_bytes(&self, rows: u64) -> u64 {
        each_store!(self, s => s.estimated_disk_bytes(rows))
    }
    async fn evict(&mut self) -> Result<EvictionReport> {
        each_store!(self, s => s.evict().await)
    }
    async fn id_range(&mut self) -> Result<IdRange> {
        each_store!(self, s => s.id_range().await)
    }
    async fn remove(&mut self) -> Result<()> {
        each_store!(self, s => s.remove().await)
    }
    async fn remove_leftovers(&mut self) -> Result<Option<PathBuf>> {
        each_store!(self, s => s.remove_leftovers().await)
    }
    async fn finish_interrupted(&mut self) -> Result<Option<String>> {
        each_store!(self, s => s.finish_interrupted().await)
    }
    async fn read_chunk(&mut self, at: f64, bytes: u64) -> Result<u64> {
        each_store!(self, s => s.read_chunk(at, bytes).await)
    }
    async fn disk_bytes(&mut self) -> Result<Option<u64>> {
        each_store!(self, s => s.disk_bytes().await)
    }
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
    let count = bytes.div_ceil(spec.size.bytes()).clamp(1, spec.rows);
    let first = 1 + ((at * (spec.rows - count + 1) as f64) as u64).min(spec.rows - count);
    first..=first + count - 1
}

/// Rows per batch so that one batch holds about `target_bytes` (at least one row).
pub(crate) fn rows_for_batch(spec: &DatasetSpec, target_bytes: u64, max_rows: u64) -> usize {
    (target_bytes / spec.size.bytes()).clamp(1, max_rows) as usize
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
}
