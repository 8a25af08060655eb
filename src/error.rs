//! Errors a user can fix: each says what is wrong and what to do about it.
//! Everything else travels as `anyhow::Error` with context naming the thing that failed.

use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum InputError {
    #[error("invalid size '{input}': {why}")]
    Size { input: String, why: String },

    #[error(
        "a dataset of {dataset} is smaller than one {size} blob: raise --dataset-bytes (BLOBRACE_DATASET_BYTES) or leave {size} out of --sizes (BLOBRACE_SIZES)"
    )]
    DatasetTooSmall { dataset: String, size: String },

    #[error("unknown engine '{name}': choose from {known}")]
    UnknownEngine { name: String, known: String },

    /// A part of the machine a valid flag asks for that cannot be had here or now
    /// (the emulated disk in use, a tool missing): not the value's fault.
    #[error("{what}: {why}")]
    Unavailable { what: String, why: String },

    /// Settings that are each valid but cannot go together: the line names the fix.
    #[error("these settings do not go together: {0}")]
    Settings(String),

    #[error("invalid {what} '{input}': {why}")]
    Value {
        what: &'static str,
        input: String,
        why: String,
    },

    #[error(
        "not enough free disk on {room}: this run's loads need about {needed} more there ({breakdown}) and {slack} kept free (1% + 64MiB: a full disk takes Docker and the machine down with it), {available} is available. {}", room_advice(*.stepwise)
    )]
    NotEnoughDisk {
        room: String,
        needed: String,
        breakdown: String,
        slack: String,
        available: String,
        /// Whether the loads already go one at a time (size class by size class, or
        /// dataset by dataset where one size class does not fit): then that is no way
        /// out, and the advice does not offer it.
        stepwise: bool,
    },

    /// `blobrace merge` of runs that do not go together: what differs, and which runs.
    #[error("cannot merge these runs: {0}")]
    Merge(String),

    /// `blobrace compare` of runs that cannot be compared: what differs, and how to say
    /// it is the point.
    #[error("cannot compare these runs: {0}")]
    Compare(String),

    #[error(
        "data directory {dir} is not usable: {why}. Nothing was loaded: fix it or choose another --data-dir (BLOBRACE_DATA_DIR)"
    )]
    DataDir { dir: PathBuf, why: String },

    #[error(
        "results directory {dir} is not usable: {why}. Nothing was loaded or measured: fix it or choose another --results-dir (BLOBRACE_RESULTS_DIR)"
    )]
    ResultsDir { dir: PathBuf, why: String },

    #[error("{path} is not a blobrace dataset: {why}. Move it away or choose another --data-dir")]
    ForeignFile { path: PathBuf, why: String },

    #[error(
        "{path} holds a dataset loaded with {found}, but this run asks for {wanted}. Run with the settings it was loaded with, or remove it with `blobrace drop` and this command's flags (drop removes what is at that place, whatever it was loaded with) and load again"
    )]
    DatasetMismatch {
        path: PathBuf,
        found: String,
        wanted: String,
    },

    #[error(
        "{path} is not what its manifest says was loaded there: {why}. `blobrace drop` with this command's flags removes it, then `blobrace load` loads it again"
    )]
    DatasetDamaged { path: PathBuf, why: String },

    /// The whole explanation, with the ways to get a cap (`cap::CapUnavailable`'s
    /// text: this module imports nothing of the crate, so every layer can use it).
    #[error("{0}")]
    CapUnavailable(String),

    #[error(
        "dataset {path} is not loaded (or its load did not finish): run `blobrace load` with the same settings first"
    )]
    NotLoaded { path: PathBuf },
}

/// A fetch that returned the wrong bytes: the measurement cannot be trusted.
#[derive(Debug, Error)]
#[error(
    "engine {engine} returned wrong data for size {size}, id {id}: {what}. Nothing of this cell is kept: if the dataset is damaged, `blobrace verify` with the same flags names every damaged row, and `blobrace drop` then `blobrace load` loads it again"
)]
pub struct FetchMismatch {
    pub engine: String,
    pub size: String,
    pub id: u64,
    pub what: String,
}

/// The ways to make room that can work: where the loads already go one at a time,
/// going one at a time is no way out.
fn room_advice(stepwise: bool) -> String {
    let always = "drop datasets you no longer need (`blobrace env` lists what is loaded; `blobrace drop` with their flags), load fewer size classes (--sizes) or a smaller --dataset-bytes, or pick another --data-dir";
    if stepwise {
        format!("Even one dataset at a time does not fit: {always}")
    } else {
        format!(
            "Make room: {always}; or let the run go size class by size class (or dataset by dataset): `cargo bench` and `blobrace measure` do that by themselves unless given --keep-all (BLOBRACE_KEEP_ALL), while `blobrace load` loads every size class at once"
        )
    }
}
