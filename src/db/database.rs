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

/// What a store without compression says of its blobs.
pub const NO_COMPRESSION: &str = "none: it keeps the bytes as given";

/// One database: the core every database implements, and its capabilities.
pub trait Database: Sync {
    /// Its store's name in results and on disk: `sqlite`, `postgres`.
    fn name(&self) -> &'static str;
    /// Its engines, each one way of fetching its data, in the suite's order.
    fn engines(&self) -> Vec<EngineDef>;
    /// Its store of one dataset.
    fn open_store(&self, at: &Locations, spec: DatasetSpec) -> BoxedStore;

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
    /// Capability: what compresses the blobs it stores under `knobs`, in a few words
    /// for the report ("pglz, PostgreSQL's default"); the default: nothing does.
    fn compression(&self, _knobs: &crate::db::knobs::Knobs) -> String {
        NO_COMPRESSION.into()
    }
    /// Capability: `engine`'s cold reads are page faults on a memory map, which the
    /// kernel widens by the disk's readahead (LMDB's default, SQLite with mmap_size):
    /// its verdict names the readahead it ran under, the setting that made it.
    fn reads_by_mmap(&self, _engine: &str, _at: &Locations) -> bool {
        false
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
    /// Role: a file of its own for each blob, no database around them: the report
    /// sets it apart from the databases, and its files' inodes and dentries are kernel
    /// memory charged to the cap (`fs_pressure`).
    fn file_per_blob(&self) -> bool {
        false
    }
    /// About what a load of it costs, where none was recorded in the results
    /// directory: what a run weighs when the disk cannot hold every dataset and it
    /// must choose which to keep for the next run (`disk_room::keep_plan`).
    fn load_cost(&self) -> LoadCost {
        LoadCost::TYPICAL
    }
    /// Capability: something this machine lacks to run it at all (a library of the
    /// system's it loads), said with how to get it; None where it can run. A default run
    /// leaves it out with that line; asked for by name, the run is refused with it.
    fn unavailable(&self) -> Option<String> {
        None
    }
    /// Capability: variables that are no flag's, read for this database (by blobrace when
    /// it gets to it, by the scripts that build its stand-in, by its container), with who
    /// reads them: `blobrace` knows them, and refuses a `BLOBRACE_*` name nothing reads
    /// before any work. A server's: its published port and its image, and its own
    /// (`ServerDb::other_variables`).
    fn variables(&self) -> Vec<(String, &'static str)> {
        let Some(server) = self.server() else {
            return Vec::new();
        };
        let mut variables = vec![
            (
                server.port_env(),
                "compose/.env, scripts/servers.sh: its published port",
            ),
            (
                format!("BLOBRACE_{}_IMAGE", server.name().to_ascii_uppercase()),
                "scripts/servers.sh: its image",
            ),
        ];
        variables.extend(
            server
                .other_variables()
                .iter()
                .map(|(name, who)| (name.to_string(), *who)),
        );
        variables
    }
    /// Capability: why a value of one of its `variables` would be refused when read,
    /// checked with the names before any work (the floor's pinned read pattern, which it
    /// reads only when it opens, after every other engine of a run).
    fn check_variable(&self, _name: &str, _value: &str) -> Option<String> {
        None
    }
}

/// A load's time as a cost per row (a statement, a file, a request) plus a cost per
/// byte. The figures are measured loads of 3 GiB of 1 KiB blobs on this project's
/// machine (2 cores, 2026-11-27); loads recorded in the results directory replace them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadCost {
    pub micros_per_row: f64,
    pub mb_per_s: f64,
}

impl LoadCost {
    /// A store with no figure of its own: PostgreSQL's and MariaDB's (57-63 s for
    /// 3 GiB of 1 KiB rows, about 15 µs a row over writing the bytes).
    pub const TYPICAL: LoadCost = LoadCost {
        micros_per_row: 15.0,
        mb_per_s: 300.0,
    };

    /// Seconds to load `rows` rows holding `bytes` bytes.
    pub fn seconds(self, rows: u64, bytes: u64) -> f64 {
        rows as f64 * self.micros_per_row / 1e6 + bytes as f64 / 1e6 / self.mb_per_s
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
    /// Open it on a loaded dataset of its database.
    pub open: Open,
}

/// How an engine opens on a loaded dataset: an embedded database from the dataset's
/// files alone, a server's engine through the server it is handed.
#[derive(Clone, Copy)]
pub enum Open {
    Embedded(for<'a> fn(&'a Locations, DatasetSpec) -> Opened<'a>),
    Server(for<'a> fn(Server, &'a Locations, DatasetSpec) -> Opened<'a>),
}
