//! The redb store: one file per dataset, `redb/<stem>/blobs.redb`, its rows in the
//! `blobs` table and its manifest in the `manifest` table of the same file. Each batch
//! is one write transaction holding the rows and the manifest's resume point, committed
//! durably (redb's default, `Durability::Immediate`), so a load killed at any moment
//! resumes after the last batch committed, with exactly ids 1..=N there.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use redb::{Database, ReadOnlyDatabase, ReadTransaction, ReadableDatabase, ReadableTable};
use redb::{ReadableTableMetadata, TableError};

use super::handle::{BLOBS, MANIFEST, MANIFEST_KEY, guarded, reader_is_open, writer};
use crate::dataset::key::KEY_BYTES;
use crate::dataset::{DatasetSpec, DatasetState, Manifest};
use crate::db::single_file::{self, id_range_of_keys, own_file, state_before_file};
use crate::db::store::{
    IdRange, Store, delete_dir, remove_dataset_dir, remove_leftover_dir, rows_for_batch,
    written_head,
};
use crate::disk::evict::EvictionReport;
use crate::error::InputError;

/// The dataset's file in its folder.
pub const FILE: &str = "blobs.redb";
/// redb's magic number starts with these bytes.
const MAGIC: &[u8; 4] = b"redb";
const BATCH_BYTES: u64 = 16 << 20;
const MAX_ROWS_PER_BATCH: u64 = 16384;

/// The folder of a dataset under the data directory.
pub fn dataset_dir(data_dir: &Path, spec: &DatasetSpec) -> PathBuf {
    data_dir.join(super::NAME).join(spec.stem())
}

/// A way to read the file: the store's own writer while it loads, an engine's
/// handle where one is open in this process, or a writer opened for the call (which
/// repairs a file whose last writer stopped mid-commit).
enum Reading<'a> {
    Writer(&'a Database),
    Shared(Arc<ReadOnlyDatabase>),
    Own(Database),
}

impl Reading<'_> {
    fn begin(&self) -> Result<ReadTransaction> {
        Ok(match self {
            Reading::Writer(db) => db.begin_read()?,
            Reading::Shared(db) => db.begin_read()?,
            Reading::Own(db) => db.begin_read()?,
        })
    }
}

pub struct RedbStore {
    spec: DatasetSpec,
    dir: PathBuf,
    file: PathBuf,
    /// Open between `begin` and `finish` (the loader's), closed otherwise so engines
    /// can open the file.
    db: Option<Database>,
    manifest: Option<Manifest>,
}

impl RedbStore {
    pub fn new(data_dir: &Path, spec: DatasetSpec) -> Self {
        // redb's panics on a damaged file are said as the dataset's damage (`guarded`).
        crate::db::contained::install_hook();
        let dir = dataset_dir(data_dir, &spec);
        Self {
            spec,
            file: dir.join(FILE),
            dir,
            db: None,
            manifest: None,
        }
    }

    fn reading(&self) -> Result<Reading<'_>> {
        if let Some(db) = &self.db {
            return Ok(Reading::Writer(db));
        }
        if reader_is_open(&self.file) {
            return Ok(Reading::Shared(super::handle::reader(&self.file, 0)?));
        }
        Ok(Reading::Own(writer(&self.file, false)?))
    }

    /// The manifest in the file; None before the first commit made the tables.
    fn read_manifest(&self) -> Result<Option<Manifest>> {
        // The handle outlives the transaction: a closed one fails its reads.
        let reading = self.reading()?;
        let txn = reading.begin()?;
        let table = match txn.open_table(MANIFEST) {
            Ok(t) => t,
            Err(TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(e).context("cannot open the manifest table"),
        };
        let Some(json) = table.get(MANIFEST_KEY)? else {
            return Ok(None);
        };
        let manifest = serde_json::from_str(json.value()).map_err(|e| InputError::ForeignFile {
            path: self.file.clone(),
            why: format!("its manifest is not readable JSON ({e})"),
        })?;
        Ok(Some(manifest))
    }

    /// Write the manifest in `txn`, with the rows it describes.
    fn put_manifest(txn: &redb::WriteTransaction, manifest: &Manifest) -> Result<()> {
        let mut table = txn.open_table(MANIFEST)?;
        table.insert(MANIFEST_KEY, serde_json::to_string(manifest)?.as_str())?;
        Ok(())
    }

    /// The rows' count and first and last ids, read now (`Store::id_range`).
    fn id_range_now(&self) -> Result<IdRange> {
        let reading = self.reading()?;
        let txn = reading.begin()?;
        let table = match txn.open_table(BLOBS) {
            Ok(t) => t,
            Err(TableError::TableDoesNotExist(_)) => {
                return Ok(IdRange {
                    count: 0,
                    ids: self.spec.key_of(1).is_none().then_some((0, 0)),
                });
            }
            Err(e) => return Err(e.into()),
        };
        let count = table.len()?;
        if self.spec.key_of(1).is_some() {
            // Random keys say nothing of ids: `verify` fetches every id's key.
            return Ok(IdRange { count, ids: None });
        }
        let first = table.first()?;
        let last = table.last()?;
        id_range_of_keys(
            count,
            first.as_ref().map(|(k, _)| k.value()),
            last.as_ref().map(|(k, _)| k.value()),
            &self.file,
        )
    }

    /// Whether the file starts with redb's magic number (None: nothing written there
    /// yet, a load killed as redb created it).
    fn looks_like_redb(&self) -> Result<Option<bool>> {
        Ok(written_head(&self.file, MAGIC.len())?.map(|head| head == MAGIC))
    }
}

#[async_trait::async_trait(?Send)]
impl Store for RedbStore {
    fn spec(&self) -> &DatasetSpec {
        &self.spec
    }

    fn location(&self) -> &Path {
        &self.dir
    }

    fn marker(&self) -> PathBuf {
        self.file.clone()
    }

    async fn state(&mut self) -> Result<DatasetState> {
        if let Some(state) = state_before_file(&self.dir, &self.file, &[])? {
            return Ok(state);
        }
        match self.looks_like_redb()? {
            None => return Ok(DatasetState::Partial { rows_done: 0 }),
            Some(false) => {
                return Err(InputError::ForeignFile {
                    path: self.file.clone(),
                    why: "it is not a redb file".into(),
                }
                .into());
            }
            Some(true) => {}
        }
        match guarded(&self.file, || self.read_manifest())? {
            // Created, but killed before the first commit made the tables.
            None => Ok(DatasetState::Partial { rows_done: 0 }),
            Some(m) => Ok(m.state_of(&self.spec, &self.dir)?),
        }
    }

    async fn begin(&mut self) -> Result<u64> {
        if let DatasetState::Absent = self.state().await? {
            self.remove_leftovers().await?;
            std::fs::create_dir_all(&self.dir)
                .with_context(|| format!("cannot create {}", self.dir.display()))?;
        }
        if self.file.exists() && self.looks_like_redb()?.is_none() {
            // Created but never written (state() said Partial at 0): redb would not open it.
            std::fs::remove_file(&self.file)
                .with_context(|| format!("cannot remove {}", self.file.display()))?;
        }
        let db = guarded(&self.file, || writer(&self.file, true))?;
        self.db = Some(db);
        let manifest = match guarded(&self.file, || self.read_manifest())? {
            Some(m) => m,
            None => {
                let mut m = Manifest::started(&self.spec);
                m.rows_done = Some(0);
                let db = self.db.as_ref().expect("opened above");
                let txn = db.begin_write()?;
                Self::put_manifest(&txn, &m)?;
                txn.open_table(BLOBS)?;
                txn.commit()?;
                m
            }
        };
        let done = manifest.rows_done.unwrap_or(0);
        self.manifest = Some(manifest);
        Ok(done)
    }

    fn rows_per_batch(&self) -> usize {
        rows_for_batch(&self.spec, BATCH_BYTES, MAX_ROWS_PER_BATCH)
    }

    async fn append(&mut self, first_id: u64, blobs: &mut Vec<Vec<u8>>) -> Result<()> {
        let db = self.db.as_ref().context("append before begin")?;
        let manifest = self.manifest.as_mut().context("append before begin")?;
        let txn = db.begin_write()?;
        {
            let mut table = txn.open_table(BLOBS)?;
            let mut key = [0u8; KEY_BYTES];
            for (i, blob) in blobs.iter().enumerate() {
                let n = self.spec.key_into(first_id + i as u64, &mut key);
                table.insert(&key[..n], blob.as_slice())?;
            }
        }
        manifest.rows_done = Some(first_id + blobs.len() as u64 - 1);
        Self::put_manifest(&txn, manifest)?;
        txn.commit()
            .with_context(|| format!("cannot commit to {}", self.file.display()))?;
        Ok(())
    }

    async fn finish(&mut self) -> Result<()> {
        let db = self.db.take().context("finish before begin")?;
        let manifest = self.manifest.as_mut().context("finish before begin")?;
        manifest.complete = true;
        manifest.loaded_at = Some(crate::now_rfc3339());
        let txn = db.begin_write()?;
        Self::put_manifest(&txn, manifest)?;
        txn.commit()?;
        // Closed: the engines open the file next.
        drop(db);
        Ok(())
    }

    /// redb grows its file in regions, so the file holds free pages beside its rows.
    async fn disk_bytes(&mut self) -> Result<Option<u64>> {
        single_file::disk_bytes(&self.dir)
    }

    fn estimated_disk_bytes(&self, rows: u64) -> u64 {
        // A value of a page or more gets a leaf of its own, a power-of-two run of 4 KiB
        // pages holding the key and the value: a 64 KiB blob takes 128 KiB. Smaller
        // values share leaves: 1.37x at 1 KiB under ids inserted in order, 1.75x under
        // random keys, whose inserts split leaves half full (measured: 4 MiB of 1 KiB
        // blobs took 5.49 and 7.00 MiB).
        let ordered = self.spec.key.is_ordered();
        let per_row = |size: u64| {
            if size >= 4096 {
                (size + 64).next_power_of_two()
            } else if ordered {
                size * 3 / 2 + 64
            } else {
                size * 2 + 64
            }
        };
        self.spec.sum_over_rows(rows, per_row) + (1 << 20)
    }

    async fn evict(&mut self) -> Result<EvictionReport> {
        // Our writer's cache goes with it; an engine's handle keeps its own.
        drop(self.db.take());
        let method = if reader_is_open(&self.file) {
            "fdatasync + posix_fadvise(DONTNEED); redb's own cache was kept: an engine of this process held the file open"
        } else {
            "fdatasync + posix_fadvise(DONTNEED); redb's own cache closed with its handle"
        };
        single_file::evict(&self.file, method.into())
    }

    async fn id_range(&mut self) -> Result<IdRange> {
        guarded(&self.file, || self.id_range_now())
    }

    async fn remove(&mut self) -> Result<()> {
        drop(self.db.take());
        remove_dataset_dir(&self.dir, delete_dir)
    }

    async fn remove_leftovers(&mut self) -> Result<Option<PathBuf>> {
        remove_leftover_dir(&self.dir, delete_dir)
    }

    /// The file's pages through the page cache, which redb reads through (pread); its
    /// own cache fills as the engines fetch.
    async fn read_chunk(&mut self, at: f64, bytes: u64) -> Result<u64> {
        crate::db::store::read_file_chunk(&self.file, at, bytes)
    }

    fn own_files(&mut self, _count: usize, _seed: u64) -> Result<Vec<PathBuf>, String> {
        own_file(&self.file)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_disk_estimate_holds_what_a_load_takes_within_a_third() {
        crate::db::store::checks::assert_disk_estimate_holds(super::RedbStore::new);
    }
}
