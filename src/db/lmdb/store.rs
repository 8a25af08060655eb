//! The LMDB store: one environment per dataset, `lmdb/<stem>/` (LMDB's `data.mdb`
//! and `lock.mdb`), its rows in the `blobs` table and its manifest in the `manifest`
//! table of the same environment. Each batch is one write transaction holding the rows
//! and the manifest's resume point, committed durably (LMDB's default: the data, then
//! the meta page, each synced), so a load killed at any moment resumes after the last
//! batch committed, with exactly ids 1..=N there.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use heed::{Env, PutFlags};

use super::handle::{
    Blobs, MANIFEST_KEY, ManifestTable, ReadAhead, Tables, create_tables, env, is_open, tables,
};
use crate::dataset::key::KEY_BYTES;
use crate::dataset::{DatasetSpec, DatasetState, Manifest};
use crate::db::single_file::{self, id_range_of_keys, own_file, state_before_file};
use crate::db::store::{
    IdRange, Store, delete_dir, remove_dataset_dir, remove_leftover_dir, rows_for_batch,
    written_head,
};
use crate::disk::evict::EvictionReport;
use crate::error::InputError;

/// LMDB's data file in a dataset's folder.
pub const FILE: &str = "data.mdb";
/// LMDB's magic number, the first field of the meta page, after the page header.
const MAGIC: u32 = 0xBEEF_C0DE;
const MAGIC_AT: usize = 16;
const BATCH_BYTES: u64 = 16 << 20;
const MAX_ROWS_PER_BATCH: u64 = 16384;
/// LMDB's page: the OS page on Linux. A value that does not fit half a page's node
/// goes to overflow pages of its own: a header, then the value, in whole pages.
const PAGE: u64 = 4096;
const PAGE_HEADER: u64 = 16;

/// The folder of a dataset under the data directory.
pub fn dataset_dir(data_dir: &Path, spec: &DatasetSpec) -> PathBuf {
    data_dir.join(super::NAME).join(spec.stem())
}

/// An open environment and its tables.
struct Open {
    env: Arc<Env>,
    blobs: Blobs,
    manifest: ManifestTable,
}

pub struct LmdbStore {
    spec: DatasetSpec,
    dir: PathBuf,
    file: PathBuf,
    /// Held between `begin` and `finish` (the loader's), let go otherwise, so the
    /// environment closes (and its map goes) when the engines let go of it too.
    open: Option<Open>,
    manifest: Option<Manifest>,
}

impl LmdbStore {
    pub fn new(data_dir: &Path, spec: DatasetSpec) -> Self {
        let dir = dataset_dir(data_dir, &spec);
        Self {
            spec,
            file: dir.join(FILE),
            dir,
            open: None,
            manifest: None,
        }
    }

    /// The environment and its tables (None before the first commit made them): the
    /// loader's, or opened for the call.
    fn reading(&self) -> Result<(Arc<Env>, Option<Tables>)> {
        if let Some(open) = &self.open {
            return Ok((open.env.clone(), Some((open.blobs, open.manifest))));
        }
        let env = env(&self.dir, ReadAhead::Kernel)?;
        let tables = tables(&env)?;
        Ok((env, tables))
    }

    /// The manifest in the environment; None before the first commit wrote it.
    fn read_manifest(&self) -> Result<Option<Manifest>> {
        let (env, tables) = self.reading()?;
        let Some((_, table)) = tables else {
            return Ok(None);
        };
        let txn = env.read_txn()?;
        let Some(json) = table.get(&txn, MANIFEST_KEY)? else {
            return Ok(None);
        };
        let manifest = serde_json::from_str(json).map_err(|e| InputError::ForeignFile {
            path: self.file.clone(),
            why: format!("its manifest is not readable JSON ({e})"),
        })?;
        Ok(Some(manifest))
    }

    /// Write the manifest in `txn`, with the rows it describes.
    fn put_manifest(
        table: &ManifestTable,
        txn: &mut heed::RwTxn,
        manifest: &Manifest,
    ) -> Result<()> {
        table.put(txn, MANIFEST_KEY, &serde_json::to_string(manifest)?)?;
        Ok(())
    }

    /// Whether the data file holds LMDB's magic number (None: nothing written there
    /// yet, a load killed as LMDB created it).
    fn looks_like_lmdb(&self) -> Result<Option<bool>> {
        let head = written_head(&self.file, MAGIC_AT + 4)?;
        Ok(head.map(|head| head[MAGIC_AT..] == MAGIC.to_le_bytes()))
    }

    /// Whether the second meta page (page 1) holds LMDB's magic number.
    fn second_meta_is_lmdb(&self) -> Result<bool> {
        let at = PAGE as usize + MAGIC_AT;
        let head = written_head(&self.file, at + 4)?;
        Ok(head.is_some_and(|head| head[at..] == MAGIC.to_le_bytes()))
    }

    /// Ids in order append to the B+tree's last page (LMDB's `MDB_APPEND`: no search,
    /// full pages); random keys go where they sort.
    fn put_flags(&self) -> PutFlags {
        if self.spec.key.is_ordered() && self.spec.key_of(1).is_none() {
            PutFlags::APPEND
        } else {
            PutFlags::empty()
        }
    }
}

#[async_trait::async_trait(?Send)]
impl Store for LmdbStore {
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
        if let Some(state) = state_before_file(&self.dir, &self.file, &["lock.mdb"])? {
            return Ok(state);
        }
        match self.looks_like_lmdb()? {
            None => return Ok(DatasetState::Partial { rows_done: 0 }),
            // LMDB keeps two meta pages: the second still LMDB's is a dataset of
            // ours whose first page was overwritten (damaged: `drop` removes it), not
            // someone else's file (refused and left as it was).
            Some(false) if self.second_meta_is_lmdb()? => {
                return Err(InputError::DatasetDamaged {
                    path: self.file.clone(),
                    why: "its first meta page is overwritten (the second is LMDB's)".into(),
                }
                .into());
            }
            Some(false) => {
                return Err(InputError::ForeignFile {
                    path: self.file.clone(),
                    why: "it is not an LMDB data file".into(),
                }
                .into());
            }
            Some(true) => {}
        }
        match self.read_manifest()? {
            // Created, but killed before the first commit wrote the manifest.
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
        if self.file.exists() && self.looks_like_lmdb()?.is_none() {
            // Created but never written (state() said Partial at 0): LMDB would refuse it.
            std::fs::remove_file(&self.file)
                .with_context(|| format!("cannot remove {}", self.file.display()))?;
        }
        let env = env(&self.dir, ReadAhead::Kernel)?;
        let (blobs, manifest_table) = match tables(&env)? {
            Some(t) => t,
            None => create_tables(&env)?,
        };
        self.open = Some(Open {
            env: env.clone(),
            blobs,
            manifest: manifest_table,
        });
        let manifest = match self.read_manifest()? {
            Some(m) => m,
            None => {
                let mut m = Manifest::started(&self.spec);
                m.rows_done = Some(0);
                let mut txn = env.write_txn()?;
                Self::put_manifest(&manifest_table, &mut txn, &m)?;
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
        let flags = self.put_flags();
        let open = self.open.as_ref().context("append before begin")?;
        let manifest = self.manifest.as_mut().context("append before begin")?;
        let mut txn = open.env.write_txn()?;
        let mut key = [0u8; KEY_BYTES];
        for (i, blob) in blobs.iter().enumerate() {
            let n = self.spec.key_into(first_id + i as u64, &mut key);
            open.blobs
                .put_with_flags(&mut txn, flags, &key[..n], blob.as_slice())
                .with_context(|| format!("cannot write to {}", self.file.display()))?;
        }
        manifest.rows_done = Some(first_id + blobs.len() as u64 - 1);
        Self::put_manifest(&open.manifest, &mut txn, manifest)?;
        txn.commit()
            .with_context(|| format!("cannot commit to {}", self.file.display()))?;
        Ok(())
    }

    async fn finish(&mut self) -> Result<()> {
        let open = self.open.take().context("finish before begin")?;
        let manifest = self.manifest.as_mut().context("finish before begin")?;
        manifest.complete = true;
        manifest.loaded_at = Some(crate::now_rfc3339());
        let mut txn = open.env.write_txn()?;
        Self::put_manifest(&open.manifest, &mut txn, manifest)?;
        txn.commit()?;
        // Let go: the environment closes unless an engine of this process holds it.
        drop(open);
        Ok(())
    }

    /// LMDB grows its data file as pages are written and reuses freed pages, never
    /// shrinking it.
    async fn disk_bytes(&mut self) -> Result<Option<u64>> {
        single_file::disk_bytes(&self.dir)
    }

    fn estimated_disk_bytes(&self, rows: u64) -> u64 {
        // Measured at full scale (3 GiB, ids in order, 2026-11-28): 1 KiB blobs took
        // 4.02 GiB (three nodes to a 4 KiB leaf, filled whole by the appends), 64 KiB ones
        // 3.19 GiB (17 pages each). Random keys split leaves where they land: allowed
        // twice the blob (the test below holds each estimate within a third of a load).
        let ordered = self.spec.key.is_ordered();
        let per_row = |size: u64| {
            if size > PAGE / 2 {
                // Overflow pages: the header and the value in whole pages (a 64 KiB
                // blob takes 17), and its node in a leaf.
                (size + PAGE_HEADER).div_ceil(PAGE) * PAGE + 64
            } else if ordered {
                size * 3 / 2 + 64
            } else {
                size * 2 + 64
            }
        };
        self.spec.sum_over_rows(rows, per_row) + (1 << 20)
    }

    async fn evict(&mut self) -> Result<EvictionReport> {
        drop(self.open.take());
        let method = if is_open(&self.dir) {
            "fdatasync + posix_fadvise(DONTNEED); pages an engine of this process still maps stay cached"
        } else {
            "environment closed (map gone), then fdatasync + posix_fadvise(DONTNEED)"
        };
        single_file::evict(&self.file, method.into())
    }

    async fn id_range(&mut self) -> Result<IdRange> {
        let (env, tables) = self.reading()?;
        let Some((blobs, _)) = tables else {
            return Ok(IdRange {
                count: 0,
                ids: self.spec.key_of(1).is_none().then_some((0, 0)),
            });
        };
        let txn = env.read_txn()?;
        let count = blobs.len(&txn)?;
        if self.spec.key_of(1).is_some() {
            // Random keys say nothing of ids: `verify` fetches every id's key.
            return Ok(IdRange { count, ids: None });
        }
        let first = blobs.first(&txn)?.map(|(k, _)| k);
        let last = blobs.last(&txn)?.map(|(k, _)| k);
        id_range_of_keys(count, first, last, &self.file)
    }

    async fn remove(&mut self) -> Result<()> {
        drop(self.open.take());
        remove_dataset_dir(&self.dir, delete_dir)
    }

    async fn remove_leftovers(&mut self) -> Result<Option<PathBuf>> {
        remove_leftover_dir(&self.dir, delete_dir)
    }

    /// The data file's pages through the page cache, which LMDB's map reads.
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
        crate::db::store::checks::assert_disk_estimate_holds(super::LmdbStore::new);
    }
}
