//! redb, in-process: a pure-Rust copy-on-write B-tree in one file per dataset
//! (`store.rs`), read through a read transaction per fetch (`engine.rs`). A value of a
//! page or more gets pages of its own; redb reads its file with pread through the page
//! cache and keeps a cache of its own, sized from the cap (`handle.rs`).

pub mod engine;
mod handle;
pub mod store;

use super::any_engine::AnyEngine;
use super::database::{Database, EngineDef};
use super::engine::Client;
use super::server::Server;
use super::store::{BoxedStore, boxed};
use crate::dataset::DatasetSpec;
use crate::db::locations::Locations;

/// Its store's and engine's name.
pub const NAME: &str = "redb";

pub struct Redb;

impl Database for Redb {
    fn name(&self) -> &'static str {
        NAME
    }

    fn engines(&self) -> Vec<EngineDef> {
        vec![EngineDef {
            name: NAME,
            // The value copied out and the output buffer; redb's cache is shared by
            // the process's clients (one handle), counted once in the cap.
            client_copies: 2,
            help: "redb (pure-Rust B-tree file): a read transaction and a get by key per fetch",
            client: Client::Direct,
            open: |_, at, spec| {
                Box::pin(async move { Ok(AnyEngine::Redb(engine::RedbEngine::open(at, spec)?)) })
            },
        }]
    }

    fn open_store(&self, _: Option<Server>, at: &Locations, spec: DatasetSpec) -> BoxedStore {
        boxed(store::RedbStore::new(&at.data_dir, spec))
    }
}
