//! PostgreSQL's knobs: `--pg-storage`, how it stores the blob column, and
//! `--pg-compression`, what compresses the values it stores EXTENDED; each choice makes
//! a dataset a different dataset (its own schema). Collected into the run's flags by
//! `registry::DatabaseKnobs`; recorded in results.json as `pg_storage` and
//! `pg_compression`.

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

    /// What compresses a value stored EXTENDED: pglz (PostgreSQL's default) or lz4 (the
    /// column's COMPRESSION, as `default_toast_compression = lz4` would set it; faster to
    /// compress and decompress, a little larger). Only for --pg-storage extended: the
    /// other storages never compress. lz4 is its own dataset (schema suffix _lz4).
    #[arg(id = "pg_compression", long = "pg-compression", value_name = "PG_COMPRESSION", env = "BLOBRACE_PG_COMPRESSION", value_enum, default_value_t = PgCompression::Pglz)]
    // Absent in results written before it existed: PostgreSQL's default.
    #[serde(rename = "pg_compression", default)]
    pub compression: PgCompression,
}

impl KnobSet for PostgresKnobs {
    fn label(&self) -> String {
        match (self.storage, self.compression) {
            (PgStorage::Extended, PgCompression::Lz4) => {
                "PostgreSQL storage extended, compression lz4".into()
            }
            (storage, _) => format!("PostgreSQL storage {}", crate::serde_name(&storage)),
        }
    }

    fn check(&self) -> Result<(), String> {
        match (self.storage, self.compression) {
            (PgStorage::Extended, _) | (_, PgCompression::Pglz) => Ok(()),
            (storage, PgCompression::Lz4) => Err(format!(
                "--pg-compression lz4 compresses what PostgreSQL stores EXTENDED, but --pg-storage {} never compresses: drop --pg-compression, or use --pg-storage extended",
                crate::serde_name(&storage)
            )),
        }
    }
}

impl PostgresKnobs {
    /// lz4 only where it applies (EXTENDED): the other storages never compress.
    pub fn lz4(&self) -> bool {
        self.storage == PgStorage::Extended && self.compression == PgCompression::Lz4
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

/// What compresses a value stored EXTENDED. Both give up on a value that does not
/// compress (random bytes are stored as they come either way).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PgCompression {
    /// PostgreSQL's own LZ-family compressor, its default.
    #[default]
    Pglz,
    /// LZ4 (PostgreSQL 14+, built `--with-lz4`, as Debian's and the official image are).
    Lz4,
}
