//! A size mix (`--size-mix`): a dataset whose blobs have many sizes, drawn from a
//! distribution, as users' own blobs do, instead of one size class. Each row's size
//! comes from the run's seed and its id alone (`SizeMix::bytes_of`), so the loader,
//! a resumed load, `verify` and every store regenerate it without keeping a list.
//!
//! The forms (`parse.rs`): weighted buckets as fio's `bssplit` and warp write them,
//! uniform in a range, lognormal (median, sigma, largest), a YCSB histogram file, and
//! sampled from a directory's file sizes. A dataset of a mix holds the run's dataset
//! bytes: its rows are the first ids whose sizes add up to them (`rows_for`).
//!
//! A `DatasetSpec` is `Copy` and compared, hashed and serialised everywhere; a mix is
//! not small, so a spec holds a `MixRef`, an index into this process's mixes, each
//! kept once (`intern`), serialised as the mix's canonical text.

mod bands;
mod parse;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, RwLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::dataset::content::mix as spread;
use crate::error::InputError;
use crate::size::{SizeClass, format_bytes};

pub use bands::{Band, BandGrid, BandShare, MOST_SIZE_BANDS, band_of, bands_of, shares};
pub use parse::{SAMPLE_ROWS, from_sampled_sizes, parse};

/// How the sizes are drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Each size with its weight (`4KiB:67,8KiB:10,1MiB:3`): a size drawn is exactly one
    /// of them. A YCSB histogram file and a sampled directory become this shape.
    Buckets(Vec<(u64, f64)>),
    /// Every size from `low` to `high` (bytes, both in) as likely.
    Uniform { low: u64, high: u64 },
    /// exp(ln(median) + sigma * N(0,1)), rounded to bytes, cut to [8 B, largest].
    Lognormal {
        median: u64,
        sigma: f64,
        largest: u64,
    },
}

/// A size distribution: its shape and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeMix {
    pub shape: Shape,
    /// What the user wrote (`lognormal:8KiB,1.5,32MiB`, `hist:sizes.txt`, `dir:/srv/blobs`):
    /// for lines and the report.
    pub source: String,
    /// Cumulative weights of `Buckets`, normalised to end at 1.
    cumulative: Vec<f64>,
}

impl SizeMix {
    fn new(shape: Shape, source: String) -> Result<Self, String> {
        let cumulative = match &shape {
            Shape::Buckets(buckets) => {
                if buckets.is_empty() {
                    return Err("it has no sizes".into());
                }
                let total: f64 = buckets.iter().map(|&(_, w)| w).sum();
                if !(total > 0.0 && total.is_finite()) {
                    return Err("its weights add up to nothing".into());
                }
                let mut sum = 0.0;
                buckets
                    .iter()
                    .map(|&(_, w)| {
                        sum += w;
                        sum / total
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        let mix = SizeMix {
            shape,
            source,
            cumulative,
        };
        let (smallest, largest) = (mix.smallest(), mix.largest());
        if smallest < SizeClass::MIN_BYTES {
            return Err(format!(
                "its smallest blob is {smallest} B: every blob starts with its 8-byte id, so sizes start at 8 B"
            ));
        }
        if largest > SizeClass::MAX_BYTES {
            return Err(format!(
                "its largest blob is {}, more than the {} a blob can be (the loader holds a few copies of one in memory)",
                format_bytes(largest),
                format_bytes(SizeClass::MAX_BYTES)
            ));
        }
        Ok(mix)
    }

    /// The text that makes this mix again: the canonical form of its shape (a sampled
    /// or file-read mix as its buckets), saved with results and manifests.
    pub fn canonical(&self) -> String {
        match &self.shape {
            Shape::Buckets(buckets) => {
                let parts: Vec<String> = buckets.iter().map(|(s, w)| format!("{s}:{w}")).collect();
                format!("buckets:{}", parts.join(","))
            }
            Shape::Uniform { low, high } => format!("uniform:{low},{high}"),
            Shape::Lognormal {
                median,
                sigma,
                largest,
            } => format!("lognormal:{median},{sigma},{largest}"),
        }
    }

    /// A short name for lines, charts and file names: the kind and its figures, or the
    /// kind and a hash of its buckets where they are many.
    pub fn name(&self) -> String {
        match &self.shape {
            Shape::Buckets(buckets) if buckets.len() <= 4 => {
                let parts: Vec<String> = buckets
                    .iter()
                    .map(|&(s, w)| format!("{}:{}", format_bytes(s), w))
                    .collect();
                // Spaces, not commas: the name is a CSV field.
                format!("mix {}", parts.join(" "))
            }
            Shape::Buckets(buckets) => format!(
                "mix {} sizes {}-{} #{:08x}",
                buckets.len(),
                format_bytes(self.smallest()),
                format_bytes(self.largest()),
                spread(fnv(self.canonical().as_bytes())) as u32
            ),
            Shape::Uniform { low, high } => {
                format!("mix uniform {}-{}", format_bytes(*low), format_bytes(*high))
            }
            Shape::Lognormal {
                median,
                sigma,
                largest,
            } => format!(
                "mix lognormal {} s{sigma} max {}",
                format_bytes(*median),
                format_bytes(*largest)
            ),
        }
    }

    /// `mix` and 8 hex digits of a hash of its canonical text: where a name must be short
    /// and plain (an SQL namespace).
    pub fn short_id(&self) -> String {
        format!("mix{:08x}", spread(fnv(self.canonical().as_bytes())) as u32)
    }

    /// The name as a file stem, with `short_id` (the name rounds its figures): letters,
    /// digits, `-` and `.` only.
    pub fn stem(&self) -> String {
        let name = format!("{} {}", self.name(), self.short_id());
        let mut stem = String::with_capacity(name.len());
        for c in name.chars() {
            match c {
                c if c.is_ascii_alphanumeric() || c == '.' => stem.push(c),
                _ if stem.ends_with('-') => {}
                _ => stem.push('-'),
            }
        }
        stem.trim_end_matches('-').to_string()
    }

    pub fn smallest(&self) -> u64 {
        match &self.shape {
            Shape::Buckets(b) => b.iter().map(|&(s, _)| s).min().unwrap_or(0),
            Shape::Uniform { low, .. } => *low,
            Shape::Lognormal { .. } => SizeClass::MIN_BYTES,
        }
    }

    /// The largest blob the mix can draw: buffers, batches and memory checks use it.
    pub fn largest(&self) -> u64 {
        match &self.shape {
            Shape::Buckets(b) => b.iter().map(|&(s, _)| s).max().unwrap_or(0),
            Shape::Uniform { high, .. } => *high,
            Shape::Lognormal { largest, .. } => *largest,
        }
    }

    /// The size of row `id` of a dataset with `seed`: a function of both alone.
    #[inline]
    pub fn bytes_of(&self, seed: u64, id: u64) -> u64 {
        // 53 random bits: a uniform draw in [0, 1).
        let u =
            (spread(spread(seed ^ 0x7369_7a65_6d69_7800) ^ id) >> 11) as f64 / (1u64 << 53) as f64;
        match &self.shape {
            Shape::Buckets(buckets) => {
                let i = self.cumulative.partition_point(|&c| c <= u);
                buckets[i.min(buckets.len() - 1)].0
            }
            Shape::Uniform { low, high } => {
                let span = (high - low + 1) as f64;
                (low + (u * span) as u64).min(*high)
            }
            Shape::Lognormal {
                median,
                sigma,
                largest,
            } => {
                let x = ((*median as f64).ln() + sigma * probit(u)).exp().round();
                (x as u64).clamp(SizeClass::MIN_BYTES, *largest)
            }
        }
    }

    /// How many rows, from id 1 on, it takes for their sizes to reach `dataset_bytes`,
    /// and the bytes they hold.
    pub fn rows_for(&self, seed: u64, dataset_bytes: u64) -> (u64, u64) {
        let (mut rows, mut bytes) = (0u64, 0u64);
        while bytes < dataset_bytes {
            rows += 1;
            bytes += self.bytes_of(seed, rows);
        }
        (rows, bytes)
    }
}

/// FNV-1a 64.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The standard normal's quantile at `p` in (0, 1) (Acklam's rational approximation,
/// relative error under 1.2e-9); `p` = 0 gives a large negative number, not -inf.
fn probit(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// This process's mixes, each once, leaked: a run has one or two, and a `MixRef` must
/// stay valid as long as any spec holding it.
static MIXES: RwLock<Vec<&'static SizeMix>> = RwLock::new(Vec::new());

/// A mix as a `DatasetSpec` holds it: small, `Copy`, equal for equal mixes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct MixRef(u32);

impl MixRef {
    pub fn get(self) -> &'static SizeMix {
        MIXES.read().unwrap_or_else(|e| e.into_inner())[self.0 as usize]
    }
}

/// The mix's one `MixRef` in this process (the same for a mix equal to one kept before).
pub fn intern(mix: SizeMix) -> MixRef {
    let mut mixes = MIXES.write().unwrap_or_else(|e| e.into_inner());
    let canonical = mix.canonical();
    if let Some(i) = mixes.iter().position(|m| m.canonical() == canonical) {
        return MixRef(i as u32);
    }
    mixes.push(Box::leak(Box::new(mix)));
    MixRef((mixes.len() - 1) as u32)
}

/// The bytes of a mix's first rows by (mix, seed, rows): counted once per process (a
/// few million draws for a mix of small blobs), asked for often.
type RowsKey = (u32, u64, u64);
static BYTES: Mutex<Option<HashMap<RowsKey, u64>>> = Mutex::new(None);

fn remembered(key: RowsKey) -> Option<u64> {
    BYTES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .get(&key)
        .copied()
}

fn remember(key: RowsKey, bytes: u64) {
    BYTES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(key, bytes);
}

/// `SizeMix::rows_for`; the bytes of those rows remembered for `bytes_of_rows`.
pub fn rows_for(mix: MixRef, seed: u64, dataset_bytes: u64) -> (u64, u64) {
    let (rows, bytes) = mix.get().rows_for(seed, dataset_bytes);
    remember((mix.0, seed, rows), bytes);
    (rows, bytes)
}

/// The bytes of rows 1..=rows of a mix's dataset, counted once per process.
pub fn bytes_of_rows(mix: MixRef, seed: u64, rows: u64) -> u64 {
    if let Some(bytes) = remembered((mix.0, seed, rows)) {
        return bytes;
    }
    let m = mix.get();
    let bytes = (1..=rows).map(|id| m.bytes_of(seed, id)).sum();
    remember((mix.0, seed, rows), bytes);
    bytes
}

/// Where each row of a mix's dataset starts in a file holding them back to back (the
/// floor's packed file): `rows + 1` offsets, the last the file's length. Counted once
/// per process and shared: 8 bytes a row (24 MiB for 3 million rows).
pub fn offsets(mix: MixRef, seed: u64, rows: u64) -> std::sync::Arc<[u64]> {
    type Known = Vec<((u32, u64, u64), std::sync::Arc<[u64]>)>;
    static KNOWN: Mutex<Known> = Mutex::new(Vec::new());
    let key = (mix.0, seed, rows);
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, found)) = known.iter().find(|(k, _)| *k == key) {
        return found.clone();
    }
    let m = mix.get();
    let mut at = 0u64;
    let mut all = Vec::with_capacity(rows as usize + 1);
    all.push(0);
    for id in 1..=rows {
        at += m.bytes_of(seed, id);
        all.push(at);
    }
    let all: std::sync::Arc<[u64]> = all.into();
    known.push((key, all.clone()));
    all
}

impl fmt::Debug for MixRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MixRef({})", self.get().canonical())
    }
}

impl fmt::Display for MixRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.get().name())
    }
}

impl Serialize for MixRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.get().canonical())
    }
}

impl<'de> Deserialize<'de> for MixRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        parse(&text)
            .map(intern)
            .map_err(|e| serde::de::Error::custom(e.to_string()))
    }
}

/// A mix's error as the one line `--size-mix` gets.
pub(crate) fn bad(input: &str, why: impl Into<String>) -> InputError {
    InputError::Value {
        what: "size mix (--size-mix, BLOBRACE_SIZE_MIX)",
        input: input.to_string(),
        why: why.into(),
    }
}

#[cfg(test)]
mod tests;
