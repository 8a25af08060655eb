//! A fetch from redb as an application makes one: a read transaction, the table, a
//! get by key, the value copied out (redb hands back a guard on its cached page).

use std::sync::Arc;

use anyhow::{Result, anyhow};
use redb::{ReadOnlyDatabase, ReadableDatabase};

use super::handle::{BLOBS, guarded, reader, reader_cache};
use super::store::{FILE, dataset_dir};
use crate::dataset::DatasetSpec;
use crate::dataset::key::KEY_BYTES;
use crate::db::engine::{Engine, EngineSettings};
use crate::db::locations::Locations;

/// The redb this build links (Cargo.toml pins it; a unit test holds the two together).
pub const REDB_VERSION: &str = "4.6.0";

pub struct RedbEngine {
    db: Arc<ReadOnlyDatabase>,
    path: std::path::PathBuf,
    spec: DatasetSpec,
    cache: String,
    file: String,
}

impl RedbEngine {
    pub fn open(at: &Locations, spec: DatasetSpec) -> Result<Self> {
        let dir = dataset_dir(&at.data_dir, &spec);
        let file = dir.join(FILE);
        if !file.is_file() {
            // Its text, not the input error: one engine not loaded fails that engine alone.
            return Err(anyhow!(
                "{}",
                crate::error::InputError::NotLoaded { path: dir }
            ));
        }
        let (cache_bytes, cache) = reader_cache(at);
        crate::db::contained::install_hook();
        Ok(Self {
            db: guarded(&file, || reader(&file, cache_bytes))?,
            path: file.clone(),
            spec,
            cache,
            file: file.display().to_string(),
        })
    }
}

impl Engine for RedbEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        let mut key = [0u8; KEY_BYTES];
        let n = self.spec.key_into(id, &mut key);
        // A damaged page is redb's panic: caught, the dataset's error (no allocation
        // unless it happens).
        guarded(&self.path, || {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(BLOBS)?;
            let Some(value) = table.get(&key[..n])? else {
                return Err(anyhow!("blob {id} is not in {}", self.file));
            };
            out.clear();
            out.extend_from_slice(value.value());
            Ok(())
        })
    }

    fn settings(&self) -> EngineSettings {
        EngineSettings::from([
            ("redb".into(), REDB_VERSION.into()),
            ("cache".into(), self.cache.clone()),
            (
                "access".into(),
                "begin_read + open_table + get per fetch, the value copied out; one read-only handle shared by the process's clients".into(),
            ),
            ("file".into(), self.file.clone()),
        ])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_recorded_redb_version_is_the_one_cargo_builds() {
        let manifest = include_str!("../../../Cargo.toml");
        let pinned = format!("redb = \"={}\"", super::REDB_VERSION);
        assert!(manifest.contains(&pinned), "Cargo.toml lacks {pinned}");
    }
}
