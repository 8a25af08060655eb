//! The SQLite settings of a load and of its readers, one place for the store (which
//! switches a dataset between them) and the writer (which loads with the first), and
//! the connection settings every SQLite connection of a dataset opens with.

use std::path::Path;

use sea_orm::ConnectOptions;
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};

/// While loading: the rollback journal in memory (a failed statement still rolls
/// back; nothing is written twice, as WAL does) and no fsync per commit.
pub(super) const LOAD_PRAGMAS: [&str; 2] =
    ["PRAGMA journal_mode = MEMORY", "PRAGMA synchronous = OFF"];
/// What readers run with, restored before the dataset is marked complete.
pub(super) const READ_PRAGMAS: [&str; 2] =
    ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL"];

/// SeaORM wants a URL that parses and names SQLite; the file itself is given as a path
/// (`filename`) in `map_sqlx_sqlite_opts`. The path pasted into the URL broke on a data
/// directory named "my data" (not a URL), "a?b" (a query) or "a#b" (a fragment): fs and
/// the floor loaded, then every SQLite engine failed.
pub const URL_OF_THE_FILE_GIVEN_BELOW: &str = "sqlite://the-file-given-by-path";

/// Connection settings shared by the loader and both SQLite engines: WAL with
/// synchronous=NORMAL (the usual application setting), no statement logging,
/// no ping per pool checkout, one connection.
/// `page_size` only takes effect when the file is created (sqlx sets it before the
/// journal mode: never once a file is in WAL mode); an existing file keeps its own.
/// `mmap_size`: SQLite's pragma for the readers (None: SQLite's own, for the loader).
/// One closure sets every option: SeaORM keeps only the last `map_sqlx_sqlite_opts`.
pub fn sqlite_connect_options(
    path: &Path,
    create: bool,
    page_size: u32,
    mmap_size: Option<u64>,
) -> ConnectOptions {
    let file = path.to_path_buf();
    let mut opts = ConnectOptions::new(URL_OF_THE_FILE_GIVEN_BELOW);
    opts.sqlx_logging(false)
        .test_before_acquire(false)
        .max_connections(1)
        .min_connections(1)
        .map_sqlx_sqlite_opts(move |o| {
            let o = o
                .filename(&file)
                .create_if_missing(create)
                .page_size(page_size)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal);
            match mmap_size {
                Some(bytes) => o.pragma("mmap_size", bytes.to_string()),
                None => o,
            }
        });
    opts
}
