//! What a dataset is: `rows` blobs of one size class, ids 1..=rows, content
//! from `seed`, stored under the ids themselves or under a key per id (`key`). Every store records this in a manifest and refuses to mix datasets.

pub mod churn;
pub mod compressibility;
pub mod content;
pub mod corpus;
pub mod documents;
pub mod key;
pub mod lock;
pub mod mix;

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::dataset::churn::Churn;
use crate::dataset::documents::Content;
use crate::dataset::key::{KEY_BYTES, KeyType};
use crate::dataset::mix::MixRef;
use crate::error::InputError;
use crate::size::{SizeClass, format_bytes};

/// Bumped when the content generator or a store layout changes meaning.
pub const FORMAT_VERSION: i32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DatasetSpec {
    pub size: SizeClass,
    pub rows: u64,
    pub seed: u64,
    /// The primary key the rows are stored under (a layout: its own file or namespace).
    #[serde(default)]
    pub key: KeyType,
    /// A share of the rows changed after the load (`--churn`): its own dataset, with
    /// its own name, beside the fresh one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub churn: Option<Churn>,
    /// Written while it is measured (`--write-rate`): its own dataset (`-live`), so
    /// the fresh one stays as loaded; its rows' versions come from the count of
    /// changes the store records, which the writer moves on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live: bool,
    /// Blobs of many sizes, drawn from a distribution (`--size-mix`): each row's size
    /// is `blob_bytes(id)`, and `size` is the largest the mix can draw (what buffers,
    /// batches and the memory checks are sized for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<MixRef>,
    /// What the blobs hold (`--content`): random bytes, or documents that compress; a
    /// dataset of its own (`-text` in its name).
    #[serde(default, skip_serializing_if = "Content::is_random")]
    pub content: Content,
}

impl DatasetSpec {
    pub fn new(
        size: SizeClass,
        dataset_bytes: u64,
        seed: u64,
        key: KeyType,
    ) -> Result<Self, InputError> {
        Ok(Self {
            size,
            rows: size.rows_for(dataset_bytes)?,
            seed,
            key,
            churn: None,
            live: false,
            mix: None,
            content: Content::Random,
        })
    }

    /// A dataset of `mix`: the fewest rows from id 1 on whose sizes reach
    /// `dataset_bytes`.
    pub fn of_mix(mix: MixRef, dataset_bytes: u64, seed: u64, key: KeyType) -> Self {
        let (rows, _) = crate::dataset::mix::rows_for(mix, seed, dataset_bytes);
        Self {
            size: SizeClass::new(mix.get().largest()).expect("a mix's largest blob is checked"),
            rows,
            seed,
            key,
            churn: None,
            live: false,
            mix: Some(mix),
            content: Content::Random,
        }
    }

    /// The size of row `id`'s blob.
    #[inline]
    pub fn blob_bytes(&self, id: u64) -> u64 {
        match self.mix {
            Some(mix) => mix.get().bytes_of(self.seed, id),
            None => self.size.bytes(),
        }
    }

    /// The largest blob of the dataset (every blob, for a size class).
    pub fn largest_blob(&self) -> u64 {
        self.size.bytes()
    }

    /// The bytes of rows `1..id` (those before `id`).
    pub fn bytes_before(&self, id: u64) -> u64 {
        let rows = id.saturating_sub(1).min(self.rows);
        match self.mix {
            Some(mix) => crate::dataset::mix::bytes_of_rows(mix, self.seed, rows),
            None => rows * self.size.bytes(),
        }
    }

    /// How many whole rows the first `bytes` bytes of the rows back to back hold (a
    /// packed file's rows done).
    pub fn rows_within(&self, bytes: u64) -> u64 {
        match self.mix {
            Some(mix) => {
                let offsets = crate::dataset::mix::offsets(mix, self.seed, self.rows);
                (offsets.partition_point(|&at| at <= bytes) as u64).saturating_sub(1)
            }
            None => (bytes / self.size.bytes()).min(self.rows),
        }
    }

    /// `per_row` (of a blob's size) added up over rows `1..=rows`: what a store's disk
    /// estimate is for a mix, whose blobs differ.
    pub fn sum_over_rows(&self, rows: u64, per_row: impl Fn(u64) -> u64) -> u64 {
        match self.mix {
            Some(mix) => {
                let mix = mix.get();
                (1..=rows)
                    .map(|id| per_row(mix.bytes_of(self.seed, id)))
                    .sum()
            }
            None => rows * per_row(self.size.bytes()),
        }
    }

    /// The mean blob: the size class, or a mix's bytes over its rows.
    pub fn mean_blob_bytes(&self) -> u64 {
        match self.mix {
            Some(_) => (self.bytes() / self.rows.max(1)).max(1),
            None => self.size.bytes(),
        }
    }

    /// The flag that names this dataset's size: `--sizes 64KiB` or `--size-mix '…'`.
    pub fn size_flag(&self) -> String {
        match self.mix {
            Some(mix) => format!("--size-mix '{}'", mix.get().source),
            None => format!("--sizes {}", self.size),
        }
    }

    /// The size as lines and the report name it: `64KiB`, or the mix's name.
    pub fn size_label(&self) -> String {
        match self.mix {
            Some(mix) => mix.to_string(),
            None => self.size.to_string(),
        }
    }

    /// Row `id`'s content version once `applied` changes of the churn are in (0 for a
    /// dataset without churn).
    pub fn version_of(&self, id: u64, applied: u64) -> u32 {
        if self.changes() {
            self.churn_order().version_of(id, applied)
        } else {
            0
        }
    }

    /// Whether its rows change after the load (a churn, or a writer while measured).
    pub fn changes(&self) -> bool {
        self.churn.is_some() || self.live
    }

    /// Row `id`'s version in the dataset as measured: every change of its churn in.
    pub fn final_version_of(&self, id: u64) -> u32 {
        self.version_of(id, self.churn_rows())
    }

    /// Rows the churn changes (0 without churn).
    pub fn churn_rows(&self) -> u64 {
        self.churn.map_or(0, |c| c.rows(self.rows))
    }

    /// The order the churn changes rows in.
    pub fn churn_order(&self) -> crate::dataset::churn::Order {
        crate::dataset::churn::Order::new(self.seed, self.rows)
    }

    /// The 16-byte key row `id` is stored under; None where the id is the key.
    #[inline]
    pub fn key_of(&self, id: u64) -> Option<[u8; KEY_BYTES]> {
        self.key.key_of(self.seed, id)
    }

    /// A key-value store's key for `id` in `buf`, its length returned: the dataset's
    /// 16-byte key, or the id big-endian (so a B-tree keeps id order). In the timed
    /// fetch of redb and LMDB: no allocation.
    #[inline]
    pub fn key_into(&self, id: u64, buf: &mut [u8; KEY_BYTES]) -> usize {
        match self.key_of(id) {
            Some(key) => {
                buf.copy_from_slice(&key);
                KEY_BYTES
            }
            None => {
                buf[..8].copy_from_slice(&id.to_be_bytes());
                8
            }
        }
    }

    /// Every blob's bytes added up.
    pub fn bytes(&self) -> u64 {
        self.bytes_before(self.rows + 1)
    }

    /// File or directory stem shared by every store: `64KiB-x49152`, with the key
    /// type where it is not the integer id (`64KiB-x49152-kuuidv7`), the churn where
    /// there is one (`64KiB-x49152-churn30`) and `-live` for a dataset written while
    /// measured, and the content where it is not random (`64KiB-x49152-text`).
    pub fn stem(&self) -> String {
        let size = match self.mix {
            Some(mix) => mix.get().stem(),
            None => self.size.to_string(),
        };
        format!(
            "{}-x{}{}{}{}",
            size,
            self.rows,
            self.key_suffix("-k"),
            self.churn_suffix("-"),
            self.content.suffix()
        )
    }

    /// `<sep>churn30` for a churned dataset, empty otherwise.
    pub fn churn_suffix(&self, sep: &str) -> String {
        let churn = self
            .churn
            .map(|c| format!("{sep}{}", c.suffix()))
            .unwrap_or_default();
        let live = if self.live {
            format!("{sep}live")
        } else {
            String::new()
        };
        churn + &live
    }

    /// `<sep><key type>` for a keyed dataset, empty for integer ids.
    pub fn key_suffix(&self, sep: &str) -> String {
        if self.key.is_binary() {
            format!("{sep}{}", self.key)
        } else {
            String::new()
        }
    }
}

impl fmt::Display for DatasetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} rows of {} ({}, seed {}{}{})",
            self.rows,
            self.size_label(),
            format_bytes(self.bytes()),
            self.seed,
            self.key_suffix(", key "),
            self.churn.map(|c| format!(", {c}")).unwrap_or_default()
        )?;
        if self.live {
            f.write_str(", written while measured")?;
        }
        if !self.content.is_random() {
            write!(f, ", {} content", self.content)?;
        }
        Ok(())
    }
}

/// The manifest every store keeps (a table row in databases, a JSON file beside file stores).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub size_bytes: u64,
    pub rows: u64,
    pub seed: u64,
    pub dataset_bytes: u64,
    pub complete: bool,
    pub format_version: i32,
    pub loaded_at: Option<String>,
    /// File stores: every id up to here is fully written (the resume point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_done: Option<u64>,
    /// A complete dataset's bytes on disk, where counting them takes a walk over
    /// every file (fs: 3.1M files at 1 KiB): counted once, the first time they are
    /// asked for, and kept here, since a complete dataset does not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_bytes: Option<u64>,
    /// A mix's dataset: the mix's canonical text (`size_bytes` is its largest blob).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<String>,
}

impl Manifest {
    pub fn started(spec: &DatasetSpec) -> Self {
        Self {
            size_bytes: spec.size.bytes(),
            rows: spec.rows,
            seed: spec.seed,
            dataset_bytes: spec.bytes(),
            complete: false,
            format_version: FORMAT_VERSION,
            loaded_at: None,
            rows_done: None,
            disk_bytes: None,
            mix: spec.mix.map(|m| m.get().canonical()),
        }
    }

    /// Where the dataset it describes stands, once it is checked to describe `spec`
    /// (a manifest beside its data: fs, the object store).
    pub fn state_of(&self, spec: &DatasetSpec, path: &Path) -> Result<DatasetState, InputError> {
        self.check_matches(spec, path)?;
        Ok(if self.complete {
            DatasetState::Complete
        } else {
            DatasetState::Partial {
                rows_done: self.rows_done.unwrap_or(0),
            }
        })
    }

    /// Error unless this manifest describes `spec`.
    pub fn check_matches(&self, spec: &DatasetSpec, path: &Path) -> Result<(), InputError> {
        let same = self.size_bytes == spec.size.bytes()
            && self.rows == spec.rows
            && self.seed == spec.seed
            // Recorded by the file stores; a database's manifest table has no column for
            // it, and its namespace names the mix (`SizeMix::short_id`).
            && (self.mix.is_none() || self.mix == spec.mix.map(|m| m.get().canonical()))
            && self.format_version == FORMAT_VERSION;
        if same {
            return Ok(());
        }
        Err(InputError::DatasetMismatch {
            path: path.to_path_buf(),
            found: format!(
                "size {}, {} rows, seed {}, format {}",
                self.mix
                    .as_deref()
                    .map(|m| format!("mix {m}"))
                    .unwrap_or_else(|| format_bytes(self.size_bytes)),
                self.rows,
                self.seed,
                self.format_version
            ),
            wanted: format!(
                "size {}, {} rows, seed {}, format {}",
                spec.mix
                    .map(|m| format!("mix {}", m.get().canonical()))
                    .unwrap_or_else(|| spec.size.to_string()),
                spec.rows,
                spec.seed,
                FORMAT_VERSION
            ),
        })
    }
}

/// Where a dataset stands in a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetState {
    Absent,
    /// Ids 1..=rows_done are durable; the load stopped before the end.
    Partial {
        rows_done: u64,
    },
    Complete,
}
