//! RocksDB's knobs: `--rocksdb-min-blob-size`, whether its values go to blob files and
//! from what size, and `--rocksdb-compression`, what compresses them (layouts: each its
//! own dataset directory, `blob_files.rs`, `compression.rs`). Collected into the run's
//! flags by `registry::DatabaseKnobs`; recorded in results.json as
//! `rocksdb_min_blob_size` and `rocksdb_compression`.

use serde::{Deserialize, Serialize};

use super::blob_files::BlobFiles;
use super::compression::Compression;
use crate::db::knobs::KnobSet;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::Args, Serialize, Deserialize)]
pub struct RocksdbKnobs {
    /// RocksDB's values in blob files from this size up (its min_blob_size: 0, every
    /// value; 4KiB, 64KiB...), or off: no blob files, every value in the LSM tree's SST
    /// files, rewritten by each compaction (RocksDB's own default). The dataset's layout:
    /// each its own directory (`rocksdb/<size>-x<N>-mb<bytes>`, `-noblob`; 0 keeps the
    /// plain name).
    #[arg(long = "rocksdb-min-blob-size", value_name = "ROCKSDB_MIN_BLOB_SIZE", env = "BLOBRACE_ROCKSDB_MIN_BLOB_SIZE", default_value_t = BlobFiles::default())]
    // Absent in results written before it existed: their RocksDB datasets had every
    // value in blob files, the default.
    #[serde(rename = "rocksdb_min_blob_size", default)]
    pub blob_files: BlobFiles,

    /// What compresses RocksDB's values, in blob files and SST files alike: none (RocksDB's
    /// default for blob files), lz4 or zstd (what its users pick for values that
    /// compress). Each its own dataset directory (`-lz4`, `-zstd`).
    #[arg(id = "rocksdb_compression", long = "rocksdb-compression", value_name = "ROCKSDB_COMPRESSION", env = "BLOBRACE_ROCKSDB_COMPRESSION", value_enum, default_value_t = Compression::None)]
    // Absent in results written before it existed: nothing was compressed.
    #[serde(rename = "rocksdb_compression", default)]
    pub compression: Compression,
}

impl KnobSet for RocksdbKnobs {
    fn label(&self) -> String {
        match self.compression {
            Compression::None => format!("RocksDB {}", self.blob_files.label()),
            other => format!(
                "RocksDB {}, {} compression",
                self.blob_files.label(),
                other.name()
            ),
        }
    }
}
