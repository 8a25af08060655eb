//! Every database blobrace measures, one folder each (go-ycsb's `db/<name>/` is the
//! model): `db/<name>/` holds its store (how a dataset is loaded, resumed, evicted
//! and removed), its engines (what one fetch is), and what it records. `DATABASES`
//! lists them; the stores, the engines, `--engines`, `--help` and the report's rows
//! all come from this list, so nothing else names a database.
//!
//! A database implements the small core of `Database` and opts into capabilities:
//! keys (`has_keys`), being a server in its own capped container (`server`: its
//! connection, cold restart, cache to size, pprof, memory model, in `db/server/`,
//! what every server database shares), or being the physical floor.
//!
//! Below the folders: `engine.rs` (the `Engine` trait), `store.rs` (the `Store`
//! trait), `orm_engine.rs` and `orm_store.rs` (what SeaORM does the same on every SQL
//! database), `any_engine.rs` (the timed path's one match), `database.rs` (the `Database` trait
//! each folder implements), `registry.rs` (`DATABASES`, the list, at the top: it
//! alone names the folders; and places in it as the `StoreKind` and `EngineKind`
//! handles results are written by).

pub mod any_engine;
pub mod contained;
pub mod database;
pub mod engine;
pub mod knobs;
pub mod locations;
pub mod orm_churn;
pub mod orm_engine;
pub mod orm_store;
pub mod registry;
pub mod server;
pub mod shared_handles;
pub mod single_file;
pub mod store;

pub mod dolt;
pub mod floor;
pub mod fs;
pub mod lmdb;
pub mod mariadb;
pub mod mysql;
pub mod postgres;
pub mod redb;
pub mod rocksdb;
pub mod seaweedfs;
pub mod sqlite;
