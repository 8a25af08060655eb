//! PostgreSQL's knob: `--pg-storage`, how it stores the blob column, a choice that makes
//! a dataset a different dataset (its own schema). Collected into the run's flags by
//! `registry::DatabaseKnobs`; recorded in results.json as `pg_storage`.

use serde::{Deserialize, Serialize};

use crate::db::knobs::KnobSet;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::Args, Serialize, Deserialize)]
pub struct PostgresKnobs {
    /// How PostgreSQL stores the blobs: extended (its default: try to compress, then
    /// TOAST), external (TOAST without a compression attempt), or lo (large objects: the
    /// row holds an oid, the bytes are in pg_largeobject, written with lo_from_bytea and
    /// read with lo_get). Each is its own dataset (schema suffix _external, _lo).
    #[arg(long = "pg-storage", value_name = "PG_STORAGE", env = "BLOBRACE_PG_STORAGE", value_enum, default_value_t = PgStorage::Extended)]
    #[serde(rename = "pg_storage", default)]
    pub storage: PgStorage,
}

impl KnobSet for PostgresKnobs {
    fn label(&self) -> String {
        format!("PostgreSQL storage {}", crate::serde_name(&self.storage))
    }
}

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
