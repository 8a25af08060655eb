//! The SQLite settings of a load and of its readers, one place for the store (which
//! switches a dataset between them) and the writer (which loads with the first).

/// While loading: the rollback journal in memory (a failed statement still rolls
/// back; nothing is written twice, as WAL does) and no fsync per commit.
pub(super) const LOAD_PRAGMAS: [&str; 2] =
    ["PRAGMA journal_mode = MEMORY", "PRAGMA synchronous = OFF"];
/// What readers run with, restored before the dataset is marked complete.
pub(super) const READ_PRAGMAS: [&str; 2] =
    ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL"];
