//! A fetch from LMDB as an application makes one: a read transaction, a get by key,
//! the value copied out of the map (LMDB hands back a slice of its mapped pages, valid
//! only while the transaction lives).

use std::sync::Arc;

use anyhow::{Result, anyhow};
use heed::Env;

use super::handle::{Blobs, MAP_BYTES, ReadAhead, disk_read_ahead, env, tables};
use super::store::{FILE, dataset_dir};
use crate::dataset::DatasetSpec;
use crate::dataset::key::KEY_BYTES;
use crate::db::engine::{Engine, EngineSettings};
use crate::db::locations::Locations;
use crate::size::format_bytes;

/// The heed this build links (Cargo.toml pins it; a unit test holds the two together),
/// and the LMDB it bundles.
pub const HEED_VERSION: &str = "0.23.1";

pub struct LmdbEngine {
    env: Arc<Env>,
    blobs: Blobs,
    spec: DatasetSpec,
    dir: String,
    read_ahead: ReadAhead,
    disk_read_ahead: String,
}

impl LmdbEngine {
    pub fn open(at: &Locations, spec: DatasetSpec, read_ahead: ReadAhead) -> Result<Self> {
        let dir = dataset_dir(&at.data_dir, &spec);
        if !dir.join(FILE).is_file() {
            // Its text, not the input error: one engine not loaded fails that engine alone.
            return Err(anyhow!(
                "{}",
                crate::error::InputError::NotLoaded { path: dir }
            ));
        }
        let env = env(&dir, read_ahead)?;
        let Some((blobs, _)) = tables(&env)? else {
            return Err(anyhow!(
                "{}",
                crate::error::InputError::NotLoaded { path: dir }
            ));
        };
        Ok(Self {
            env,
            blobs,
            spec,
            disk_read_ahead: disk_read_ahead(&dir),
            dir: dir.display().to_string(),
            read_ahead,
        })
    }
}

impl Engine for LmdbEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        let mut key = [0u8; KEY_BYTES];
        let n = self.spec.key_into(id, &mut key);
        let txn = self.env.read_txn()?;
        let Some(value) = self.blobs.get(&txn, &key[..n])? else {
            return Err(anyhow!("blob {id} is not in {}", self.dir));
        };
        out.clear();
        out.extend_from_slice(value);
        Ok(())
    }

    fn settings(&self) -> EngineSettings {
        let lmdb = heed::lmdb_version();
        EngineSettings::from([
            ("heed".into(), HEED_VERSION.into()),
            ("lmdb".into(), format!("{}.{}.{}", lmdb.major, lmdb.minor, lmdb.patch)),
            (
                "cache".into(),
                "none of its own: reads are the page cache's pages through the map, charged to the run's cgroup".into(),
            ),
            ("map size".into(), format!("{} of address space", format_bytes(MAP_BYTES as u64))),
            (
                "access".into(),
                "read_txn + get per fetch, the value copied out of the map; one environment shared by the process's clients".into(),
            ),
            (
                "read-ahead".into(),
                match self.read_ahead {
                    ReadAhead::Kernel => "the kernel's (LMDB's default): a page fault reads around it".into(),
                    ReadAhead::Off => "off (MDB_NORDAHEAD: MADV_RANDOM, a page fault reads its page)".into(),
                },
            ),
            ("disk read-ahead".into(), self.disk_read_ahead.clone()),
            ("environment".into(), self.dir.clone()),
        ])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_recorded_heed_version_is_the_one_cargo_builds() {
        let manifest = include_str!("../../../Cargo.toml");
        let pinned = format!("heed = {{ version = \"={}\"", super::HEED_VERSION);
        assert!(manifest.contains(&pinned), "Cargo.toml lacks {pinned}");
    }
}
