//! Places in `DATABASES`, the handles the rest of blobrace holds: a `StoreKind` is
//! one database's store, an `EngineKind` one of its engines. Results write them by
//! name (`by_name!`), never by place, so a database added to the list leaves older
//! results readable.

use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

use anyhow::Result;

use super::any_engine::AnyEngine;
use super::engine::Client;
use super::server::Server;

use super::database::{Database, EngineDef, Open};
use super::knobs::{KnobSet, Knobs};
use super::store::{BoxedStore, Churn, Store};
use crate::dataset::DatasetSpec;
use crate::db::locations::Locations;
use crate::error::InputError;

/// Every database, in the suite's order (report rows, tables, `--engines all`):
/// embedded first, then the servers. Adding one: its folder, and its line here.
pub static DATABASES: &[&dyn Database] = &[
    &super::sqlite::Sqlite,
    &super::redb::Redb,
    &super::lmdb::Lmdb,
    &super::rocksdb::Rocksdb,
    &super::fs::Fs,
    &super::floor::Floor,
    &super::postgres::Postgres,
    &super::mariadb::Mariadb,
    &super::mysql::Mysql,
    &super::dolt::Dolt,
    &super::seaweedfs::Seaweedfs,
];

/// `DatabaseKnobs` from one line per database that has knobs of its own.
macro_rules! database_knobs {
    ($($name:ident: $set:ty,)+) => {
        /// Every database's own flags (`--sqlite-page-size`, `--pg-storage`, ...),
        /// declared in its folder (`db/<name>/knobs.rs`: flag, variable, default, help,
        /// recorded name) and collected here, a line per database that has any.
        /// Flattened into the run's flags (`config::RunArgs`) and into results.json's
        /// settings under the names each folder gives (results written before read
        /// back unchanged).
        #[derive(Debug, Clone, Copy, Default, PartialEq, clap::Args, serde::Serialize, serde::Deserialize)]
        pub struct DatabaseKnobs {
            $(
                #[command(flatten)]
                #[serde(flatten)]
                pub $name: $set,
            )+
        }

        impl DatabaseKnobs {
            /// Each database's knobs, for its stores and engines (`Locations::knobs`).
            pub fn knobs(&self) -> Knobs {
                Knobs::default()$(.with(self.$name))+
            }

            /// The report's and `blobrace compare`'s line: `SQLite page 4096 B,
            /// mmap_size 0 · PostgreSQL storage extended · RocksDB blob files,
            /// min_blob_size 0 B`.
            pub fn label(&self) -> String {
                [$(KnobSet::label(&self.$name)),+].join(" · ")
            }

            /// The first database whose knobs cannot go together, and why.
            pub fn check(&self) -> Result<(), String> {
                $(KnobSet::check(&self.$name)?;)+
                Ok(())
            }
        }
    };
}

database_knobs! {
    sqlite: super::sqlite::SqliteKnobs,
    postgres: super::postgres::PostgresKnobs,
    rocksdb: super::rocksdb::RocksdbKnobs,
    mariadb: super::mariadb::MariadbKnobs,
}

/// One database's store (its place in `DATABASES`): one dataset per size class, in
/// a file or directory under the data directory or a namespace of a server.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StoreKind(usize);

impl StoreKind {
    pub fn all() -> impl Iterator<Item = StoreKind> {
        (0..DATABASES.len()).map(StoreKind)
    }

    pub fn named(name: &str) -> Option<StoreKind> {
        Self::all().find(|k| k.name() == name)
    }

    /// The database this store belongs to.
    pub fn db(self) -> &'static dyn Database {
        DATABASES[self.0]
    }

    pub fn name(self) -> &'static str {
        self.db().name()
    }

    /// The server holding this store, for stores in a server container.
    pub fn server(self) -> Option<Server> {
        self.db()
            .server()
            .map(|descriptor| Server::new(self.0, descriptor))
    }

    /// Stores that can hold rows under a 16-byte key (`--key`).
    pub fn has_keys(self) -> bool {
        self.db().has_keys()
    }

    /// Stores whose rows `--churn` can change.
    pub fn changes_rows(self) -> bool {
        self.db().changes_rows()
    }

    /// The dataset this store holds for a run of `spec`: the floor keeps one file for
    /// every key type and churn (it reads by offset what was loaded), so its fetches are
    /// checked against that file's content, not the churned rows'.
    pub fn dataset_read(self, spec: DatasetSpec) -> DatasetSpec {
        DatasetSpec {
            churn: spec.churn.filter(|_| self.changes_rows()),
            live: spec.live && self.changes_rows(),
            ..spec
        }
    }

    /// A file of its own for each blob (`Database::file_per_blob`).
    pub fn is_file_per_blob(self) -> bool {
        self.db().file_per_blob()
    }

    /// Stores in a server container rather than under the data directory.
    pub fn is_server(self) -> bool {
        self.db().server().is_some()
    }

    /// An object store: a server that speaks S3, not SQL (the report sets it against
    /// the databases).
    pub fn is_object_store(self) -> bool {
        self.server().is_some_and(|s| s.sql().is_none())
    }

    /// The physical floor's store.
    /// About what loading `rows` rows of `bytes` takes, where none was recorded.
    pub fn load_cost(self) -> crate::db::database::LoadCost {
        self.db().load_cost()
    }

    pub fn is_floor(self) -> bool {
        self.db().is_floor()
    }

    pub fn open(self, at: &Locations, spec: DatasetSpec) -> AnyStore {
        AnyStore {
            kind: self,
            store: self.db().open_store(at, spec),
        }
    }
}

/// Any database's store, with the kind it was opened as.
pub struct AnyStore {
    kind: StoreKind,
    store: BoxedStore,
}

impl AnyStore {
    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// Its churn (`Store::churner`), or why there is none.
    pub fn churning(&mut self) -> Result<&mut dyn Churn> {
        let location = self.store.location().display().to_string();
        self.store
            .churner()
            .ok_or_else(|| anyhow::anyhow!("{location}: this store cannot change rows (--churn)"))
    }
}

/// An `AnyStore` is its database's store: every `Store` method, through the box.
impl std::ops::Deref for AnyStore {
    type Target = dyn Store;
    fn deref(&self) -> &Self::Target {
        &*self.store
    }
}

impl std::ops::DerefMut for AnyStore {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut *self.store
    }
}

by_name!(StoreKind, "store", StoreKind::named);

impl Server {
    /// Every server, in the suite's order.
    pub fn all() -> impl Iterator<Item = Server> {
        StoreKind::all().filter_map(StoreKind::server)
    }

    pub fn named(name: &str) -> Option<Server> {
        Self::all().find(|s| s.name() == name)
    }

    /// Its store, in the list of every database's.
    pub fn store(self) -> StoreKind {
        StoreKind(self.place())
    }
}

by_name!(Server, "server", Server::named);

/// Every engine, in the suite's order (tables, charts, `--engines all`): each
/// database's engines in `DATABASES`' order, with the store each reads.
static ENGINES: LazyLock<Vec<(EngineDef, StoreKind)>> = LazyLock::new(|| {
    StoreKind::all()
        .flat_map(|store| {
            store
                .db()
                .engines()
                .into_iter()
                .map(move |def| (def, store))
        })
        .collect()
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
        &ENGINES[self.0].0
    }

    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// The store whose dataset this engine reads.
    pub fn store(self) -> StoreKind {
        ENGINES[self.0].1
    }

    pub fn client(self) -> Client {
        self.def().client
    }

    /// The physical floor every engine is compared with.
    pub fn floor() -> EngineKind {
        Self::all()
            .find(|e| e.store().is_floor())
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
        match (self.def().open, self.store().server()) {
            (Open::Embedded(open), _) => open(at, spec).await,
            (Open::Server(open), Some(server)) => open(server, at, spec).await,
            (Open::Server(_), None) => {
                unreachable!("{self} opens through a server, and its store has none")
            }
        }
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

/// The stores the engines read, each once.
pub fn stores_for(engines: &[EngineKind]) -> Vec<StoreKind> {
    let mut stores: Vec<StoreKind> = engines.iter().map(|e| e.store()).collect();
    stores.sort();
    stores.dedup();
    stores
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A database's flags come from its folder through the registry, reach its stores
    /// as its own knobs, and are recorded flat under the names results always had.
    #[test]
    fn each_databases_knobs_are_its_flags_its_settings_and_its_own_to_read() {
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            knobs: DatabaseKnobs,
        }
        let flags = <Flags as clap::Parser>::try_parse_from([
            "t",
            "--pg-storage",
            "lo",
            "--sqlite-page-size",
            "8192",
        ])
        .unwrap();
        let knobs = flags.knobs.knobs();
        assert_eq!(
            knobs.get::<super::super::postgres::PostgresKnobs>().storage,
            super::super::postgres::PgStorage::LargeObject
        );
        let sqlite = knobs.get::<super::super::sqlite::SqliteKnobs>();
        assert_eq!((sqlite.page_size, sqlite.mmap_size), (8192, 0));
        let recorded = serde_json::to_value(flags.knobs).unwrap();
        let names: Vec<&str> = recorded
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            names,
            [
                "mariadb_compression",
                "pg_compression",
                "pg_storage",
                "rocksdb_compression",
                "rocksdb_min_blob_size",
                "sqlite_mmap_size",
                "sqlite_page_size"
            ]
        );
        // Results written before a knob existed read back with its default.
        let old: DatabaseKnobs =
            serde_json::from_value(serde_json::json!({"pg_storage": "external"})).unwrap();
        assert_eq!(old.sqlite.page_size, 4096);
        assert!(
            old.label().starts_with(
                "SQLite page 4096 B, mmap_size 0 · PostgreSQL storage external · RocksDB "
            ),
            "{}",
            old.label()
        );
        assert!(
            <Flags as clap::Parser>::try_parse_from(["t", "--sqlite-page-size", "1000"]).is_err()
        );
    }

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
                "redb",
                "lmdb",
                "lmdb-nordahead",
                "rocksdb",
                "fs",
                "floor",
                "postgres",
                "postgres-raw",
                "mariadb",
                "mariadb-raw",
                "mysql",
                "mysql-raw",
                "dolt",
                "dolt-raw",
                "seaweedfs"
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
            EngineKind::reader_of(StoreKind::named("sqlite").unwrap()),
            named("sqlite-raw")
        );
        assert_eq!(
            EngineKind::reader_of(StoreKind::named("floor").unwrap()),
            named("floor")
        );
        assert_eq!(EngineKind::floor(), named("floor"));
        for kind in EngineKind::all() {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<EngineKind>(&json).unwrap(), kind);
        }
    }

    #[test]
    fn every_database_is_one_store_and_its_engines_follow_the_list() {
        let stores: Vec<&str> = StoreKind::all().map(StoreKind::name).collect();
        assert_eq!(
            stores,
            [
                "sqlite",
                "redb",
                "lmdb",
                "rocksdb",
                "fs",
                "floor",
                "postgres",
                "mariadb",
                "mysql",
                "dolt",
                "seaweedfs"
            ]
        );
        for store in StoreKind::all() {
            assert_eq!(StoreKind::named(store.name()), Some(store));
            let json = serde_json::to_string(&store).unwrap();
            assert_eq!(serde_json::from_str::<StoreKind>(&json).unwrap(), store);
            // Every engine of a database reads its store, and each has one.
            let engines: Vec<&str> = EngineKind::all()
                .filter(|e| e.store() == store)
                .map(EngineKind::name)
                .collect();
            let declared: Vec<&str> = store.db().engines().iter().map(|d| d.name).collect();
            assert_eq!(engines, declared, "{}", store.name());
            assert!(!engines.is_empty(), "{} has no engine", store.name());
        }
        assert_eq!(StoreKind::all().filter(|s| s.is_floor()).count(), 1);
        // A server is a store whose database is one, and finds its store again.
        let servers: Vec<&str> = Server::all().map(|s| s.name()).collect();
        assert_eq!(
            servers,
            ["postgres", "mariadb", "mysql", "dolt", "seaweedfs"]
        );
        for server in Server::all() {
            assert_eq!(server.store().server(), Some(server));
            assert!(server.store().is_server() && server.store().has_keys());
        }
        let fs = StoreKind::named("fs").unwrap();
        assert!(fs.server().is_none() && !fs.has_keys() && !fs.is_server());
    }
}
