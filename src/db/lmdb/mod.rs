//! LMDB, in-process (the `heed` crate): a memory-mapped copy-on-write B+tree in one
//! environment per dataset (`store.rs`), read through a read transaction per fetch
//! (`engine.rs`). A value larger than half a page goes to overflow pages of its own,
//! contiguous; a read is a pointer into the map, so every byte read is the page
//! cache's, charged to the run's cgroup: LMDB has no cache of its own (`handle.rs`).

pub mod engine;
mod handle;
pub mod store;

use super::any_engine::AnyEngine;
use super::database::{Database, EngineDef, Open};
use super::engine::Client;
use super::store::{BoxedStore, boxed};
use crate::dataset::DatasetSpec;
use crate::db::locations::Locations;
use handle::ReadAhead;

/// Its store's and engine's name.
pub const NAME: &str = "lmdb";

pub struct Lmdb;

impl Database for Lmdb {
    fn name(&self) -> &'static str {
        NAME
    }

    fn engines(&self) -> Vec<EngineDef> {
        vec![
            EngineDef {
                name: NAME,
                // A fetch copies the value out of the map once, into the client's
                // buffer; the mapped pages are page cache, shared and reclaimable. As fs
                // and the floor (2); not yet measured at 16 clients.
                client_copies: 2,
                help: "LMDB (memory-mapped B+tree, via heed): a read transaction and a get by key per fetch, the kernel's read-ahead on the map (LMDB's default)",
                client: Client::Direct,
                open: Open::Embedded(|at, spec| {
                    Box::pin(async move {
                        Ok(AnyEngine::Lmdb(engine::LmdbEngine::open(
                            at,
                            spec,
                            ReadAhead::Kernel,
                        )?))
                    })
                }),
            },
            EngineDef {
                name: "lmdb-nordahead",
                client_copies: 2,
                help: "the same LMDB fetch with read-ahead off (MDB_NORDAHEAD, LMDB's advice for a database larger than memory): a page fault reads its one page",
                client: Client::Direct,
                open: Open::Embedded(|at, spec| {
                    Box::pin(async move {
                        Ok(AnyEngine::Lmdb(engine::LmdbEngine::open(
                            at,
                            spec,
                            ReadAhead::Off,
                        )?))
                    })
                }),
            },
        ]
    }

    /// lmdb-nordahead's map is MADV_RANDOM: a fault reads its page whatever the disk's
    /// readahead.
    fn reads_by_mmap(&self, engine: &str, _at: &Locations) -> bool {
        engine == NAME
    }

    fn open_store(&self, at: &Locations, spec: DatasetSpec) -> BoxedStore {
        boxed(store::LmdbStore::new(&at.data_dir, spec))
    }
}
