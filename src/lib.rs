//! blobrace: how fast can I fetch a blob of size S from database E when the
//! database has far less RAM than data?
//!
//! Where things live:
//! - `engine/`  — one file per engine; `Engine::fetch` is exactly what is timed.
//! - `store/`   — one file per storage layout: loading, resume, manifest, eviction.
//! - `measure`  — the timed loop and how criterion's warm-up is told apart.
//! - `run`      — one run end to end; `results` — what lands in `charts/<run-id>/`.
//! - `cap`      — the cgroup memory/CPU cap of the measuring process.

pub mod cap;
pub mod config;
pub mod container;
pub mod content;
pub mod dataset;
pub mod diskio;
pub mod docker;
pub mod engine;
pub mod entity;
pub mod error;
pub mod evict;
pub mod load;
pub mod machine;
pub mod measure;
pub mod report;
pub mod results;
pub mod run;
pub mod size;
pub mod stats;
pub mod store;

/// Now, UTC, RFC 3339 to the second: the timestamp format of manifests and results.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
