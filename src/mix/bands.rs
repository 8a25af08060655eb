//! Size bands: a mix's results are given per doubling of blob size (1-2 KiB, 2-4 KiB,
//! …), as well as for the whole mix, since a mix's p99 is set by its tail and which
//! store serves a size well differs by size.

use serde::{Deserialize, Serialize};

use crate::size::format_bytes;

use super::{Shape, SizeMix};

/// Blobs from `low` (in) to `high` (out) bytes: one doubling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Band {
    pub low: u64,
    pub high: u64,
}

impl Band {
    /// `8KiB-16KiB`.
    pub fn label(&self) -> String {
        format!("{}-{}", format_bytes(self.low), format_bytes(self.high))
    }
}

/// The doubling `bytes` falls in (8 B and up).
#[inline]
pub fn band_of(bytes: u64) -> Band {
    let low = 1u64 << (63 - bytes.max(1).leading_zeros());
    Band {
        low,
        high: low.saturating_mul(2),
    }
}

/// Every band a mix can draw a blob in, smallest first.
pub fn bands_of(mix: &SizeMix) -> Vec<Band> {
    let mut bands: Vec<Band> = match &mix.shape {
        Shape::Buckets(buckets) => buckets.iter().map(|&(s, _)| band_of(s)).collect(),
        _ => {
            let (mut at, last) = (band_of(mix.smallest()), band_of(mix.largest()));
            let mut all = vec![at];
            while at != last {
                at = band_of(at.high);
                all.push(at);
            }
            all
        }
    };
    bands.sort();
    bands.dedup();
    bands
}

/// How much of a dataset one band holds: its blobs and their bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BandShare {
    pub band: Band,
    pub blobs: u64,
    pub bytes: u64,
}

/// Blob sizes counted per band, smallest band first: what a dataset holds, not what was
/// fetched from it.
pub fn shares(sizes: impl IntoIterator<Item = u64>) -> Vec<BandShare> {
    let mut shares: Vec<BandShare> = Vec::new();
    for bytes in sizes {
        let band = band_of(bytes);
        match shares.iter_mut().find(|s| s.band == band) {
            Some(share) => {
                share.blobs += 1;
                share.bytes += bytes;
            }
            None => shares.push(BandShare {
                band,
                blobs: 1,
                bytes,
            }),
        }
    }
    shares.sort_by_key(|s| s.band);
    shares
}
