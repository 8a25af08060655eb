//! `--pg-storage`: how PostgreSQL stores the blob column, a choice that makes a
//! dataset a different dataset (its own schema). A leaf, so the options every server
//! shares (`ServerOptions`) can hold it.

use serde::{Deserialize, Serialize};

/// How PostgreSQL stores the blob column. Values over ~2 kB go out of line into
/// TOAST (~2000-byte chunks) either way; the difference is the compression attempt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PgStorage {
    /// PostgreSQL's default for bytea: try to compress each value, then TOAST it.
    #[default]
    Extended,
    /// TOAST without trying to compress (pointless on random bytes).
    External,
    /// Large objects: the row holds an oid; the bytes are in `pg_largeobject` in
    /// 2 KiB pages (LOBLKSIZE), written by `lo_from_bytea` and read by `lo_get`.
    #[value(name = "lo")]
    #[serde(rename = "lo")]
    LargeObject,
}
