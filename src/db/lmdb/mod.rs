//! LMDB, in-process (the `heed` crate): a memory-mapped copy-on-write B+tree in one
//! environment per dataset (`store.rs`), read through a read transaction per fetch
//! (`engine.rs`). A value larger than half a page goes to overflow pages of its own,
//! contiguous; a read is a pointer into the map, so every byte read is the page
//! cache's, charged to the run's cgroup: LMDB has no cache of its own (`handle.rs`).

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
pub const NAME: &str = "lmdb";

pub struct Lmdb;

impl Database for Lmdb {
    fn name(&self) -> &'static str {
        NAME
    }

    fn engines(&self) -> Vec<EngineDef> {
        vec![EngineDef {
            name: NAME,
            // A fetch copies the value out of the map once: the client's buffer. The
            // mapped pages are page cache, shared by the clients and reclaimable.
            // CLIENT_COPIES_MEASURED
            client_copies: 2,
            help: "LMDB (memory-mapped B+tree, via heed): a read transaction and a get by key per fetch",
            client: Client::Direct,
            open: |_, at, spec| {
                Box::pin(async move { Ok(AnyEngine::Lmdb(engine::LmdbEngine::open(at, spec)?)) })
            },
        }]
    }

    fn open_store(&self, _: Option<Server>, at: &Locations, spec: DatasetSpec) -> BoxedStore {
        boxed(store::LmdbStore::new(&at.data_dir, spec))
    }
}
