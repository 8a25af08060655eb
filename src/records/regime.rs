//! Whether a dataset can sit in memory under the memory it is read with (the cap, or
//! the machine's RAM, or unknown for a remote server): every result's regime.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::cap::CapReport;
use crate::size::format_bytes;

/// Whether the data can sit in memory: the question the cap is there to answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Regime {
    pub dataset_bytes: u64,
    /// What the store keeps of them, where measured: what memory has to hold (fewer
    /// bytes where it compresses, more where pages hold each blob with room to spare).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_bytes: Option<u64>,
    /// The cap if there is one, else the machine's RAM.
    pub effective_memory_bytes: u64,
    pub basis: MemoryBasis,
    /// Data ÷ memory; NaN (`null` in JSON) where the memory is not known (remote).
    #[serde(deserialize_with = "nan_from_null")]
    pub ratio: f64,
    pub verdict: RegimeVerdict,
}

/// serde_json writes NaN as `null`: read it back as NaN.
fn nan_from_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// What the dataset was compared with.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum MemoryBasis {
    /// The engine's memory cap.
    #[serde(rename = "cap")]
    Cap,
    /// No cap: the machine's RAM.
    #[serde(rename = "ram (uncapped)")]
    RamUncapped,
    /// A remote server: its memory is neither set nor known here.
    #[serde(rename = "memory not controlled (remote)")]
    NotControlled,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RegimeVerdict {
    /// The dataset is larger than memory: the scenario the suite is for.
    DiskBound,
    /// The dataset fits: the numbers describe a cache, not a disk.
    FitsInMemory,
    /// A remote server's memory is not known: neither can be told.
    Unknown,
}

impl fmt::Display for MemoryBasis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::serde_name(self))
    }
}

impl fmt::Display for RegimeVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::serde_name(self))
    }
}

impl Regime {
    /// The ratio and verdict count the bytes the store keeps where they were measured,
    /// else its blobs' bytes.
    pub fn of(
        dataset_bytes: u64,
        stored_bytes: Option<u64>,
        cap: Option<&CapReport>,
        ram_bytes: u64,
    ) -> Self {
        let (effective, basis) = match cap.and_then(|c| c.memory_limit_bytes) {
            Some(limit) => (limit, MemoryBasis::Cap),
            None => (ram_bytes, MemoryBasis::RamUncapped),
        };
        let held = stored_bytes.unwrap_or(dataset_bytes);
        let ratio = held as f64 / effective.max(1) as f64;
        Self {
            dataset_bytes,
            stored_bytes,
            effective_memory_bytes: effective,
            basis,
            ratio,
            verdict: if ratio > 1.0 {
                RegimeVerdict::DiskBound
            } else {
                RegimeVerdict::FitsInMemory
            },
        }
    }

    /// A remote server's: its memory is not known here.
    pub fn not_controlled(dataset_bytes: u64) -> Self {
        Self {
            dataset_bytes,
            stored_bytes: None,
            effective_memory_bytes: 0,
            basis: MemoryBasis::NotControlled,
            ratio: f64::NAN,
            verdict: RegimeVerdict::Unknown,
        }
    }

    /// `disk-bound (3.0x cap)`.
    pub fn label(&self) -> String {
        if self.verdict == RegimeVerdict::Unknown {
            return format!("{} ({})", self.verdict, self.basis);
        }
        format!("{} ({:.1}x {})", self.verdict, self.ratio, self.basis)
    }

    /// `3GiB (3.0x, disk-bound)`; `3GiB, 1.3GiB stored (1.3x, disk-bound)` where the
    /// store keeps a tenth fewer or more bytes than its blobs'.
    pub fn data_label(&self) -> String {
        let data = match self.stored_bytes {
            Some(stored) if stored.abs_diff(self.dataset_bytes) * 10 > self.dataset_bytes => {
                format!(
                    "{}, {} stored",
                    format_bytes(self.dataset_bytes),
                    format_bytes(stored)
                )
            }
            _ => format_bytes(self.dataset_bytes),
        };
        if self.verdict == RegimeVerdict::Unknown {
            return format!("{data} ({})", self.basis);
        }
        format!("{data} ({:.1}x, {})", self.ratio, self.verdict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cap::{CapMethod, CapRequest};

    fn cap(limit: Option<u64>) -> CapReport {
        let method = if limit.is_some() {
            CapMethod::V1Child
        } else {
            CapMethod::None
        };
        CapReport {
            requested: CapRequest {
                memory_bytes: Some(1 << 30),
                cpus: Some(2.0),
            },
            memory_limit_bytes: limit,
            cpu_limit: None,
            origin: method.origin(),
            method,
            cgroup_version: "v1".into(),
            cgroup: "/x".into(),
            notes: vec![],
            housekeeping: vec![],
            disk: None,
        }
    }

    #[test]
    fn regime_compares_data_with_the_cap_or_ram() {
        let r = Regime::of(3 << 30, None, Some(&cap(Some(1 << 30))), 24 << 30);
        assert_eq!(
            (r.ratio, r.verdict, r.basis),
            (3.0, RegimeVerdict::DiskBound, MemoryBasis::Cap)
        );
        assert_eq!(r.label(), "disk-bound (3.0x cap)");
        let r = Regime::of(3 << 30, None, Some(&cap(None)), 24 << 30);
        assert_eq!(r.verdict, RegimeVerdict::FitsInMemory);
        assert_eq!(r.basis, MemoryBasis::RamUncapped);
        assert_eq!(r.ratio, 0.125);
        // results.json spells them as before the enums.
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["verdict"], "fits-in-memory");
        assert_eq!(json["basis"], "ram (uncapped)");
        assert!(
            json.get("stored_bytes").is_none(),
            "not measured: not written"
        );
    }

    /// A store that compresses keeps fewer bytes than its blobs': what memory has to
    /// hold is what it keeps. 3 GiB of documents kept in 800 MiB fit a 1 GiB cap.
    #[test]
    fn the_regime_counts_the_bytes_the_store_keeps() {
        let capped = cap(Some(1 << 30));
        let r = Regime::of(3 << 30, Some(800 << 20), Some(&capped), 24 << 30);
        assert_eq!(r.verdict, RegimeVerdict::FitsInMemory);
        assert_eq!(r.data_label(), "3GiB, 800MiB stored (0.8x, fits-in-memory)");
        let r = Regime::of(
            3 << 30,
            Some((3 << 30) + (100 << 20)),
            Some(&capped),
            24 << 30,
        );
        assert_eq!(r.verdict, RegimeVerdict::DiskBound);
        assert!(
            r.data_label().starts_with("3GiB (3.1x"),
            "{}",
            r.data_label()
        );
    }
}
