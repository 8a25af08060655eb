//! What compresses RocksDB's values (`--rocksdb-compression`): nothing (this project's
//! default, and RocksDB's own for blob files: `blob_compression_type` kNoCompression), or
//! the two its users pick for values that compress, LZ4 and ZSTD. One setting for the
//! blob files (`blob_compression_type`) and the SST files' data blocks (`compression`),
//! so a layout without blob files compresses its values too. Each its own dataset
//! directory (`-lz4`, `-zstd`): a compressed dataset is other bytes on disk.

use serde::{Deserialize, Serialize};

/// A value of RocksDB's `CompressionType` through the C API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// Stored as they come.
    #[default]
    None,
    /// LZ4: fast to compress and decompress.
    Lz4,
    /// ZSTD at RocksDB's default level: smaller, dearer to compress.
    Zstd,
}

impl Compression {
    /// `rocksdb_no_compression`, `rocksdb_lz4_compression`, `rocksdb_zstd_compression`
    /// (c.h).
    pub fn code(self) -> i32 {
        match self {
            Compression::None => 0,
            Compression::Lz4 => 4,
            Compression::Zstd => 7,
        }
    }

    /// The dataset directory's part: nothing for none, so every dataset loaded before
    /// this choice keeps its name.
    pub fn dir_suffix(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Lz4 => "-lz4",
            Compression::Zstd => "-zstd",
        }
    }

    /// The layout's words where it is not the default.
    pub fn layout(self) -> Option<String> {
        match self {
            Compression::None => None,
            other => Some(format!("{} compression", other.name())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "LZ4",
            Compression::Zstd => "ZSTD",
        }
    }

    /// As the settings record it: "uncompressed", "LZ4-compressed".
    pub fn setting(self) -> String {
        match self {
            Compression::None => "uncompressed".into(),
            other => format!("{}-compressed", other.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_compression_names_its_own_directory_and_rocksdbs_code() {
        assert_eq!(Compression::default(), Compression::None);
        let dirs: Vec<&str> = [Compression::None, Compression::Lz4, Compression::Zstd]
            .iter()
            .map(|c| c.dir_suffix())
            .collect();
        assert_eq!(dirs, ["", "-lz4", "-zstd"]);
        assert_eq!((Compression::Lz4.code(), Compression::Zstd.code()), (4, 7));
        assert_eq!(Compression::None.layout(), None);
        assert_eq!(
            serde_json::to_string(&Compression::Zstd).unwrap(),
            "\"zstd\""
        );
    }
}
