//! "Just use files": one file per blob in a sharded directory tree (`store.rs`),
//! fetched by open, read, close (`engine.rs`). A file is named by its id: no keys.

pub mod engine;
pub mod store;

use super::any_engine::AnyEngine;
use super::database::{Database, EngineDef, Open};
use super::engine::Client;
use super::store::{BoxedStore, boxed};
use crate::dataset::DatasetSpec;
use crate::db::locations::Locations;

/// Its store's and engine's name.
pub const NAME: &str = "fs";

pub struct Fs;

impl Database for Fs {
    /// 3 GiB of 1 KiB in 218 s: a file created, written and closed per blob.
    fn load_cost(&self) -> crate::db::database::LoadCost {
        crate::db::database::LoadCost {
            micros_per_row: 66.0,
            mb_per_s: 300.0,
        }
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn engines(&self) -> Vec<EngineDef> {
        vec![EngineDef {
            name: NAME,
            client_copies: 2,
            help: "one file per blob: open, read, close",
            client: Client::Direct,
            open: Open::Embedded(|at, spec| {
                Box::pin(
                    async move { Ok(AnyEngine::Fs(engine::FsEngine::open(&at.data_dir, spec)?)) },
                )
            }),
        }]
    }

    fn open_store(&self, at: &Locations, spec: DatasetSpec) -> BoxedStore {
        boxed(store::FsStore::new(&at.data_dir, spec))
    }

    fn has_keys(&self) -> bool {
        false
    }

    fn file_per_blob(&self) -> bool {
        true
    }
}
