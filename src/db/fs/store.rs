//! "Just use files": one file per blob under `fs/<size>-x<rows>/`, sharded two
//! levels deep by id (`<(id>>16)%256>/<(id>>8)%256>/<id>`) so no directory holds
//! more than 256 files below 16M ids. `manifest.json` holds the resume point:
//! it advances only after a batch's files are fully written, and a resumed load
//! rewrites (truncates) everything after it, so a kill at any moment leaves
//! exactly ids 1..=N once the load is re-run.

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::dataset::{DatasetSpec, DatasetState, Manifest};
use crate::db::store::{
    IdRange, Store, allocated_bytes, read_manifest, rows_for_batch, write_manifest,
};
use crate::disk::evict::{EvictionReport, evict_flushed_file, sync_filesystem};
use crate::error::InputError;

const BATCH_BYTES: u64 = 16 << 20;
const MAX_FILES_PER_BATCH: u64 = 4096;
/// Threads evicting a tree of files.
const EVICT_THREADS: u64 = 4;
/// Threads deleting a tree of files. An unlink mostly waits on the filesystem's journal,
/// not the CPU: 307k files of 1 KiB took 22 s in one thread and 5.4 s in 16 (this
/// machine, 2 cores), and `--drop-after` deletes 3.1M of them at 1 KiB.
const REMOVE_THREADS: usize = 16;

/// Write the path of blob `id` below `dir` into `out` (cleared first), NUL-terminated
/// so it can go straight to `open(2)`. Reusing `out` keeps the fetch allocation-free.
pub fn blob_path_into(dir: &[u8], id: u64, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(dir);
    // `write!` into a Vec never fails.
    let _ = write!(
        out,
        "/{:02x}/{:02x}/{}\0",
        (id >> 16) & 0xff,
        (id >> 8) & 0xff,
        id
    );
}

/// Delete a shard tree, if it exists: its leaf directories in parallel, then the rest.
fn remove_tree(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    remove_leaf_dirs_in_parallel(dir)?;
    std::fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))
}

/// Delete the shard tree's leaf directories (`dir/<xx>/<yy>/`), spread over
/// `REMOVE_THREADS` threads; the caller removes what is left.
fn remove_leaf_dirs_in_parallel(dir: &Path) -> Result<()> {
    let mut leaves = Vec::new();
    for level1 in std::fs::read_dir(dir)? {
        let level1 = level1?;
        if !level1.file_type()?.is_dir() {
            continue;
        }
        for level2 in std::fs::read_dir(level1.path())? {
            let level2 = level2?;
            if level2.file_type()?.is_dir() {
                leaves.push(level2.path());
            }
        }
    }
    let leaves = &leaves;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..REMOVE_THREADS)
            .map(|t| {
                scope.spawn(move || -> Result<()> {
                    for leaf in leaves.iter().skip(t).step_by(REMOVE_THREADS) {
                        std::fs::remove_dir_all(leaf)
                            .with_context(|| format!("cannot remove {}", leaf.display()))?;
                    }
                    Ok(())
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| {
            w.join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("a removing thread panicked")))
        })
    })
}

pub struct FsStore {
    spec: DatasetSpec,
    dir: PathBuf,
    manifest: Option<Manifest>,
    path_buf: Vec<u8>,
}

impl FsStore {
    pub fn new(data_dir: &Path, spec: DatasetSpec) -> Self {
        Self {
            spec,
            dir: data_dir.join("fs").join(spec.stem()),
            manifest: None,
            path_buf: Vec::new(),
        }
    }

    fn manifest_path(&self) -> PathBuf {
        self.dir.join("manifest.json")
    }

    fn blob_path(&mut self, id: u64) -> PathBuf {
        use std::os::unix::ffi::OsStrExt;
        blob_path_into(self.dir.as_os_str().as_bytes(), id, &mut self.path_buf);
        let without_nul = &self.path_buf[..self.path_buf.len() - 1];
        PathBuf::from(std::ffi::OsStr::from_bytes(without_nul))
    }

    /// Whether the directory holds nothing of a load yet: no entry, or only the first
    /// manifest's temporary copy (a load killed between writing it and renaming it into
    /// place, 80 ms into a load here, leaves just that).
    fn dir_is_empty(&self) -> Result<bool> {
        let mut entries = std::fs::read_dir(&self.dir)
            .with_context(|| format!("cannot list {}", self.dir.display()))?;
        Ok(entries.all(|e| e.is_ok_and(|e| e.file_name() == "manifest.json.tmp")))
    }
}

#[async_trait::async_trait(?Send)]
impl Store for FsStore {
    fn spec(&self) -> &DatasetSpec {
        &self.spec
    }

    fn location(&self) -> &Path {
        &self.dir
    }

    fn marker(&self) -> PathBuf {
        self.manifest_path()
    }

    /// The files of `count` blobs drawn at random (seeded): their paths are computed,
    /// not listed (a directory walk over 3 million files would fill the cap with
    /// dentries).
    fn own_files(&mut self, count: usize, seed: u64) -> Result<Vec<PathBuf>, String> {
        use rand::{RngExt, SeedableRng};
        let rows = self.spec.rows;
        if rows == 0 {
            return Err("the dataset has no rows".into());
        }
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(seed);
        Ok((0..count.max(1))
            .map(|_| self.blob_path(rng.random_range(1..=rows)))
            .collect())
    }

    async fn state(&mut self) -> Result<DatasetState> {
        if !self.dir.exists() {
            return Ok(DatasetState::Absent);
        }
        let Some(manifest) = read_manifest(&self.manifest_path())? else {
            if self.dir_is_empty()? {
                return Ok(DatasetState::Partial { rows_done: 0 });
            }
            return Err(InputError::ForeignFile {
                path: self.dir.clone(),
                why: "the directory has files but no manifest.json".into(),
            }
            .into());
        };
        Ok(manifest.state_of(&self.spec, &self.dir)?)
    }

    async fn begin(&mut self) -> Result<u64> {
        if let DatasetState::Absent = self.state().await? {
            self.remove_leftovers().await?;
            std::fs::create_dir_all(&self.dir)
                .with_context(|| format!("cannot create {}", self.dir.display()))?;
        }
        let manifest = match read_manifest(&self.manifest_path())? {
            Some(m) => m,
            None => {
                let mut m = Manifest::started(&self.spec);
                m.rows_done = Some(0);
                write_manifest(&self.manifest_path(), &m)?;
                m
            }
        };
        let done = manifest.rows_done.unwrap_or(0);
        self.manifest = Some(manifest);
        Ok(done)
    }

    fn rows_per_batch(&self) -> usize {
        rows_for_batch(&self.spec, BATCH_BYTES, MAX_FILES_PER_BATCH)
    }

    async fn append(&mut self, first_id: u64, blobs: &mut Vec<Vec<u8>>) -> Result<()> {
        for (i, data) in blobs.iter().enumerate() {
            let id = first_id + i as u64;
            let path = self.blob_path(id);
            // A new leaf directory every 256 ids (and on resume).
            if id.is_multiple_of(256) || i == 0 {
                let parent = path.parent().expect("blob path has a parent");
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
            std::fs::write(&path, data)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        let last = first_id + blobs.len() as u64 - 1;
        let manifest_path = self.manifest_path();
        let manifest = self.manifest.as_mut().context("append before begin")?;
        manifest.rows_done = Some(last);
        write_manifest(&manifest_path, manifest)
    }

    async fn finish(&mut self) -> Result<()> {
        let manifest_path = self.manifest_path();
        let manifest = self.manifest.as_mut().context("finish before begin")?;
        manifest.complete = true;
        manifest.loaded_at = Some(crate::now_rfc3339());
        write_manifest(&manifest_path, manifest)
    }

    /// Allocated blocks of every file and directory (a 1 KiB blob takes a 4 KiB
    /// block): a walk over the whole tree, so a complete dataset's figure is kept in
    /// its manifest and counted once.
    async fn disk_bytes(&mut self) -> Result<Option<u64>> {
        let manifest_path = self.manifest_path();
        let manifest = read_manifest(&manifest_path)?;
        if let Some(Manifest {
            complete: true,
            disk_bytes: Some(bytes),
            ..
        }) = manifest
        {
            return Ok(Some(bytes));
        }
        let bytes = allocated_bytes(&self.dir)
            .with_context(|| format!("cannot count the bytes of {}", self.dir.display()))?;
        if let Some(mut m) = manifest.filter(|m| m.complete) {
            m.disk_bytes = Some(bytes);
            write_manifest(&manifest_path, &m)?;
        }
        Ok(Some(bytes))
    }

    fn estimated_disk_bytes(&self, rows: u64) -> u64 {
        // Every file takes whole 4 KiB blocks (small blobs cost 4 KiB each), plus an
        // inode and a directory entry; plus the shard directories.
        let per_file = |size: u64| size.div_ceil(4096) * 4096 + 256;
        let dirs = rows.div_ceil(256).min(65536);
        self.spec.sum_over_rows(rows, per_file) + dirs * 4096
    }

    async fn evict(&mut self) -> Result<EvictionReport> {
        let started = Instant::now();
        let mut report = EvictionReport {
            method: "syncfs + posix_fadvise(DONTNEED) per file".into(),
            ..Default::default()
        };
        // DONTNEED skips dirty pages: flush the whole filesystem once, not file by file.
        sync_filesystem(&self.dir)?;
        // One open + fadvise + close per file is all system calls: 786k files of 1 KiB
        // took 16 s in one thread, and a load measures cold twice (1 client, then N).
        // Interleaved ids per thread: every thread walks the tree in order.
        let dir = self.dir.as_os_str().as_bytes();
        let rows = self.spec.rows;
        let per_thread: Vec<Result<(u64, u64)>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..EVICT_THREADS)
                .map(|t| {
                    scope.spawn(move || {
                        let (mut bytes, mut files) = (0, 0);
                        let mut path = Vec::new();
                        for id in (1 + t..=rows).step_by(EVICT_THREADS as usize) {
                            blob_path_into(dir, id, &mut path);
                            let without_nul = &path[..path.len() - 1];
                            bytes += evict_flushed_file(Path::new(OsStr::from_bytes(without_nul)))?;
                            files += 1;
                        }
                        Ok((bytes, files))
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    w.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("an evicting thread panicked")))
                })
                .collect()
        });
        for done in per_thread {
            let (bytes, files) = done?;
            report.bytes += bytes;
            report.files += files;
        }
        // Checking residency file by file would cost as much as the eviction; skipped.
        report.resident_after_bytes = None;
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    async fn id_range(&mut self) -> Result<IdRange> {
        let (mut count, mut min, mut max) = (0, u64::MAX, 0);
        for level1 in std::fs::read_dir(&self.dir)? {
            let level1 = level1?;
            if !level1.file_type()?.is_dir() {
                continue;
            }
            for level2 in std::fs::read_dir(level1.path())? {
                for file in std::fs::read_dir(level2?.path())? {
                    let name = file?.file_name();
                    let id: u64 =
                        name.to_str()
                            .and_then(|n| n.parse().ok())
                            .with_context(|| {
                                format!("unexpected file {name:?} in {}", self.dir.display())
                            })?;
                    count += 1;
                    min = min.min(id);
                    max = max.max(id);
                }
            }
        }
        Ok(IdRange {
            count,
            ids: Some((if count == 0 { 0 } else { min }, max)),
        })
    }

    async fn remove(&mut self) -> Result<()> {
        crate::db::store::remove_dataset_dir(&self.dir, remove_tree)
    }

    async fn remove_leftovers(&mut self) -> Result<Option<PathBuf>> {
        crate::db::store::remove_leftover_dir(&self.dir, remove_tree)
    }

    /// Whole blob files of consecutive ids: what `fs` reads, through the page cache.
    async fn read_chunk(&mut self, at: f64, bytes: u64) -> Result<u64> {
        use std::os::unix::ffi::OsStrExt;
        let mut read = 0;
        for id in crate::db::store::chunk_ids(&self.spec, at, bytes) {
            blob_path_into(self.dir.as_os_str().as_bytes(), id, &mut self.path_buf);
            let path = Path::new(std::ffi::OsStr::from_bytes(
                &self.path_buf[..self.path_buf.len() - 1],
            ));
            read += std::fs::read(path)
                .with_context(|| format!("cannot read {}", path.display()))?
                .len() as u64;
        }
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::size::SizeClass;

    #[test]
    fn a_complete_datasets_bytes_on_disk_are_counted_once_and_kept_in_its_manifest() {
        let root = tempfile::tempdir().unwrap();
        let spec = DatasetSpec {
            size: SizeClass::new(1024).unwrap(),
            rows: 300,
            seed: 3,
            key: Default::default(),
            churn: None,
            live: false,
            mix: None,
            content: Default::default(),
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut store = FsStore::new(root.path(), spec);
            store.begin().await.unwrap();
            let mut blobs = vec![vec![7u8; 1024]; 300];
            store.append(1, &mut blobs).await.unwrap();
            // Partial: counted, not kept.
            let partial = store.disk_bytes().await.unwrap().unwrap();
            assert_eq!(
                read_manifest(&store.manifest_path())
                    .unwrap()
                    .unwrap()
                    .disk_bytes,
                None
            );
            store.finish().await.unwrap();
            let counted = store.disk_bytes().await.unwrap().unwrap();
            // At least the blobs' bytes (a whole block each on most file systems).
            assert!(counted >= 300 * 1024, "{counted}");
            assert!(counted >= partial);
            let kept = read_manifest(&store.manifest_path()).unwrap().unwrap();
            assert_eq!(kept.disk_bytes, Some(counted));
            // Kept, not counted again: a file added by hand does not change it.
            std::fs::write(store.dir.join("extra"), vec![0u8; 1 << 20]).unwrap();
            assert_eq!(store.disk_bytes().await.unwrap(), Some(counted));
        });
    }
}
