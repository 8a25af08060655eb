//! A fetch from RocksDB as an application makes one: a `Get` by key with the value
//! pinned where it lies (block cache, blob cache or a blob file read), copied out once.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, anyhow};

use super::blob_files::BlobFiles;
use super::handle::{BLOB_FILE_SIZE, Db, ReadOptions, reader, reader_cache};
use super::store::dataset_dir;
use crate::dataset::DatasetSpec;
use crate::dataset::key::KEY_BYTES;
use crate::db::engine::{Engine, EngineSettings};
use crate::db::locations::Locations;

pub struct RocksdbEngine {
    db: Arc<Db>,
    read: ReadOptions,
    spec: DatasetSpec,
    cache: String,
    dir: PathBuf,
    blobs: BlobFiles,
}

impl RocksdbEngine {
    pub fn open(at: &Locations, spec: DatasetSpec) -> Result<Self> {
        let dir = dataset_dir(
            &at.data_dir,
            &spec,
            at.knobs.get::<super::RocksdbKnobs>().blob_files,
        );
        if !dir.join("CURRENT").is_file() {
            // Its text, not the input error: one engine not loaded fails that engine alone.
            return Err(anyhow!(
                "{}",
                crate::error::InputError::NotLoaded { path: dir }
            ));
        }
        let (cache_bytes, cache) = reader_cache(at);
        let db = reader(&dir, cache_bytes)?;
        Ok(Self {
            read: ReadOptions::new(db.lib),
            db,
            spec,
            cache,
            dir,
            blobs: at.knobs.get::<super::RocksdbKnobs>().blob_files,
        })
    }
}

impl Engine for RocksdbEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        let mut key = [0u8; KEY_BYTES];
        let n = self.spec.key_into(id, &mut key);
        if !self.db.get_into(&self.read, &key[..n], out)? {
            return Err(anyhow!("blob {id} is not in {}", self.dir.display()));
        }
        Ok(())
    }

    fn settings(&self) -> EngineSettings {
        EngineSettings::from([
            ("rocksdb".into(), self.db.lib.release()),
            ("library".into(), self.db.lib.file.display().to_string()),
            ("blob files".into(), self.blobs.setting(BLOB_FILE_SIZE)),
            ("cache".into(), self.cache.clone()),
            (
                "access".into(),
                "Get (pinned) per fetch, the value copied out; one handle shared by the process's clients".into(),
            ),
            ("directory".into(), self.db.path().display().to_string()),
        ])
    }
}
