//! SQLite's knobs: its page size (a layout: each page size is its own dataset file) and
//! its mmap_size (a read setting: the same file read another way). Collected into the
//! run's flags by `registry::DatabaseKnobs`; recorded in results.json as
//! `sqlite_page_size` and `sqlite_mmap_size`.

use serde::{Deserialize, Serialize};

use crate::db::knobs::KnobSet;
use crate::size::parse_bytes;

/// SQLite's default page size, the SQLite datasets' default layout.
pub const DEFAULT_PAGE_SIZE: u32 = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args, Serialize, Deserialize)]
pub struct SqliteKnobs {
    /// SQLite's page size for the dataset file, in bytes: a power of two from 512 to
    /// 65536. The file's layout: each page size is its own dataset
    /// (`sqlite/<size>-x<N>-p<bytes>.sqlite`; 4096, SQLite's default, keeps the plain name).
    #[arg(long = "sqlite-page-size", value_name = "SQLITE_PAGE_SIZE", env = "BLOBRACE_SQLITE_PAGE_SIZE", value_parser = parse_page_size, default_value_t = DEFAULT_PAGE_SIZE)]
    #[serde(rename = "sqlite_page_size", default = "default_page_size")]
    pub page_size: u32,

    /// SQLite's mmap_size for the SQLite engines' connections, in bytes (0, SQLite's
    /// default: read with read(2) into its own page cache; e.g. 4GiB: memory-map the
    /// whole file, reads then copy from the kernel's page cache). A read setting, not
    /// a file layout: it reads the same file. Recorded as mmap_size with each result.
    #[arg(long = "sqlite-mmap-size", value_name = "SQLITE_MMAP_SIZE", env = "BLOBRACE_SQLITE_MMAP_SIZE", value_parser = parse_bytes, default_value = "0")]
    #[serde(rename = "sqlite_mmap_size", default)]
    pub mmap_size: u64,
}

impl Default for SqliteKnobs {
    fn default() -> Self {
        Self {
            page_size: DEFAULT_PAGE_SIZE,
            mmap_size: 0,
        }
    }
}

impl KnobSet for SqliteKnobs {
    fn label(&self) -> String {
        format!(
            "SQLite page {} B, mmap_size {}",
            self.page_size, self.mmap_size
        )
    }
}

fn default_page_size() -> u32 {
    DEFAULT_PAGE_SIZE
}

/// `--sqlite-page-size`: what SQLite accepts, or one error naming the choices.
pub fn parse_page_size(text: &str) -> Result<u32, String> {
    let valid =
        "a power of two from 512 to 65536 (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)";
    match text.trim().parse::<u32>() {
        Ok(n) if (512..=65536).contains(&n) && n.is_power_of_two() => Ok(n),
        _ => Err(format!("SQLite's page size is {valid}, not '{text}'")),
    }
}
