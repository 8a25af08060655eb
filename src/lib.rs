//! blobrace: how fast can I fetch a blob of size S from database E when the
//! database has far less RAM than data?
//!
//! The folders are the layers, each importing only from its own layer and those below:
//! ARCHITECTURE.md's table lists every entry of `src/` with its layer, and
//! `tests/it/architecture.rs` holds the table against the tree and its imports.

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

pub mod atomic_file;
pub mod cap;
pub mod commands;
pub mod config;
pub mod cpu_profile;
pub mod dataset;
pub mod db;
pub mod deploy;
pub mod disk;
pub mod disk_room;
pub mod docker;
pub mod entity;
pub mod error;
pub mod kube;
pub mod load;
pub mod load_gen;
pub mod machine;
pub mod measure;
pub mod records;
pub mod report;
pub mod run;
pub mod secret;
pub mod server_caps;
pub mod size;
pub mod stats;
pub mod tls;
pub mod workload;

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
