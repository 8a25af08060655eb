//! RocksDB, in-process, with its blob files (integrated BlobDB): an LSM tree whose
//! large values live in blob files of their own (or, as a layout, in its SST files:
//! `blob_files.rs`), one directory per dataset (`store.rs`), read with a `Get` per fetch (`engine.rs`) through a block and blob
//! cache sized from the cap (`handle.rs`). RocksDB is the system's library, loaded
//! when first used (`ffi.rs`): where it is missing, a default run leaves RocksDB out
//! with the line saying how to install it.

pub mod blob_files;
pub mod compression;
pub mod engine;
mod ffi;
mod handle;
pub mod knobs;
pub mod store;

use super::any_engine::AnyEngine;
use super::database::{Database, EngineDef, Open};
use super::engine::Client;
use super::store::{BoxedStore, boxed};
use crate::dataset::DatasetSpec;
use crate::db::locations::Locations;
pub use blob_files::BlobFiles;
pub use ffi::LIB_VARIABLE;
pub use knobs::RocksdbKnobs;

/// Its store's and engine's name.
pub const NAME: &str = "rocksdb";

pub struct Rocksdb;

impl Database for Rocksdb {
    fn name(&self) -> &'static str {
        NAME
    }

    fn engines(&self) -> Vec<EngineDef> {
        vec![EngineDef {
            name: NAME,
            // A Get reads a blob whole into the blob cache or a buffer of RocksDB's, pinned
            // and copied once into the client's buffer. Measured (2026-12-02, a 2 GiB cap,
            // its cache 256 MiB, 1 GiB of blobs): peak RSS 158 MB at 1 client and 1731 MB
            // at 16 clients of 32 MiB blobs, 3.07 blobs a client with the cache's growth
            // counted in, 2.6 without; 46 and 296 MB at 4 MiB.
            client_copies: 3,
            help: "RocksDB with blob files (the system's librocksdb): a Get by key per fetch, blocks and blobs cached in 1/8 of the cap",
            client: Client::Direct,
            open: Open::Embedded(|at, spec| {
                Box::pin(
                    async move { Ok(AnyEngine::Rocksdb(engine::RocksdbEngine::open(at, spec)?)) },
                )
            }),
        }]
    }

    fn open_store(&self, at: &Locations, spec: DatasetSpec) -> BoxedStore {
        boxed(store::RocksdbStore::new(
            &at.data_dir,
            spec,
            at.knobs.get::<RocksdbKnobs>(),
            handle::writer_memtable(at),
        ))
    }

    /// Blob files off, or from another `min_blob_size` than 0; its values compressed.
    fn layout(&self, at: &Locations) -> Vec<String> {
        let knobs = at.knobs.get::<RocksdbKnobs>();
        knobs
            .blob_files
            .layout()
            .into_iter()
            .chain(knobs.compression.layout())
            .collect()
    }

    fn compression(&self, knobs: &crate::db::knobs::Knobs) -> String {
        match knobs.get::<RocksdbKnobs>().compression {
            compression::Compression::None => {
                "none (--rocksdb-compression lz4 or zstd compresses)".into()
            }
            other => format!("{} in blob and SST files", other.name()),
        }
    }

    fn unavailable(&self) -> Option<String> {
        ffi::library().err()
    }

    /// (A library that is not there leaves RocksDB out with the reason, as no library
    /// installed does: its value is not refused.)
    fn variables(&self) -> Vec<(String, &'static str)> {
        vec![(LIB_VARIABLE.into(), "the RocksDB library file to load")]
    }
}
