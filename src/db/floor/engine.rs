//! The physical floor: the blob's bytes read from a packed file kept open, in the
//! way this disk serves fastest at this size (`calibrate`). No lookup, no parsing:
//! what reading those bytes costs on this disk under this cap, through the same
//! page cache as every other engine.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};

use super::calibrate::{Calibration, calibrate};
use super::pattern::{PatternReader, ReadPattern};
use super::store::FloorStore;
use crate::dataset::DatasetSpec;
use crate::db::engine::{Engine, EngineSettings, Streaming};
use crate::db::store::Store;

/// Time the calibration may take per size, once each pattern has its minimum reads.
const CALIBRATION_BUDGET: Duration = Duration::from_millis(1500);

/// Each file's calibration, once per process: every client and every scenario of a
/// run reads the same way, and a run's later engines do not wait for it again.
static CALIBRATED: Mutex<Vec<(PathBuf, Arc<Calibration>)>> = Mutex::new(Vec::new());

/// The environment variable that pins the floor's read pattern instead of timing them
/// (to compare a run with one read the old way, or to keep the floor fixed across runs).
pub const PIN_VARIABLE: &str = "BLOBRACE_FLOOR_READ";

/// The pattern `BLOBRACE_FLOOR_READ` pins, None for "auto" or unset.
fn pinned() -> Result<Option<ReadPattern>> {
    pin_of(std::env::var(PIN_VARIABLE).ok().as_deref()).map_err(anyhow::Error::msg)
}

/// The pattern a value of `BLOBRACE_FLOOR_READ` pins; the reason it is none. Checked with
/// the other variables before any work (`config::check_variables`), not first when the
/// floor opens, after every other engine was measured.
pub fn pin_of(value: Option<&str>) -> Result<Option<ReadPattern>, String> {
    match value.map(str::trim) {
        None | Some("" | "auto") => Ok(None),
        Some(v) => ReadPattern::from_key(v).map(Some).ok_or_else(|| {
            let keys: Vec<&str> = ReadPattern::ALL.iter().map(|p| p.key()).collect();
            format!(
                "not a read pattern: use auto (time them all and take the fastest) or one of {}",
                keys.join(", ")
            )
        }),
    }
}

fn calibration_of(path: &Path, spec: &DatasetSpec) -> Result<Arc<Calibration>> {
    let pin = pinned()?;
    let mut known = CALIBRATED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, c)) = known.iter().find(|(p, _)| p == path) {
        return Ok(c.clone());
    }
    let c = Arc::new(match pin {
        Some(pattern) => Calibration::pinned(pattern, PIN_VARIABLE),
        // A mix is calibrated with reads of its mean blob, as many as fill the file.
        None => calibrate(
            path,
            spec.mean_blob_bytes() as usize,
            spec.bytes() / spec.mean_blob_bytes(),
            CALIBRATION_BUDGET,
        )
        .with_context(|| format!("cannot calibrate the floor's read on {}", path.display()))?,
    });
    known.push((path.to_path_buf(), c.clone()));
    Ok(c)
}

pub struct FloorEngine {
    reader: PatternReader,
    calibration: Arc<Calibration>,
    size: usize,
    /// A mix's rows, back to back: where each starts (`mix::offsets`); None for a size
    /// class, whose row `id` is at (id - 1) * size.
    offsets: Option<Arc<[u64]>>,
    path: String,
}

impl FloorEngine {
    /// Where row `id` starts and how long it is: one lookup in a mix's index.
    #[inline]
    fn place(&self, id: u64) -> (u64, usize) {
        match &self.offsets {
            Some(at) => {
                let (start, end) = (at[id as usize - 1], at[id as usize]);
                (start, (end - start) as usize)
            }
            None => ((id - 1) * self.size as u64, self.size),
        }
    }
}

impl FloorEngine {
    pub fn open(data_dir: &Path, spec: DatasetSpec) -> Result<Self> {
        let store = FloorStore::new(data_dir, spec);
        let path = store.location();
        if !path.exists() {
            let path = path.to_path_buf();
            // Its text, not the input error: one engine not loaded fails that engine alone.
            return Err(anyhow::anyhow!(
                "{}",
                crate::error::InputError::NotLoaded { path }
            ));
        }
        let calibration = calibration_of(path, &spec)?;
        let reader = PatternReader::open(path, calibration.chosen)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Self {
            reader,
            calibration,
            size: spec.size.as_usize(),
            offsets: spec
                .mix
                .map(|mix| crate::dataset::mix::offsets(mix, spec.seed, spec.rows)),
            path: path.display().to_string(),
        })
    }
}

impl Engine for FloorEngine {
    /// A mix's row: `out` sized for it here, so the fetch fills none of it.
    fn before_fetch(&mut self, id: u64, out: &mut Vec<u8>) {
        if self.offsets.is_some() {
            out.resize(self.place(id).1, 0);
        }
    }

    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        let (at, len) = self.place(id);
        out.resize(len, 0);
        self.reader.read_at(out, at)?;
        Ok(())
    }

    fn streaming(&self) -> Streaming {
        Streaming::Chunks("pread() of one piece after another from the row's offset, in order")
    }

    async fn fetch_streamed(
        &mut self,
        id: u64,
        chunk: usize,
        out: &mut Vec<u8>,
    ) -> Result<std::time::Instant> {
        let (base, len) = self.place(id);
        out.resize(len, 0);
        let mut first = None;
        for (i, piece) in out.chunks_mut(chunk.max(1)).enumerate() {
            self.reader
                .read_piece_at(piece, base + (i * chunk) as u64)?;
            first.get_or_insert_with(std::time::Instant::now);
        }
        first.ok_or_else(|| anyhow::anyhow!("blob {id} is empty"))
    }

    fn settings(&self) -> EngineSettings {
        EngineSettings::from([
            (
                "access".into(),
                format!(
                    "{} at {}, file kept open",
                    self.reader.pattern().name(),
                    if self.offsets.is_some() {
                        "the row's offset (an index of the mix's offsets, in memory)"
                    } else {
                        "(id - 1) * size"
                    }
                ),
            ),
            ("read pattern".into(), self.reader.pattern().name().into()),
            ("read patterns measured".into(), self.calibration.describe()),
            ("file".into(), self.path.clone()),
        ])
    }
}
