//! Size bands: a mix's results are given per band of blob size as well as for the whole
//! mix, since a mix's p99 is set by its tail and which store serves a size well differs
//! by size. The bands are the mix's own sizes where it has a few (up to 16: weighted
//! sizes written by hand, `4KiB:67,8KiB:10,1MiB:3` as warp's and fio's, or a histogram
//! file or sample with that few: a band per size, whose blobs are all of it), else the
//! doublings (1-2 KiB, 2-4 KiB, …) over the mix's range: a lognormal, a range, and a
//! histogram file or sampled mix of many sizes (a sample keeps hundreds).

use serde::{Deserialize, Serialize};

use crate::size::format_bytes;

use super::{Shape, SizeMix};

/// Blobs from `low` (in) to `high` (out) bytes: one doubling, or one size (`high` is
/// `low` + 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Band {
    pub low: u64,
    pub high: u64,
}

impl Band {
    /// `8KiB-16KiB`, or `4KiB` for a band of one size (a user's bucket), in bytes
    /// (`4187B`) where no unit holds it whole: two sizes never share a name.
    pub fn label(&self) -> String {
        if self.high == self.low + 1 {
            let whole = format_bytes(self.low);
            if whole.contains('.') {
                format!("{}B", self.low)
            } else {
                whole
            }
        } else {
            format!("{}-{}", format_bytes(self.low), format_bytes(self.high))
        }
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

/// How a mix's blob sizes are cut into bands.
#[derive(Debug, Clone, PartialEq)]
pub enum BandGrid {
    /// One band per doubling.
    Doublings,
    /// One band per size the user wrote, ascending: their blobs are all of one of them.
    Sizes(Vec<u64>),
}

/// The most sizes a mix may have for each to be a band of its own: a weighted list
/// written by hand has a few (warp's and fio's examples, 2 to 10); a sampled mix keeps
/// hundreds, which doublings summarise.
pub const MOST_SIZE_BANDS: usize = 16;

impl BandGrid {
    /// How many bands the grid can hold (a recorder's slots).
    pub fn slots(&self) -> usize {
        match self {
            BandGrid::Doublings => 64,
            BandGrid::Sizes(sizes) => sizes.len(),
        }
    }

    /// The slot of the band `bytes` falls in: its doubling's power of two, or the
    /// largest of the user's sizes it reaches (every blob of such a mix is one of them
    /// exactly; a smaller one counts in the first).
    #[inline]
    pub fn slot_of(&self, bytes: u64) -> usize {
        match self {
            BandGrid::Doublings => band_of(bytes).low.trailing_zeros() as usize,
            BandGrid::Sizes(sizes) => sizes.partition_point(|&s| s <= bytes).saturating_sub(1),
        }
    }

    /// The band of a slot.
    pub fn band(&self, slot: usize) -> Band {
        match self {
            BandGrid::Doublings => band_of(1u64 << slot),
            BandGrid::Sizes(sizes) => Band {
                low: sizes[slot],
                high: sizes[slot] + 1,
            },
        }
    }

    /// The band `bytes` falls in.
    pub fn band_of(&self, bytes: u64) -> Band {
        self.band(self.slot_of(bytes))
    }
}

impl SizeMix {
    /// Its bands: its own sizes where it has a few, else doublings.
    pub fn band_grid(&self) -> BandGrid {
        match &self.shape {
            Shape::Buckets(buckets) if buckets.len() <= MOST_SIZE_BANDS => {
                let mut sizes: Vec<u64> = buckets.iter().map(|&(s, _)| s).collect();
                sizes.sort_unstable();
                sizes.dedup();
                BandGrid::Sizes(sizes)
            }
            _ => BandGrid::Doublings,
        }
    }
}

/// Every band a mix can draw a blob in, smallest first.
pub fn bands_of(mix: &SizeMix) -> Vec<Band> {
    let grid = mix.band_grid();
    let mut bands: Vec<Band> = match &mix.shape {
        Shape::Buckets(buckets) => buckets.iter().map(|&(s, _)| grid.band_of(s)).collect(),
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

/// Blob sizes counted per band of `grid`, smallest band first: what a dataset holds, not
/// what was fetched from it.
pub fn shares(grid: &BandGrid, sizes: impl IntoIterator<Item = u64>) -> Vec<BandShare> {
    let mut shares: Vec<BandShare> = Vec::new();
    for bytes in sizes {
        let band = grid.band_of(bytes);
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
