//! The RocksDB store: one directory per dataset, `rocksdb/<stem>/`, its rows under
//! their keys and its manifest under `MANIFEST_KEY` in the same database. Each batch is
//! one write batch holding the rows and the manifest's resume point, synced to the WAL
//! before it returns, so a load killed at any moment resumes after the last batch
//! written, with exactly ids 1..=N there (the next open replays the WAL).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};

use super::handle::{Db, Mode, reader_is_open};
use super::knobs::RocksdbKnobs;
use crate::dataset::key::KEY_BYTES;
use crate::dataset::{DatasetSpec, DatasetState, Manifest};
use crate::db::store::{
    IdRange, Store, allocated_bytes, chunk_ids, delete_dir, remove_dataset_dir,
    remove_leftover_dir, rows_for_batch,
};
use crate::disk::evict::{EvictionReport, evict_file, resident_bytes};
use crate::error::InputError;

/// The manifest's key: 18 bytes, so no 8-byte id or 16-byte key can be it, and its first
/// byte sorts it after every integer id (ids below 2^56 start with 0).
pub const MANIFEST_KEY: &[u8] = b"\xffblobrace-manifest";
/// The file RocksDB names its current MANIFEST in: there once a database exists
/// (written to a temporary file and renamed, so it is whole or absent).
const CURRENT: &str = "CURRENT";
/// A batch's bytes, at most: each batch is in memory three times at once (the loader's
/// rows, the write batch's copy, the memtable's), so under a smaller cap it is half
/// the writer's memtable instead (`rows_per_batch`): 16 MiB batches of 4 MiB blobs took
/// the load to 122 MiB and a 96 MiB cap killed it, with a memtable of 6 MiB.
const BATCH_BYTES: u64 = 16 << 20;
const MAX_ROWS_PER_BATCH: u64 = 16384;

/// The folder of a dataset under the data directory: `rocksdb/<stem>`, then its layout
/// where that is not the default (`-noblob`, `-mb65536`, `-lz4`).
pub fn dataset_dir(data_dir: &Path, spec: &DatasetSpec, layout: RocksdbKnobs) -> PathBuf {
    data_dir.join(super::NAME).join(format!(
        "{}{}{}",
        spec.stem(),
        layout.blob_files.dir_suffix(),
        layout.compression.dir_suffix()
    ))
}

/// A file RocksDB makes in its directory: what a load killed before CURRENT existed
/// may have left, and nothing else (so another program's folder is never taken).
fn is_rocksdbs(name: &str) -> bool {
    matches!(name, "LOCK" | "IDENTITY" | "LOG")
        || name.starts_with("LOG.old.")
        || name.starts_with("MANIFEST-")
        || name.starts_with("OPTIONS-")
        || [".log", ".sst", ".blob", ".dbtmp"]
            .iter()
            .any(|ext| name.ends_with(ext))
}

pub struct RocksdbStore {
    spec: DatasetSpec,
    dir: PathBuf,
    /// Open between `begin` and `finish` (the loader's), closed otherwise so engines
    /// read what it wrote.
    db: Option<Db>,
    manifest: Option<Manifest>,
    layout: RocksdbKnobs,
    /// The writer's memtable (`handle::writer_memtable`: sized from the cap).
    memtable_bytes: u64,
}

impl RocksdbStore {
    pub fn new(
        data_dir: &Path,
        spec: DatasetSpec,
        layout: RocksdbKnobs,
        memtable_bytes: u64,
    ) -> Self {
        Self {
            dir: dataset_dir(data_dir, &spec, layout),
            spec,
            db: None,
            manifest: None,
            layout,
            memtable_bytes,
        }
    }

    /// A handle to read with: the loader's, an engine's open in this process, or one
    /// opened read-only for the call (`Mode::Inspect`: no file created or changed).
    fn reading(&self) -> Result<Reading<'_>> {
        if let Some(db) = &self.db {
            return Ok(Reading::Writer(db));
        }
        if reader_is_open(&self.dir) {
            return Ok(Reading::Shared(super::handle::reader(&self.dir, 0)?));
        }
        Ok(Reading::Own(Db::open(&self.dir, Mode::Inspect)?))
    }

    fn read_manifest(&self) -> Result<Option<Manifest>> {
        let reading = self.reading()?;
        let mut json = Vec::new();
        if !reading.db().lookup(MANIFEST_KEY, &mut json)? {
            return Ok(None);
        }
        let manifest = serde_json::from_slice(&json).map_err(|e| InputError::ForeignFile {
            path: self.dir.clone(),
            why: format!("its manifest is not readable JSON ({e})"),
        })?;
        Ok(Some(manifest))
    }

    /// Whether CURRENT names a MANIFEST (None: no CURRENT, the database never created).
    fn looks_like_rocksdb(&self) -> Result<Option<bool>> {
        match std::fs::read(self.dir.join(CURRENT)) {
            Ok(text) => Ok(Some(text.starts_with(b"MANIFEST-"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => {
                Err(e).with_context(|| format!("cannot read {}/{CURRENT}", self.dir.display()))
            }
        }
    }

    /// The directory's files, names and paths.
    fn files(&self) -> Result<Vec<(String, PathBuf)>> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&self.dir)
            .with_context(|| format!("cannot list {}", self.dir.display()))?
        {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                files.push((
                    entry.file_name().to_string_lossy().into_owned(),
                    entry.path(),
                ));
            }
        }
        files.sort();
        Ok(files)
    }
}

enum Reading<'a> {
    Writer(&'a Db),
    Shared(Arc<Db>),
    Own(Db),
}

impl Reading<'_> {
    fn db(&self) -> &Db {
        match self {
            Reading::Writer(db) => db,
            Reading::Shared(db) => db,
            Reading::Own(db) => db,
        }
    }
}

#[async_trait::async_trait(?Send)]
impl Store for RocksdbStore {
    fn spec(&self) -> &DatasetSpec {
        &self.spec
    }

    fn location(&self) -> &Path {
        &self.dir
    }

    /// RocksDB writes CURRENT when it creates a database.
    fn marker(&self) -> PathBuf {
        self.dir.join("CURRENT")
    }

    async fn state(&mut self) -> Result<DatasetState> {
        if !self.dir.exists() {
            return Ok(DatasetState::Absent);
        }
        match self.looks_like_rocksdb()? {
            None => {
                // Killed before RocksDB wrote CURRENT: only its own files may be there.
                if let Some((name, _)) = self.files()?.into_iter().find(|(n, _)| !is_rocksdbs(n)) {
                    return Err(InputError::ForeignFile {
                        path: self.dir.join(name),
                        why: "it is not a RocksDB file and the directory is no RocksDB database (no CURRENT)".into(),
                    }
                    .into());
                }
                return Ok(DatasetState::Partial { rows_done: 0 });
            }
            Some(false) => {
                return Err(InputError::ForeignFile {
                    path: self.dir.join(CURRENT),
                    why: "it is not a RocksDB database (its CURRENT names no MANIFEST)".into(),
                }
                .into());
            }
            Some(true) => {}
        }
        match self.read_manifest()? {
            None => Ok(DatasetState::Partial { rows_done: 0 }),
            Some(m) => Ok(m.state_of(&self.spec, &self.dir)?),
        }
    }

    async fn begin(&mut self) -> Result<u64> {
        match self.state().await? {
            DatasetState::Absent => {
                self.remove_leftovers().await?;
            }
            DatasetState::Partial { rows_done: 0 } if self.looks_like_rocksdb()?.is_none() => {
                // RocksDB's files of a create that never finished: start it again.
                for (_, path) in self.files()? {
                    std::fs::remove_file(&path)
                        .with_context(|| format!("cannot remove {}", path.display()))?;
                }
            }
            _ => {}
        }
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        self.db = Some(Db::open(
            &self.dir,
            Mode::Write(self.layout, self.memtable_bytes),
        )?);
        let manifest = match self.read_manifest()? {
            Some(m) => m,
            None => {
                let mut m = Manifest::started(&self.spec);
                m.rows_done = Some(0);
                let json = serde_json::to_vec(&m)?;
                let db = self.db.as_ref().expect("opened above");
                db.write_synced(std::iter::once((MANIFEST_KEY, json.as_slice())))?;
                m
            }
        };
        let done = manifest.rows_done.unwrap_or(0);
        self.manifest = Some(manifest);
        Ok(done)
    }

    fn rows_per_batch(&self) -> usize {
        rows_for_batch(
            &self.spec,
            BATCH_BYTES.min(self.memtable_bytes / 2),
            MAX_ROWS_PER_BATCH,
        )
    }

    async fn append(&mut self, first_id: u64, blobs: &mut Vec<Vec<u8>>) -> Result<()> {
        let db = self.db.as_ref().context("append before begin")?;
        let manifest = self.manifest.as_mut().context("append before begin")?;
        let mut keys = vec![[0u8; KEY_BYTES]; blobs.len()];
        let lens: Vec<usize> = keys
            .iter_mut()
            .enumerate()
            .map(|(i, key)| self.spec.key_into(first_id + i as u64, key))
            .collect();
        manifest.rows_done = Some(first_id + blobs.len() as u64 - 1);
        let json = serde_json::to_vec(manifest)?;
        let rows = keys
            .iter()
            .zip(&lens)
            .zip(blobs.iter())
            .map(|((key, &n), blob)| (&key[..n], blob.as_slice()));
        db.write_synced(rows.chain(std::iter::once((MANIFEST_KEY, json.as_slice()))))
    }

    async fn finish(&mut self) -> Result<()> {
        let db = self.db.take().context("finish before begin")?;
        let manifest = self.manifest.as_mut().context("finish before begin")?;
        manifest.complete = true;
        manifest.loaded_at = Some(crate::now_rfc3339());
        let json = serde_json::to_vec(manifest)?;
        db.write_synced(std::iter::once((MANIFEST_KEY, json.as_slice())))?;
        // The blobs into blob files and the WAL emptied, so a reader opens without
        // replaying gigabytes of log; the LSM settled, so none compacts while measured.
        db.flush()?;
        db.compact_all();
        drop(db);
        Ok(())
    }

    /// Its directory's allocated blocks: blob files, SST files of keys and blob
    /// references, and what compaction has not yet reclaimed.
    async fn disk_bytes(&mut self) -> Result<Option<u64>> {
        let bytes = allocated_bytes(&self.dir)
            .with_context(|| format!("cannot count the bytes of {}", self.dir.display()))?;
        Ok(Some(bytes))
    }

    fn estimated_disk_bytes(&self, rows: u64) -> u64 {
        // A blob file record is the blob with its key and a header (about 32 bytes);
        // the LSM keeps a blob reference (key, file, offset, size: about 40 bytes) per
        // row; the last memtable's WAL is gone after the final flush.
        let key = if self.spec.key.is_ordered() { 8 } else { 16 };
        let per_row = |size: u64| size + 2 * key + 80;
        self.spec.sum_over_rows(rows, per_row) + (1 << 20)
    }

    fn load_scratch(&self) -> Option<(u64, &'static str)> {
        // Each memtable's WAL stays until that memtable is flushed, and RocksDB keeps
        // two (max_write_buffer_number): the one filling and the one being flushed,
        // whose blob file is written beside its WAL. Uncounted, a 96 MiB load that the
        // plan passed on a 200 MiB disk filled it with 128 MiB of WAL.
        Some((2 * self.memtable_bytes, "write-ahead log while it loads"))
    }

    async fn evict(&mut self) -> Result<EvictionReport> {
        drop(self.db.take());
        let started = Instant::now();
        let engine_open = reader_is_open(&self.dir);
        let mut report = EvictionReport {
            method: if engine_open {
                "fdatasync + posix_fadvise(DONTNEED) on every file; RocksDB's block and blob cache was kept: an engine of this process held the database open".into()
            } else {
                "fdatasync + posix_fadvise(DONTNEED) on every file; RocksDB's block and blob cache closed with its handle".into()
            },
            ..Default::default()
        };
        if self.dir.exists() {
            let mut resident = 0;
            for (_, path) in self.files()? {
                report.bytes += evict_file(&path)?;
                report.files += 1;
                resident += resident_bytes(&path)?;
            }
            report.resident_after_bytes = Some(resident);
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    async fn id_range(&mut self) -> Result<IdRange> {
        let reading = self.reading()?;
        let (mut count, mut first, mut last) = (0u64, None, None);
        let mut bad = None;
        let keyed = self.spec.key_of(1).is_some();
        reading.db().each_key(|key| {
            if key == MANIFEST_KEY {
                return true;
            }
            count += 1;
            if !keyed {
                match <[u8; 8]>::try_from(key) {
                    Ok(bytes) => {
                        let id = u64::from_be_bytes(bytes);
                        first.get_or_insert(id);
                        last = Some(id);
                    }
                    Err(_) => {
                        bad = Some(key.len());
                        return false;
                    }
                }
            }
            true
        })?;
        if let Some(len) = bad {
            anyhow::bail!("a key of {len} bytes in {}", self.dir.display());
        }
        Ok(IdRange {
            count,
            ids: (!keyed).then(|| (first.unwrap_or(0), last.unwrap_or(0))),
        })
    }

    async fn remove(&mut self) -> Result<()> {
        drop(self.db.take());
        remove_dataset_dir(&self.dir, delete_dir)
    }

    async fn remove_leftovers(&mut self) -> Result<Option<PathBuf>> {
        remove_leftover_dir(&self.dir, delete_dir)
    }

    /// The chunk's rows read through RocksDB: through the engines' handle where one is
    /// open (its block and blob cache fill as theirs would), else through a read-only one
    /// opened for the call (the page cache fills with the blob files' and index blocks'
    /// pages).
    async fn read_chunk(&mut self, at: f64, bytes: u64) -> Result<u64> {
        let reading = self.reading()?;
        let db = reading.db();
        let mut key = [0u8; KEY_BYTES];
        let mut out = Vec::new();
        let mut done = 0;
        for id in chunk_ids(&self.spec, at, bytes) {
            let n = self.spec.key_into(id, &mut key);
            if db.lookup(&key[..n], &mut out)? {
                done += out.len() as u64;
            }
        }
        Ok(done)
    }

    /// The files that hold the blobs' bytes: its blob files (the SST files then hold
    /// their keys), or its SST files where no value went to a blob file (no blob files,
    /// or every blob under `min_blob_size`).
    fn own_files(&mut self, count: usize, _seed: u64) -> Result<Vec<PathBuf>, String> {
        let files = self.files().map_err(|e| format!("{e:#}"))?;
        let with = |ext: &str| -> Vec<PathBuf> {
            files
                .iter()
                .filter(|(name, _)| name.ends_with(ext))
                .map(|(_, path)| path.clone())
                .take(count.max(1))
                .collect()
        };
        let held = match with(".blob") {
            blobs if blobs.is_empty() => with(".sst"),
            blobs => blobs,
        };
        if held.is_empty() {
            return Err(format!(
                "{} has neither blob files nor SST files",
                self.dir.display()
            ));
        }
        Ok(held)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_disk_estimate_holds_what_a_load_takes_within_a_third() {
        if let Err(why) = super::super::ffi::library() {
            crate::say!("skipped: {why}");
            assert!(std::env::var("CI").is_err(), "CI installs RocksDB: {why}");
            return;
        }
        use super::{RocksdbKnobs, RocksdbStore};
        use crate::db::rocksdb::BlobFiles;
        crate::db::store::checks::assert_disk_estimate_holds(|dir, spec| {
            RocksdbStore::new(dir, spec, RocksdbKnobs::default(), 4 << 20)
        });
        // Every value in the SST files: their blocks and index instead of blob files.
        crate::db::store::checks::assert_disk_estimate_holds(|dir, spec| {
            RocksdbStore::new(
                dir,
                spec,
                RocksdbKnobs {
                    blob_files: BlobFiles::Off,
                    ..Default::default()
                },
                4 << 20,
            )
        });
    }

    #[test]
    fn only_rocksdbs_own_file_names_are_taken_for_a_create_cut_short() {
        for name in [
            "LOCK",
            "IDENTITY",
            "LOG",
            "MANIFEST-000001",
            "OPTIONS-000007",
            "000004.log",
            "000012.sst",
            "000010.blob",
        ] {
            assert!(super::is_rocksdbs(name), "{name}");
        }
        for name in ["notes.txt", "CURRENT.bak", "data.mdb"] {
            assert!(!super::is_rocksdbs(name), "{name}");
        }
    }
}
