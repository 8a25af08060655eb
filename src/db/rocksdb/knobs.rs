//! RocksDB's knob: `--rocksdb-min-blob-size`, whether its values go to blob files and
//! from what size (a layout: each its own dataset directory, `blob_files.rs`). Collected
//! into the run's flags by `registry::DatabaseKnobs`; recorded in results.json as
//! `rocksdb_min_blob_size`.

use serde::{Deserialize, Serialize};

use super::blob_files::BlobFiles;
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
}

impl KnobSet for RocksdbKnobs {
    fn label(&self) -> String {
        format!("RocksDB {}", self.blob_files.label())
    }
}
