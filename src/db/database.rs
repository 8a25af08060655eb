//! The `Database` trait every folder of `db/` implements: the small core (name,
//! engines, store) and the capabilities a database opts into.

use std::future::Future;
use std::pin::Pin;

use anyhow::Result;

use super::any_engine::AnyEngine;
use super::engine::Client;
use super::server::{Server, ServerDb};
use super::store::BoxedStore;
use crate::dataset::DatasetSpec;
use crate::db::locations::Locations;

/// One database: the core every database implements, and its capabilities.
pub trait Database: Sync {
    /// Its store's name in results and on disk: `sqlite`, `postgres`.
    fn name(&self) -> &'static str;
    /// Its engines, each one way of fetching its data, in the suite's order.
    fn engines(&self) -> Vec<EngineDef>;
    /// Its store of one dataset (`server`: itself, where it is a server).
    fn open_store(&self, server: Option<Server>, at: &Locations, spec: DatasetSpec) -> BoxedStore;

    /// Capability: rows under a 16-byte key (`--key`). fs names a file by its id and
    /// the floor reads at the id's offset: neither has keys.
    fn has_keys(&self) -> bool {
        true
    }
    /// Capability: rows changed in place after a load (`--churn`), through its own
    /// write path. A store may still refuse one layout (PostgreSQL's large objects).
    fn changes_rows(&self) -> bool {
        false
    }
    /// Capability: layout choices of its own (a page size, a storage) that differ
    /// from its defaults in `at`, one phrase each ("page 16384"); empty: the default.
    /// A key type is every keyed store's choice, said apart.
    fn layout(&self, _at: &Locations) -> Vec<String> {
        Vec::new()
    }
    /// Capability: a server in its own capped container (`db/server/`). Every
    /// `ServerDb` has it.
    fn server(&self) -> Option<&dyn ServerDb> {
        None
    }
    /// Role: the physical floor every engine is compared with (exactly one has it).
    fn is_floor(&self) -> bool {
        false
    }
}

/// An engine being opened on a loaded dataset.
pub type Opened<'a> = Pin<Box<dyn Future<Output = Result<AnyEngine>> + 'a>>;

/// One engine of a database.
pub struct EngineDef {
    pub name: &'static str,
    /// One line for `--help`: what one fetch is.
    pub help: &'static str,
    pub client: Client,
    /// Blob-sized buffers one client holds in this process with a fetch in flight
    /// (`memory_fit`), measured as peak RSS at 1 and 8–16 clients of 4 MiB blobs:
    /// through sqlx (SQLite and the servers) 19–23 MiB per client, as each client's
    /// thread keeps its own malloc arena with the row, the driver's read buffer and
    /// `out`; the floor and fs 9 MiB (the read buffer and `out`).
    pub client_copies: u64,
    /// Open it on a loaded dataset of its database (`server`: the database, where it
    /// is a server).
    pub open: for<'a> fn(Option<Server>, &'a Locations, DatasetSpec) -> Opened<'a>,
}
