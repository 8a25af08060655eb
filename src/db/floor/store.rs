//! The physical floor: every blob of a size class packed in one file
//! (`floor/<size>-x<rows>.bin`) at offset `(id - 1) * size`, read back with one
//! `pread`. Whole blobs are appended in id order, so the file length says how far
//! a load got: a resumed load truncates to whole blobs and continues.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::dataset::{DatasetSpec, DatasetState, Manifest};
use crate::db::store::{IdRange, Store, read_manifest, rows_for_batch, write_manifest};
use crate::disk::evict::{EvictionReport, evict_file, resident_bytes};
use crate::error::InputError;

const BATCH_BYTES: u64 = 16 << 20;

pub struct FloorStore {
    spec: DatasetSpec,
    path: PathBuf,
    manifest: Option<Manifest>,
    file: Option<File>,
}

impl FloorStore {
    /// The key type does not apply (the floor reads at the id's offset), nor does a
    /// churn (it reads the same bytes from the same place whatever wrote them): a keyed
    /// or churned run's floor is the same file as any other run's, its same-round
    /// reference.
    pub fn new(data_dir: &Path, spec: DatasetSpec) -> Self {
        let spec = DatasetSpec {
            key: crate::dataset::key::KeyType::Int,
            churn: None,
            live: false,
            ..spec
        };
        Self {
            spec,
            path: data_dir.join("floor").join(format!("{}.bin", spec.stem())),
            manifest: None,
            file: None,
        }
    }

    fn manifest_path(&self) -> PathBuf {
        self.path.with_extension("json")
    }

    fn len(&self) -> Result<u64> {
        match std::fs::metadata(&self.path) {
            Ok(m) => Ok(m.len()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(e).with_context(|| format!("cannot stat {}", self.path.display())),
        }
    }
}

#[async_trait::async_trait(?Send)]
impl Store for FloorStore {
    fn spec(&self) -> &DatasetSpec {
        &self.spec
    }

    fn location(&self) -> &Path {
        &self.path
    }

    /// The dataset is one file.
    fn own_files(&mut self, _: usize, _: u64) -> Result<Vec<PathBuf>, String> {
        Ok(vec![self.path.clone()])
    }

    async fn state(&mut self) -> Result<DatasetState> {
        let Some(manifest) = read_manifest(&self.manifest_path())? else {
            if self.path.exists() {
                return Err(InputError::ForeignFile {
                    path: self.path.clone(),
                    why: format!(
                        "there is no manifest {} beside it",
                        self.manifest_path().display()
                    ),
                }
                .into());
            }
            return Ok(DatasetState::Absent);
        };
        manifest.check_matches(&self.spec, &self.path)?;
        let len = self.len()?;
        if manifest.complete {
            if len != self.spec.bytes() {
                return Err(InputError::DatasetDamaged {
                    path: self.path.clone(),
                    why: format!(
                        "it is {len} bytes and its manifest says {} were loaded whole (the file was changed)",
                        self.spec.bytes()
                    ),
                }
                .into());
            }
            return Ok(DatasetState::Complete);
        }
        Ok(DatasetState::Partial {
            rows_done: self.spec.rows_within(len),
        })
    }

    async fn begin(&mut self) -> Result<u64> {
        let state = self.state().await?;
        let dir = self.path.parent().expect("store path has a parent");
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let manifest = match read_manifest(&self.manifest_path())? {
            Some(m) => m,
            None => {
                let m = Manifest::started(&self.spec);
                write_manifest(&self.manifest_path(), &m)?;
                m
            }
        };
        let rows_done = match state {
            DatasetState::Partial { rows_done } => rows_done,
            _ => 0,
        };
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&self.path)
            .with_context(|| format!("cannot open {} for writing", self.path.display()))?;
        // Drop a half-written last blob.
        file.set_len(self.spec.bytes_before(rows_done + 1))?;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0))?;
        self.file = Some(file);
        self.manifest = Some(manifest);
        Ok(rows_done)
    }

    fn rows_per_batch(&self) -> usize {
        rows_for_batch(&self.spec, BATCH_BYTES, u64::MAX)
    }

    async fn append(&mut self, _first_id: u64, blobs: &mut Vec<Vec<u8>>) -> Result<()> {
        let file = self.file.as_mut().context("append before begin")?;
        for data in blobs.iter() {
            file.write_all(data)
                .with_context(|| format!("cannot write {}", self.path.display()))?;
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<()> {
        self.file = None;
        let manifest_path = self.manifest_path();
        let manifest = self.manifest.as_mut().context("finish before begin")?;
        manifest.complete = true;
        manifest.loaded_at = Some(crate::now_rfc3339());
        write_manifest(&manifest_path, manifest)
    }

    fn estimated_disk_bytes(&self, rows: u64) -> u64 {
        self.spec.bytes_before(rows + 1)
    }

    async fn evict(&mut self) -> Result<EvictionReport> {
        let started = Instant::now();
        let bytes = evict_file(&self.path)?;
        Ok(EvictionReport {
            method: "fdatasync + posix_fadvise(DONTNEED)".into(),
            files: 1,
            bytes,
            resident_after_bytes: Some(resident_bytes(&self.path)?),
            seconds: started.elapsed().as_secs_f64(),
            ..Default::default()
        })
    }

    async fn id_range(&mut self) -> Result<IdRange> {
        let len = self.len()?;
        let count = self.spec.rows_within(len);
        if self.spec.bytes_before(count + 1) != len {
            anyhow::bail!(
                "{} is {len} bytes, not a whole number of the dataset's blobs ({})",
                self.path.display(),
                self.spec.size_label()
            );
        }
        Ok(IdRange {
            count,
            ids: Some((u64::from(count > 0), count)),
        })
    }

    async fn disk_bytes(&mut self) -> Result<Option<u64>> {
        Ok(Some(std::fs::metadata(&self.path)?.len()))
    }

    async fn read_chunk(&mut self, at: f64, bytes: u64) -> Result<u64> {
        crate::db::store::read_file_chunk(&self.path, at, bytes)
    }

    async fn remove(&mut self) -> Result<()> {
        self.file = None;
        for p in [self.path.clone(), self.manifest_path()] {
            crate::db::store::remove_if_present(&p)?;
        }
        Ok(())
    }
}
