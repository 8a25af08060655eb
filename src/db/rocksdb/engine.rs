//! A fetch from RocksDB as an application makes one: a `Get` by key with the value
//! pinned where it lies (block cache, blob cache or a blob file read), copied out once.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, anyhow};

use super::handle::{BLOB_FILE_SIZE, Db, ReadOptions, reader, reader_cache};
use super::knobs::RocksdbKnobs;
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
    layout: RocksdbKnobs,
}

impl RocksdbEngine {
    pub fn open(at: &Locations, spec: DatasetSpec) -> Result<Self> {
        let layout = at.knobs.get::<RocksdbKnobs>();
        let dir = dataset_dir(&at.data_dir, &spec, layout);
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
            layout,
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
            (
                "blob files".into(),
                self.layout.blob_files.setting(BLOB_FILE_SIZE),
            ),
            (
                "compression".into(),
                format!(
                    "{} (blob_compression_type and compression alike)",
                    self.layout.compression.setting()
                ),
            ),
            ("cache".into(), self.cache.clone()),
            (
                "access".into(),
                "Get (pinned) per fetch, the value copied out; one handle shared by the process's clients".into(),
            ),
            ("directory".into(), self.db.path().display().to_string()),
        ])
    }
}
