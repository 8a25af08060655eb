//! Byte sizes as people write them: `64KiB`, `4MiB`, `1k`, `32M`, `3GiB`.
//!
//! Units follow `dd`: IEC suffixes (`KiB`, `MiB`, `GiB`, `TiB`) and the bare
//! letters (`k`/`K`, `M`, `G`, `T`) are powers of 1024; the two-letter SI forms
//! (`kB`/`KB`, `MB`, `GB`, `TB`) are powers of 1000. `B` or no suffix is bytes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::InputError;

const KIB: u64 = 1024;

/// Parse a byte count with an optional unit (see the module docs).
pub fn parse_bytes(text: &str) -> Result<u64, InputError> {
    let trimmed = text.trim();
    let digits_end = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(digits_end);
    let unit = unit.trim();
    let bad = |why: &str| InputError::Size {
        input: text.to_string(),
        why: why.to_string(),
    };
    if number.is_empty() {
        return Err(bad("it does not start with a number"));
    }
    let multiplier: u64 = match unit {
        "" | "B" | "b" => 1,
        "k" | "K" | "KiB" | "Ki" => KIB,
        // Lowercase m/g/t as Docker's mem_limit reads them: BLOBRACE_CAP=1g serves both.
        "M" | "m" | "MiB" | "Mi" => KIB.pow(2),
        "G" | "g" | "GiB" | "Gi" => KIB.pow(3),
        "T" | "t" | "TiB" | "Ti" => KIB.pow(4),
        "kB" | "KB" => 1000,
        "MB" => 1000u64.pow(2),
        "GB" => 1000u64.pow(3),
        "TB" => 1000u64.pow(4),
        other => {
            return Err(bad(&format!(
                "unknown unit '{other}' (use B, KiB, MiB, GiB, TiB or k, M, G, T for powers of 1024; kB, MB, GB, TB for powers of 1000)"
            )));
        }
    };
    let value: f64 = number.parse().map_err(|_| bad("the number is not valid"))?;
    let bytes = value * multiplier as f64;
    if bytes.fract() != 0.0 {
        return Err(bad("it is not a whole number of bytes"));
    }
    if !(0.0..=u64::MAX as f64).contains(&bytes) {
        return Err(bad("it is too large"));
    }
    Ok(bytes as u64)
}

/// Binary units, largest first.
const UNITS: [(&str, u64); 4] = [
    ("TiB", KIB * KIB * KIB * KIB),
    ("GiB", KIB * KIB * KIB),
    ("MiB", KIB * KIB),
    ("KiB", KIB),
];

/// `bytes` in the largest unit they reach, to `decimals` places; bytes below 1 KiB as `B`.
fn in_largest_unit(bytes: u64, decimals: usize) -> String {
    match UNITS.iter().find(|&&(_, scale)| bytes >= scale) {
        Some((unit, scale)) => format!("{:.decimals$}{unit}", bytes as f64 / *scale as f64),
        None => format!("{bytes}B"),
    }
}

/// Format bytes with the largest binary unit that divides them exactly
/// (`65536` → `64KiB`), else with one decimal (`1.5MiB` style) for display only.
pub fn format_bytes(bytes: u64) -> String {
    match UNITS
        .iter()
        .find(|&&(_, scale)| bytes >= scale && bytes.is_multiple_of(scale))
    {
        Some((unit, scale)) => format!("{}{unit}", bytes / scale),
        None => in_largest_unit(bytes, 1),
    }
}

/// `3.21GiB`, or `unavailable` where the store cannot say.
pub fn disk_label(bytes: Option<u64>) -> String {
    bytes
        .map(format_bytes_approx)
        .unwrap_or_else(|| "unavailable".into())
}

/// Bytes in the largest binary unit they reach, to two decimals (`4.01GiB`): for
/// measured sizes (a file on disk), which rarely divide a unit exactly.
pub fn format_bytes_approx(bytes: u64) -> String {
    in_largest_unit(bytes, 2)
}

/// The size of every blob in one dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SizeClass(u64);

impl SizeClass {
    /// Every blob starts with its id (8 bytes, little endian), so a fetch can be checked.
    pub const MIN_BYTES: u64 = 8;
    /// The loader holds a few copies of one blob in memory, and SQLite caps a value at 1e9 bytes.
    pub const MAX_BYTES: u64 = 256 * KIB * KIB;

    pub fn new(bytes: u64) -> Result<Self, InputError> {
        if bytes == 0 {
            return Err(InputError::Size {
                input: "0".into(),
                why: "a size class must be at least 8 bytes (every blob starts with its 8-byte id)"
                    .into(),
            });
        }
        if bytes < Self::MIN_BYTES {
            return Err(InputError::Size {
                input: format!("{bytes}B"),
                why: "a size class must be at least 8 bytes (every blob starts with its 8-byte id)"
                    .into(),
            });
        }
        if bytes > Self::MAX_BYTES {
            return Err(InputError::Size {
                input: format_bytes(bytes),
                why: format!(
                    "the largest supported size class is {}",
                    format_bytes(Self::MAX_BYTES)
                ),
            });
        }
        Ok(Self(bytes))
    }

    pub fn bytes(self) -> u64 {
        self.0
    }

    pub fn as_usize(self) -> usize {
        self.0 as usize
    }

    /// The six classes of the blog post this suite grew from.
    pub fn defaults() -> Vec<SizeClass> {
        [
            KIB,
            8 * KIB,
            64 * KIB,
            512 * KIB,
            4 * KIB * KIB,
            32 * KIB * KIB,
        ]
        .into_iter()
        .map(SizeClass)
        .collect()
    }

    /// Rows a dataset of `dataset_bytes` holds: whole blobs only.
    pub fn rows_for(self, dataset_bytes: u64) -> Result<u64, InputError> {
        let rows = dataset_bytes / self.0;
        if rows == 0 {
            return Err(InputError::DatasetTooSmall {
                dataset: format_bytes(dataset_bytes),
                size: self.to_string(),
            });
        }
        Ok(rows)
    }
}

impl fmt::Display for SizeClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_bytes(self.0))
    }
}

impl FromStr for SizeClass {
    type Err = InputError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SizeClass::new(parse_bytes(s)?)
    }
}

/// Parse a comma-separated list of size classes, sorted and de-duplicated.
pub fn parse_size_list(text: &str) -> Result<Vec<SizeClass>, InputError> {
    let mut sizes = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        sizes.push(part.parse::<SizeClass>()?);
    }
    if sizes.is_empty() {
        return Err(InputError::Size {
            input: text.to_string(),
            why: "no size classes given".into(),
        });
    }
    sizes.sort();
    sizes.dedup();
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_decimal_units() {
        assert_eq!(parse_bytes("64KiB").unwrap(), 65536);
        assert_eq!(parse_bytes("4MiB").unwrap(), 4 << 20);
        assert_eq!(parse_bytes("1k").unwrap(), 1024);
        assert_eq!(parse_bytes("1K").unwrap(), 1024);
        assert_eq!(parse_bytes("32M").unwrap(), 32 << 20);
        assert_eq!(parse_bytes("3GiB").unwrap(), 3 << 30);
        assert_eq!(parse_bytes("1kB").unwrap(), 1000);
        assert_eq!(parse_bytes("2MB").unwrap(), 2_000_000);
        assert_eq!(parse_bytes("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes(" 8 KiB ").unwrap(), 8192);
    }

    #[test]
    fn bad_sizes_are_rejected_with_the_reason() {
        let err = parse_bytes("12XB").unwrap_err().to_string();
        assert!(
            err.contains("12XB") && err.contains("unknown unit 'XB'"),
            "{err}"
        );
        assert!(parse_bytes("KiB").is_err());
        assert!(parse_bytes("1.5").is_err());
        assert!(
            "0".parse::<SizeClass>()
                .unwrap_err()
                .to_string()
                .contains("at least 8 bytes")
        );
        assert!("4".parse::<SizeClass>().is_err());
        assert!("1GiB".parse::<SizeClass>().is_err());
        assert!(parse_size_list(" , ").is_err());
    }

    #[test]
    fn formatting_round_trips() {
        for size in SizeClass::defaults() {
            assert_eq!(size.to_string().parse::<SizeClass>().unwrap(), size);
        }
        assert_eq!(format_bytes(65536), "64KiB");
        assert_eq!(format_bytes(1000), "1000B");
        assert_eq!(format_bytes(1536), "1.5KiB");
    }

    #[test]
    fn rows_are_whole_blobs_and_never_zero() {
        let s: SizeClass = "64KiB".parse().unwrap();
        assert_eq!(s.rows_for(3 << 30).unwrap(), 49152);
        assert_eq!(s.rows_for(65536 * 2 + 5).unwrap(), 2);
        let err = s.rows_for(1000).unwrap_err().to_string();
        assert!(err.contains("smaller than one"), "{err}");
    }

    #[test]
    fn size_list_sorts_and_dedups() {
        let list = parse_size_list("4MiB,1k,1KiB,64KiB").unwrap();
        assert_eq!(
            list.iter().map(|s| s.bytes()).collect::<Vec<_>>(),
            vec![1024, 65536, 4 << 20]
        );
    }
}
