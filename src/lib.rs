//! blobrace: how fast can I fetch a blob of size S from database E when the
//! database has far less RAM than data?
//!
//! Where things live (ARCHITECTURE.md has the layers and the recipes):
//! - `db/`      — one folder per database: its store, its engines (`Engine::fetch` is
//!   exactly what is timed), its descriptor; `DATABASES` lists them.
//! - `measure`  — the timed loop and how criterion's warm-up is told apart.
//! - `run/`     — one run: the loop over sizes and engines (`run::drive`) and its steps.
//! - `results`, `summary` — what lands in `charts/<run-id>/`; `report/` draws it.
//! - `cap`      — the cgroup memory/CPU cap of the measuring process.

// Every line shown goes through the one terminal writer (say.rs): `say!`, `show!`.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `Debug`, `Serialize` and `Deserialize` of a registered kind by its `name()`, found
/// again with `$lookup` (name → Option<Self>): results name engines, stores and
/// servers, never their place in a registry.
macro_rules! by_name {
    ($ty:ident, $what:literal, $lookup:expr) => {
        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = <String as serde::Deserialize>::deserialize(d)?;
                let lookup: fn(&str) -> Option<$ty> = $lookup;
                lookup(&name).ok_or_else(|| {
                    serde::de::Error::custom(format!(concat!("unknown ", $what, " '{}'"), name))
                })
            }
        }
    };
}

// First: its `say!` and `show!` are in scope in every module after it.
#[macro_use]
pub mod say;

pub mod access;
pub mod atomic_file;
pub mod cap;
pub mod churn;
pub mod cold_fill;
pub mod config;
pub mod container;
pub mod content;
pub mod cpu_profile;
pub mod dataset;
pub mod dataset_lock;
pub mod db;
pub mod deploy;
pub mod disk_room;
pub mod diskio;
pub mod diskprobe;
pub mod docker;
pub mod entity;
pub mod error;
pub mod evict;
pub mod floor_check;
pub mod fs_pressure;
pub mod inventory;
pub mod key;
pub mod live;
pub mod load;
pub mod load_gen;
pub mod machine;
pub mod measure;
pub mod memory_fit;
pub mod merge;
pub mod merged_run;
pub mod mix;
pub mod regime;
pub mod report;
pub mod results;
pub mod rows_progress;
pub mod run;
pub mod run_parts;
pub mod server_caps;
pub mod size;
pub mod stats;
pub mod steady;
pub mod summary;
pub mod verify;

/// The name serde writes for a unit enum variant (its kebab-case or renamed
/// form), so `Display` says what results.json says without spelling it twice.
pub fn serde_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        other => format!("{other:?}"),
    }
}

/// Now, UTC, RFC 3339 to the second: the timestamp format of manifests and results.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
