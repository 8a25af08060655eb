//! Engines: what one fetch is. One trait (`Engine`), one file per way of
//! fetching, and one list (`ENGINES`) that registers them. Every server in
//! `server::SERVERS` adds two engines: `<server>` (SeaORM) and `<server>-raw`
//! (sqlx, prepared statement), so a new database brings its engines with it.
//!
//! `Engine::fetch` is the only code inside the timed span: it gets a row id and
//! must leave that row's bytes in `out`. Everything around it (choosing ids,
//! checking bytes, reading I/O counters, recording) happens outside the clock.

mod floor;
mod fs;
mod orm;
mod raw;
mod server;
mod sqlite;
mod sqlite_blobio;
mod sqlite_raw;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::LazyLock;

use anyhow::Result;

pub use floor::FloorEngine;
pub use fs::FsEngine;
pub use orm::OrmEngine;
pub use raw::RawEngine;

use crate::dataset::DatasetSpec;
use crate::error::InputError;
use crate::locations::Locations;
use crate::server::Server;
use crate::store::StoreKind;

/// Settings an engine ran with, read back from the engine where it can tell.
pub type EngineSettings = BTreeMap<String, String>;

#[allow(async_fn_in_trait)]
pub trait Engine {
    /// Fetch row `id` into `out`. Timed: keep it to what an application does.
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()>;

    /// Called before each fetch, outside the timed span. Engines that hand back a
    /// freshly allocated buffer release the previous one here, so freeing the last
    /// result is not timed as part of the next fetch.
    fn before_fetch(&mut self, _out: &mut Vec<u8>) {}

    /// Versions and settings to record with the result.
    fn settings(&self) -> EngineSettings;

    /// Release connections and files now, not in the background, so the next
    /// engine's cold start does not overlap this one's shutdown.
    async fn close(self) -> Result<()>
    where
        Self: Sized,
    {
        Ok(())
    }
}

/// How an engine reaches its store: the report pairs an ORM engine with the raw
/// one on the same store (what the ORM costs), and `verify` reads with the rawest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// SeaORM, as an application writes it.
    Orm,
    /// The driver under SeaORM (sqlx), prepared statement.
    Raw,
    /// System calls on files, no database.
    Direct,
}

type Opened<'a> = Pin<Box<dyn Future<Output = Result<AnyEngine>> + 'a>>;

/// One registered engine.
pub struct EngineDef {
    pub name: &'static str,
    /// One line for `--help`: what one fetch is.
    pub help: &'static str,
    /// The store whose dataset it reads.
    pub store: StoreKind,
    pub client: Client,
    /// Its colour in every chart (the floor is black).
    pub colour: (u8, u8, u8),
    /// Blob-sized buffers one client holds in this process with a fetch in flight
    /// (`memory_fit`), measured as peak RSS at 1 and 8–16 clients of 4 MiB blobs:
    /// through sqlx (SQLite and the servers) 19–23 MiB per client, as each client's
    /// thread keeps its own malloc arena with the row, the driver's read buffer and
    /// `out`; the floor and fs 9 MiB (the read buffer and `out`).
    pub client_copies: u64,
    /// Open it on a loaded dataset.
    pub open: for<'a> fn(StoreKind, &'a Locations, DatasetSpec) -> Opened<'a>,
}

/// A server engine's client side: postgres-raw 22.6 MiB and mariadb-raw 20 MiB per
/// client of 4 MiB blobs (`EngineDef::client_copies`).
const SQLX_CLIENT_COPIES: u64 = 5;

/// Every engine, in the suite's order (tables, charts, `--engines all`): the
/// embedded ones, then two per server. Adding an engine: its file, and its entry here.
static ENGINES: LazyLock<Vec<EngineDef>> = LazyLock::new(|| {
    let mut all = vec![
        EngineDef {
            name: "sqlite",
            client_copies: 5,
            help: "SQLite through SeaORM: blob::Entity::find_by_id(id).one(&db)",
            store: StoreKind::Sqlite,
            client: Client::Orm,
            colour: (31, 119, 180),
            open: |_, at, spec| Box::pin(sqlite::open_orm(at, spec)),
        },
        EngineDef {
            name: "sqlite-raw",
            // SQLite's row value, the output buffer, the content check's scratch, and
            // SQLite's own page cache (2 MB): 249 MiB peak RSS at 16 clients of 4 MiB
            // blobs, 29 MiB at 1 (3.4 blobs per client).
            client_copies: 4,
            help: "the same SQLite file and query as a prepared statement through SQLite's C API in this thread (as Python's sqlite3 runs it; sqlx's worker thread and row copy cost 20% at 4 MiB)",
            store: StoreKind::Sqlite,
            client: Client::Raw,
            colour: (120, 180, 230),
            open: |_, at, spec| Box::pin(sqlite_raw::open(at, spec)),
        },
        EngineDef {
            name: "sqlite-blobio",
            // The output buffer, the content check's scratch, and SQLite's own page
            // cache (2 MB): 178 MiB peak RSS at 16 clients of 4 MiB blobs, 25 MiB at 1
            // (2.4 blobs per client).
            client_copies: 3,
            help: "the same SQLite file through incremental blob I/O (sqlite3_blob_reopen + sqlite3_blob_read into the reused buffer), no SQL per fetch",
            store: StoreKind::Sqlite,
            client: Client::Direct,
            colour: (70, 60, 200),
            open: |_, at, spec| Box::pin(sqlite_blobio::open(at, spec)),
        },
        EngineDef {
            name: "fs",
            client_copies: 2,
            help: "one file per blob: open, read, close",
            store: StoreKind::Fs,
            client: Client::Direct,
            colour: (44, 160, 44),
            open: |_, at, spec| {
                Box::pin(async move { Ok(AnyEngine::Fs(FsEngine::open(&at.data_dir, spec)?)) })
            },
        },
        EngineDef {
            name: "floor",
            client_copies: 2,
            help: "the row's bytes from a packed file, read the way this disk serves fastest at that size (one pread, 4KiB preads in order, WILLNEED + pread or 4 threads, timed on cold reads when the floor opens; BLOBRACE_FLOOR_READ=pread pins one): the physical floor",
            store: StoreKind::Floor,
            client: Client::Direct,
            colour: (0, 0, 0),
            open: |_, at, spec| {
                Box::pin(
                    async move { Ok(AnyEngine::Floor(FloorEngine::open(&at.data_dir, spec)?)) },
                )
            },
        },
    ];
    for db in Server::all() {
        let [orm_help, raw_help] = db.engine_help();
        let [orm_colour, raw_colour] = db.colours();
        all.push(EngineDef {
            name: db.name(),
            help: orm_help,
            store: StoreKind::Server(db),
            client: Client::Orm,
            client_copies: SQLX_CLIENT_COPIES,
            colour: orm_colour,
            open: |store, at, spec| Box::pin(server::open_orm(store, at, spec)),
        });
        all.push(EngineDef {
            // Once per process, for the life of the process.
            name: Box::leak(format!("{}-raw", db.name()).into_boxed_str()),
            help: raw_help,
            store: StoreKind::Server(db),
            client: Client::Raw,
            client_copies: SQLX_CLIENT_COPIES,
            colour: raw_colour,
            open: |store, at, spec| Box::pin(server::open_raw(store, at, spec)),
        });
    }
    all
});

/// One registered engine (its place in `ENGINES`), written to results by name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EngineKind(usize);

impl EngineKind {
    /// Every engine, in the suite's order.
    pub fn all() -> impl Iterator<Item = EngineKind> {
        (0..ENGINES.len()).map(EngineKind)
    }

    pub fn def(self) -> &'static EngineDef {
        &ENGINES[self.0]
    }

    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// The store whose dataset this engine reads.
    pub fn store(self) -> StoreKind {
        self.def().store
    }

    pub fn client(self) -> Client {
        self.def().client
    }

    /// The physical floor every engine is compared with.
    pub fn floor() -> EngineKind {
        Self::all()
            .find(|e| e.store() == StoreKind::Floor)
            .expect("the floor is registered")
    }

    /// The raw-driver engine on the same store, for an ORM engine.
    pub fn raw_twin(self) -> Option<EngineKind> {
        (self.client() == Client::Orm)
            .then(|| Self::all().find(|e| e.store() == self.store() && e.client() == Client::Raw))
            .flatten()
    }

    /// The engine that reads a store back for `verify`: the rawest one.
    pub fn reader_of(store: StoreKind) -> EngineKind {
        Self::all()
            .filter(|e| e.store() == store)
            .find(|e| e.client() != Client::Orm)
            .expect("every store has a raw or direct engine")
    }

    /// Open the engine on a loaded dataset.
    pub async fn open(self, at: &Locations, spec: DatasetSpec) -> Result<AnyEngine> {
        (self.def().open)(self.store(), at, spec).await
    }

    pub fn known_names() -> String {
        Self::all().map(|k| k.name()).collect::<Vec<_>>().join(", ")
    }

    /// `name: what one fetch is`, one line per engine, for `--help`.
    pub fn help_lines() -> String {
        Self::all()
            .map(|k| format!("  {}: {}", k.name(), k.def().help))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EngineKind {
    type Err = InputError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        Self::all()
            .find(|k| k.name() == wanted)
            .ok_or_else(|| InputError::UnknownEngine {
                name: wanted.to_string(),
                known: Self::known_names(),
            })
    }
}

by_name!(EngineKind, "engine", |name| name.parse().ok());

/// Parse `sqlite,fs` (or `all`) into engines, in the suite's order.
pub fn parse_engine_list(text: &str) -> Result<Vec<EngineKind>, InputError> {
    if text.trim() == "all" {
        return Ok(EngineKind::all().collect());
    }
    let mut engines = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        engines.push(part.parse::<EngineKind>()?);
    }
    if engines.is_empty() {
        return Err(InputError::UnknownEngine {
            name: text.to_string(),
            known: EngineKind::known_names(),
        });
    }
    engines.sort();
    engines.dedup();
    Ok(engines)
}

/// Any engine, for code that picks one at run time: one match per fetch. The
/// raw engines differ by wire protocol (sqlx's database type), not by server:
/// servers speaking the same protocol share a variant.
pub enum AnyEngine {
    Orm(OrmEngine),
    SqliteStmt(sqlite_raw::StmtEngine),
    RawPostgres(RawEngine<sea_orm::sqlx::Postgres>),
    RawMySql(RawEngine<sea_orm::sqlx::MySql>),
    SqliteBlobIo(sqlite_blobio::BlobIoEngine),
    Fs(FsEngine),
    Floor(FloorEngine),
}

macro_rules! each_engine {
    ($self:ident, $e:ident => $body:expr) => {
        match $self {
            AnyEngine::Orm($e) => $body,
            AnyEngine::SqliteStmt($e) => $body,
            AnyEngine::RawPostgres($e) => $body,
            AnyEngine::RawMySql($e) => $body,
            AnyEngine::SqliteBlobIo($e) => $body,
            AnyEngine::Fs($e) => $body,
            AnyEngine::Floor($e) => $body,
        }
    };
}

impl Engine for AnyEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        each_engine!(self, e => e.fetch(id, out).await)
    }
    #[inline]
    fn before_fetch(&mut self, out: &mut Vec<u8>) {
        each_engine!(self, e => e.before_fetch(out))
    }
    fn settings(&self) -> EngineSettings {
        each_engine!(self, e => e.settings())
    }
    async fn close(self) -> Result<()> {
        each_engine!(self, e => e.close().await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names_round_trip_and_unknown_is_explained() {
        for kind in EngineKind::all() {
            assert_eq!(kind.name().parse::<EngineKind>().unwrap(), kind);
        }
        let err = parse_engine_list("sqlite,oracle").unwrap_err().to_string();
        assert!(
            err.contains("'oracle'") && err.contains("sqlite-raw"),
            "{err}"
        );
        assert_eq!(
            parse_engine_list("all").unwrap().len(),
            EngineKind::all().count()
        );
        let named = |n: &str| n.parse::<EngineKind>().unwrap();
        assert_eq!(
            parse_engine_list("floor, sqlite").unwrap(),
            vec![named("sqlite"), named("floor")]
        );
    }

    #[test]
    fn the_suite_order_is_embedded_first_then_each_server_orm_and_raw() {
        let names: Vec<&str> = EngineKind::all().map(EngineKind::name).collect();
        assert_eq!(
            names,
            [
                "sqlite",
                "sqlite-raw",
                "sqlite-blobio",
                "fs",
                "floor",
                "postgres",
                "postgres-raw",
                "mariadb",
                "mariadb-raw",
                "mysql",
                "mysql-raw",
                "dolt",
                "dolt-raw"
            ]
        );
    }

    #[test]
    fn twins_and_readers_come_from_the_registry() {
        let named = |n: &str| n.parse::<EngineKind>().unwrap();
        assert_eq!(named("sqlite").raw_twin(), Some(named("sqlite-raw")));
        assert_eq!(named("mariadb").raw_twin(), Some(named("mariadb-raw")));
        assert_eq!(named("fs").raw_twin(), None);
        assert_eq!(named("postgres-raw").raw_twin(), None);
        assert_eq!(
            EngineKind::reader_of(StoreKind::Sqlite),
            named("sqlite-raw")
        );
        assert_eq!(EngineKind::reader_of(StoreKind::Floor), named("floor"));
        assert_eq!(EngineKind::floor(), named("floor"));
        for kind in EngineKind::all() {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<EngineKind>(&json).unwrap(), kind);
        }
    }
}
