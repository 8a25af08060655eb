//! blobrace: how fast can I fetch a blob of size S from database E when the
//! database has far less RAM than data?
//!
//! Where things live (ARCHITECTURE.md has the layers and the recipes):
//! - `server/`  — one file per server database: its descriptor (`SERVERS` lists them).
//! - `store/`   — one file per storage layout: loading, resume, manifest, eviction.
//! - `engine/`  — one file per way of fetching; `Engine::fetch` is exactly what is timed.
//! - `measure`  — the timed loop and how criterion's warm-up is told apart.
//! - `driver`   — the loop over sizes and engines; `run` — one run's steps.
//! - `results`, `summary` — what lands in `charts/<run-id>/`; `report/` draws it.
//! - `cap`      — the cgroup memory/CPU cap of the measuring process.

pub mod cap;
pub mod config;
pub mod container;
pub mod content;
pub mod dataset;
pub mod diskio;
pub mod docker;
pub mod driver;
pub mod engine;
pub mod entity;
pub mod error;
pub mod evict;
pub mod load;
pub mod locations;
pub mod machine;
pub mod measure;
pub mod report;
pub mod results;
pub mod run;
pub mod server;
pub mod size;
pub mod stats;
pub mod store;
pub mod summary;

/// Now, UTC, RFC 3339 to the second: the timestamp format of manifests and results.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
