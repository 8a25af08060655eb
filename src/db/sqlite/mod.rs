//! SQLite, in-process: one file per size class, opened in this process (so its
//! cache is this process's page cache, under this process's cap). Three engines
//! read the same file: through SeaORM (`orm.rs`), a prepared statement through
//! SQLite's C API (`stmt.rs`), and incremental blob I/O (`blobio.rs`); `store.rs`
//! loads it (its rows through `writer.rs`), `c_api.rs` is the thin layer over
//! SQLite's C API they share.

pub mod blobio;
pub mod c_api;
pub mod knobs;
mod orm;
mod pragmas;
pub mod stmt;
pub mod store;
mod writer;

use super::any_engine::AnyEngine;
use super::database::{Database, EngineDef, Open};
use super::engine::Client;
use super::store::{BoxedStore, boxed};
use crate::dataset::DatasetSpec;
use crate::db::locations::Locations;
use crate::size::format_bytes;
pub use knobs::{DEFAULT_PAGE_SIZE, SqliteKnobs};

pub struct Sqlite;

impl Database for Sqlite {
    /// 3 GiB of 1 KiB rows in 20 s: batched inserts in one transaction.
    fn load_cost(&self) -> crate::db::database::LoadCost {
        crate::db::database::LoadCost {
            micros_per_row: 3.0,
            mb_per_s: 300.0,
        }
    }

    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn changes_rows(&self) -> bool {
        true
    }

    fn engines(&self) -> Vec<EngineDef> {
        vec![
            EngineDef {
                name: "sqlite",
                client_copies: 5,
                help: "SQLite through SeaORM: blob::Entity::find_by_id(id).one(&db)",
                client: Client::Orm,
                open: Open::Embedded(|at, spec| {
                    Box::pin(async move { Ok(AnyEngine::Orm(orm::open(at, spec).await?)) })
                }),
            },
            EngineDef {
                name: "sqlite-raw",
                // SQLite's row value, the output buffer, the content check's scratch, and
                // SQLite's own page cache (2 MB): 249 MiB peak RSS at 16 clients of 4 MiB
                // blobs, 29 MiB at 1 (3.4 blobs per client).
                client_copies: 4,
                help: "the same SQLite file and query as a prepared statement through SQLite's C API in this thread (as Python's sqlite3 runs it; sqlx's worker thread and row copy cost 20% at 4 MiB)",
                client: Client::Raw,
                open: Open::Embedded(|at, spec| {
                    Box::pin(async move { Ok(AnyEngine::SqliteStmt(stmt::open(at, spec).await?)) })
                }),
            },
            EngineDef {
                name: "sqlite-blobio",
                // The output buffer, the content check's scratch, and SQLite's own page
                // cache (2 MB): 178 MiB peak RSS at 16 clients of 4 MiB blobs, 25 MiB at 1
                // (2.4 blobs per client).
                client_copies: 3,
                help: "the same SQLite file through incremental blob I/O (sqlite3_blob_reopen + sqlite3_blob_read into the reused buffer), no SQL per fetch",
                client: Client::Direct,
                open: Open::Embedded(|at, spec| {
                    Box::pin(
                        async move { Ok(AnyEngine::SqliteBlobIo(blobio::open(at, spec).await?)) },
                    )
                }),
            },
        ]
    }

    fn layout(&self, at: &Locations) -> Vec<String> {
        let knobs = at.knobs.get::<SqliteKnobs>();
        let mut parts = Vec::new();
        if knobs.page_size != DEFAULT_PAGE_SIZE {
            parts.push(format!("page {}", knobs.page_size));
        }
        if knobs.mmap_size != 0 {
            parts.push(format!("mmap {}", format_bytes(knobs.mmap_size)));
        }
        parts
    }

    /// With mmap_size set, every engine's pager reads the file through its map.
    fn reads_by_mmap(&self, _engine: &str, at: &Locations) -> bool {
        at.knobs.get::<SqliteKnobs>().mmap_size != 0
    }

    fn open_store(&self, at: &Locations, spec: DatasetSpec) -> BoxedStore {
        boxed(store::SqliteStore::new(
            &at.data_dir,
            spec,
            at.knobs.get::<SqliteKnobs>().page_size,
        ))
    }
}

/// "cannot open SQLite database X", with what its folder says where that is the cause
/// (a read-only mount, a full disk: SQLite said only "unable to open database file").
fn cannot_open(path: &std::path::Path) -> String {
    match crate::db::store::folder_trouble(path) {
        Some(why) => format!("cannot open SQLite database {}: {why}", path.display()),
        None => format!("cannot open SQLite database {}", path.display()),
    }
}
