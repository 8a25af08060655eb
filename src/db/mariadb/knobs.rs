//! MariaDB's knob: `--mariadb-compression`, whether the blob column is declared
//! `COMPRESSED` (MariaDB's own column compression, zlib, since 10.3: each value
//! compressed by the server before InnoDB stores it, and decompressed per read). Off by
//! default, as MariaDB's columns are. A compressed column is its own dataset (database
//! suffix _zlib). Collected into the run's flags by `registry::DatabaseKnobs`; recorded
//! in results.json as `mariadb_compression`. MySQL has no column compression (its
//! InnoDB `ROW_FORMAT=COMPRESSED` is a table's pages, another mechanism): not built.

use serde::{Deserialize, Serialize};

use crate::db::knobs::KnobSet;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::Args, Serialize, Deserialize)]
pub struct MariadbKnobs {
    /// What compresses MariaDB's blobs: none (its default) or zlib (the column declared
    /// LONGBLOB COMPRESSED: MariaDB compresses each value with zlib before InnoDB stores
    /// it). zlib is its own dataset (database suffix _zlib).
    #[arg(id = "mariadb_compression", long = "mariadb-compression", value_name = "MARIADB_COMPRESSION", env = "BLOBRACE_MARIADB_COMPRESSION", value_enum, default_value_t = MariadbCompression::None)]
    // Absent in results written before it existed: nothing was compressed.
    #[serde(rename = "mariadb_compression", default)]
    pub compression: MariadbCompression,
}

impl KnobSet for MariadbKnobs {
    fn label(&self) -> String {
        match self.compression {
            MariadbCompression::None => "MariaDB column uncompressed".into(),
            MariadbCompression::Zlib => "MariaDB column COMPRESSED (zlib)".into(),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MariadbCompression {
    /// A plain LONGBLOB.
    #[default]
    None,
    /// LONGBLOB COMPRESSED: zlib at `column_compression_zlib_level` (6 by default).
    Zlib,
}
