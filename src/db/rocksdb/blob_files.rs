//! Where RocksDB keeps a dataset's values: the layout `--rocksdb-min-blob-size` chooses,
//! each its own dataset directory. With blob files (integrated BlobDB), a value of
//! `min_blob_size` or more is written once to a blob file and the LSM tree holds a small
//! reference to it, so compactions move keys, not blobs; without, every value sits in
//! the SST files' data blocks and each compaction rewrites it (RocksDB's own default).
//! RocksDB's blog (2021) reports loads 2.3-4.7x faster and reads up to 1.4x faster with
//! blob files for values of 1 KB-1 MB; `blobrace variants` checks that on this disk.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::size::{format_bytes, parse_bytes};

/// The values in blob files: from `From(bytes)` up, or none (`Off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum BlobFiles {
    /// `enable_blob_files` off: every value in the SST files.
    Off,
    /// `enable_blob_files` on, `min_blob_size` this many bytes.
    From(u64),
}

/// Every value in a blob file (`min_blob_size` 0, RocksDB's own default for it once blob
/// files are on): the dataset's layout unless asked otherwise.
impl Default for BlobFiles {
    fn default() -> Self {
        BlobFiles::From(0)
    }
}

impl BlobFiles {
    /// What the dataset's directory adds to its name: nothing for the default, so the
    /// datasets loaded before this choice existed keep theirs.
    pub fn dir_suffix(self) -> String {
        match self {
            BlobFiles::From(0) => String::new(),
            BlobFiles::From(bytes) => format!("-mb{bytes}"),
            BlobFiles::Off => "-noblob".into(),
        }
    }

    /// The layout's words where it is not the default ("no blob files",
    /// "min_blob_size 64KiB").
    pub fn layout(self) -> Option<String> {
        match self {
            BlobFiles::From(0) => None,
            BlobFiles::From(bytes) => Some(format!("min_blob_size {}", format_bytes(bytes))),
            BlobFiles::Off => Some("no blob files".into()),
        }
    }

    /// For the run's layout line: "blob files, min_blob_size 0 B", "no blob files".
    pub fn label(self) -> String {
        match self {
            BlobFiles::From(bytes) => format!("blob files, min_blob_size {bytes} B"),
            BlobFiles::Off => "no blob files".into(),
        }
    }

    /// The setting as recorded with each result.
    pub fn setting(self, blob_file_size: u64) -> String {
        match self {
            BlobFiles::Off => "off (every value in the SST files' data blocks)".into(),
            BlobFiles::From(0) => format!(
                "on (enable_blob_files; min_blob_size 0: every value in a blob file; blob_file_size {})",
                format_bytes(blob_file_size)
            ),
            BlobFiles::From(bytes) => format!(
                "on (enable_blob_files; min_blob_size {}: smaller values in the SST files; blob_file_size {})",
                format_bytes(bytes),
                format_bytes(blob_file_size)
            ),
        }
    }
}

/// `off`, or the byte count of `min_blob_size` (as results.json and the flag hold it).
impl fmt::Display for BlobFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlobFiles::Off => f.write_str("off"),
            BlobFiles::From(bytes) => write!(f, "{bytes}"),
        }
    }
}

impl FromStr for BlobFiles {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        if matches!(trimmed.to_ascii_lowercase().as_str(), "off" | "none" | "no") {
            return Ok(BlobFiles::Off);
        }
        parse_bytes(trimmed).map(BlobFiles::From).map_err(|e| {
            format!(
                "RocksDB's min_blob_size is a size (0: every value in blob files, 4KiB, 64KiB...) or off (no blob files), not '{text}': {e}"
            )
        })
    }
}

impl TryFrom<String> for BlobFiles {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

impl From<BlobFiles> for String {
    fn from(blobs: BlobFiles) -> String {
        blobs.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_choice_reads_back_and_names_its_own_directory() {
        for (text, blobs, suffix) in [
            ("0", BlobFiles::From(0), ""),
            ("64KiB", BlobFiles::From(65536), "-mb65536"),
            ("off", BlobFiles::Off, "-noblob"),
        ] {
            let parsed: BlobFiles = text.parse().unwrap();
            assert_eq!(parsed, blobs);
            assert_eq!(parsed.dir_suffix(), suffix);
            // As results.json holds it, and back.
            let json = serde_json::to_string(&parsed).unwrap();
            assert_eq!(serde_json::from_str::<BlobFiles>(&json).unwrap(), parsed);
        }
        assert_eq!(BlobFiles::default().layout(), None);
        let refused = "4 parsecs".parse::<BlobFiles>().unwrap_err();
        assert!(
            refused.contains("min_blob_size") && refused.contains("off"),
            "{refused}"
        );
    }
}
