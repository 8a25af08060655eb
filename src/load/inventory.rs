//! What is loaded and what it takes on disk: every dataset in the data directory
//! and in each server, and each server's whole volume, for `blobrace env`. The
//! disk check refuses a load that does not fit and points here, so a user short of
//! disk sees what there is to drop, including datasets of other sizes, row counts
//! and layouts than the current run's flags name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sea_orm::{ConnectionTrait, Statement};
use serde::Serialize;

use crate::db::locations::Locations;
use crate::db::server::Server;
use crate::db::store::allocated_bytes;

/// Server namespaces blobrace creates start with this (`Server::namespace`).
const NAMESPACE_PREFIX: &str = "blobs_";

/// One dataset found.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    /// "sqlite", "floor", "fs", or a server's name.
    pub store: String,
    /// The file's stem, the folder, or the server's schema/database.
    pub name: String,
    /// Bytes it holds on disk; None where the store cannot say.
    pub bytes: Option<u64>,
}

/// A server's data volume as a whole: what it costs the disk, datasets and all.
#[derive(Debug, Clone, Serialize)]
pub struct Volume {
    pub server: String,
    pub path: PathBuf,
    pub bytes: Option<u64>,
}

#[derive(Debug, Default, Serialize)]
pub struct Inventory {
    pub datasets: Vec<Found>,
    /// Files in a store's folder that are no dataset: a temporary file of a write that
    /// was stopped (`.json.tmp`), what a cut-short drop set aside, or not blobrace's.
    pub others: Vec<Found>,
    pub volumes: Vec<Volume>,
    /// Stores that could not be listed, and why.
    pub unlisted: Vec<String>,
}

/// A local file's dataset: its name without the store's suffixes, so a SQLite file
/// and its -wal/-shm, or the floor's .bin and its manifest, count as one.
fn dataset_name(file_name: &str) -> &str {
    for suffix in [
        ".sqlite-wal",
        ".sqlite-shm",
        ".sqlite-journal",
        ".sqlite",
        ".bin",
        ".json",
    ] {
        if let Some(stem) = file_name.strip_suffix(suffix) {
            return stem;
        }
    }
    file_name
}

/// Whether `name` (suffixes stripped) is a dataset's stem (`DatasetSpec::stem`):
/// `<size>-x<rows>`, then nothing or `-<layout>` parts.
fn is_dataset_name(name: &str) -> bool {
    let Some((size, rest)) = name.split_once("-x") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let tail = &rest[digits..];
    // A size class (`64KiB`), or a size mix's stem (`mix-…-mix5caf1c6a`, `SizeMix::stem`).
    let mix = size.starts_with("mix-")
        && size.rsplit_once("-mix").is_some_and(|(_, hash)| {
            hash.len() == 8 && hash.bytes().all(|b| b.is_ascii_hexdigit())
        });
    (size.parse::<crate::size::SizeClass>().is_ok() || mix)
        && digits > 0
        && (tail.is_empty()
            || tail.strip_prefix('-').is_some_and(|t| {
                !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            }))
}

/// Where `kind` puts what it writes for every dataset (`Store::marker`), around the
/// dataset's name in its folder (`<name>.sqlite`, `<name>/data.mdb`): taken from a sample
/// dataset's store, once per store. None where it cannot be said (every entry then counts).
fn marker_around_name(
    kind: crate::db::registry::StoreKind,
    data_dir: &Path,
) -> Option<(String, String)> {
    let size = crate::size::SizeClass::new(64 << 10).ok()?;
    let spec =
        crate::dataset::DatasetSpec::new(size, 1 << 20, 0, crate::dataset::key::KeyType::Int)
            .ok()?;
    let at = Locations {
        data_dir: data_dir.to_path_buf(),
        ..Locations::default()
    };
    let marker = kind.open(&at, spec).marker();
    let relative = marker.strip_prefix(data_dir.join(kind.name())).ok()?;
    let relative = relative.to_string_lossy();
    let stem = spec.stem();
    let at = relative.find(&stem)?;
    Some((
        relative[..at].to_string(),
        relative[at + stem.len()..].to_string(),
    ))
}

fn local(data_dir: &Path, inventory: &mut Inventory) {
    // Every store that is not a server keeps its datasets in the data directory's
    // folder of its name (its `open_store` puts them there): from the registry, so a
    // new embedded database is listed with no line here.
    let local = crate::db::registry::StoreKind::all().filter(|kind| !kind.is_server());
    for kind in local {
        let store = kind.name();
        let dir = data_dir.join(store);
        // A foreign file or folder that only bears a dataset's name is not one.
        let marker = marker_around_name(kind, data_dir);
        let has_marker = |name: &str| {
            marker
                .as_ref()
                .is_none_or(|(before, after)| dir.join(format!("{before}{name}{after}")).exists())
        };
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                inventory.unlisted.push(format!("{}: {e}", dir.display()));
                continue;
            }
        };
        let mut by_name: BTreeMap<String, Option<u64>> = BTreeMap::new();
        for entry in entries.flatten() {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let bytes = allocated_bytes(&entry.path()).ok();
            let total = by_name
                .entry(dataset_name(&file_name).to_string())
                .or_insert(Some(0));
            *total = total.zip(bytes).map(|(a, b)| a + b);
        }
        for (name, bytes) in by_name {
            let found = Found {
                store: store.to_string(),
                name,
                bytes,
            };
            if is_dataset_name(&found.name) && has_marker(&found.name) {
                inventory.datasets.push(found);
            } else {
                inventory.others.push(found);
            }
        }
    }
}

async fn server(server: Server, url: &str, inventory: &mut Inventory) -> anyhow::Result<()> {
    server.probe(url).await?;
    if let Some(listing) = server.list_datasets() {
        // Not SQL namespaces (an object store's buckets): its own listing.
        for (name, bytes) in listing.await? {
            inventory.datasets.push(Found {
                store: server.name().to_string(),
                name,
                bytes,
            });
        }
        return Ok(());
    }
    let db = server.connect(url, None).await?;
    let backend = db.get_database_backend();
    let rows = db
        .query_all_raw(Statement::from_string(
            backend,
            "SELECT CAST(schema_name AS CHAR(128)) AS name FROM information_schema.schemata"
                .to_string(),
        ))
        .await?;
    let mut names: Vec<String> = rows
        .iter()
        // CHAR(128) is blank-padded on PostgreSQL.
        .filter_map(|r| r.try_get::<String>("", "name").ok())
        .map(|n| n.trim_end().to_string())
        .filter(|n| n.starts_with(NAMESPACE_PREFIX))
        .collect();
    names.sort();
    for name in names {
        // Names are only [a-z0-9_] (`Server::namespace`), safe to inline. Open the
        // table first: MariaDB lists a tablespace only once it was opened since the
        // server started (a failure here only leaves the size unavailable).
        let _ = db
            .execute_unprepared(&format!("SELECT 1 FROM {name}.blobs LIMIT 1"))
            .await;
        let bytes = match server.recording().namespace_bytes_sql(&name) {
            Some(sql) => db
                .query_one_raw(Statement::from_string(backend, sql))
                .await
                .ok()
                .flatten()
                .and_then(|row| row.try_get::<Option<i64>>("", "n").ok().flatten())
                .map(|n| n.max(0) as u64),
            None => match server.recording().namespace_dir(&name) {
                Some(dir) => crate::docker::dir_bytes_in_service(server.name(), &dir)
                    .await
                    .ok()
                    .flatten(),
                None => None,
            },
        };
        inventory.datasets.push(Found {
            store: server.name().to_string(),
            name,
            bytes,
        });
    }
    db.close().await?;
    Ok(())
}

/// List everything: the data directory's stores, then each server whose URL is
/// known (one that cannot be reached is named in `unlisted`, never fatal; those in
/// `skip` were found down already and are not asked again).
pub async fn take(at: &Locations, skip: &[Server]) -> Inventory {
    let mut inventory = Inventory::default();
    local(&at.data_dir, &mut inventory);
    for db in Server::all() {
        if let Ok(Some((path, _))) =
            crate::docker::service_data_source(db.name(), db.container_data_dir()).await
        {
            inventory.volumes.push(Volume {
                server: db.name().to_string(),
                bytes: allocated_bytes(&path).ok(),
                path,
            });
        }
        let Some(url) = at.server_url(db) else {
            continue;
        };
        if skip.contains(&db) {
            inventory
                .unlisted
                .push(format!("{}: not reachable (above)", db.name()));
            continue;
        }
        if let Err(e) = server(db, url, &mut inventory).await {
            inventory.unlisted.push(format!("{}: {e:#}", db.name()));
        }
    }
    inventory
}

impl Inventory {
    /// One line per dataset and volume, for the terminal.
    pub fn lines(&self) -> Vec<String> {
        let label = |b: Option<u64>| {
            b.map(crate::size::format_bytes_approx)
                .unwrap_or_else(|| "unavailable".into())
        };
        let mut lines: Vec<String> = self
            .datasets
            .iter()
            .map(|d| format!("{:<9} {:<34} {:>10}", d.store, d.name, label(d.bytes)))
            .collect();
        for v in &self.volumes {
            lines.push(format!(
                "{:<9} {:<34} {:>10}  (its whole volume {}, every dataset in it and the server's own files)",
                v.server,
                "(volume)",
                label(v.bytes),
                v.path.display()
            ));
        }
        for o in &self.others {
            lines.push(format!(
                "{:<9} {:<34} {:>10}  (not a dataset: a leftover of a stopped write or drop, or not blobrace's; `blobrace drop` removes a drop's, the rest is yours to remove)",
                o.store,
                o.name,
                label(o.bytes)
            ));
        }
        for u in &self.unlisted {
            lines.push(format!("not listed: {u}"));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_sidecars_count_with_it() {
        assert_eq!(dataset_name("64KiB-x49152.sqlite"), "64KiB-x49152");
        assert_eq!(dataset_name("64KiB-x49152.sqlite-wal"), "64KiB-x49152");
        assert_eq!(dataset_name("4MiB-x768.bin"), "4MiB-x768");
        assert_eq!(dataset_name("4MiB-x768.json"), "4MiB-x768");
        assert_eq!(dataset_name("1KiB-x3145728"), "1KiB-x3145728");
    }

    #[test]
    fn dataset_names_are_told_from_other_files() {
        for name in ["1KiB-x10", "64KiB-x49152-kuuidv7", "4MiB-x768-churn30-live"] {
            assert!(is_dataset_name(name), "{name}");
        }
        for name in [
            "1KiB-x10.json.tmp",
            "notes",
            "1KiB-x",
            "big-x10",
            "1KiB-x10-",
            "1KiB-x10.old",
        ] {
            assert!(!is_dataset_name(name), "{name}");
        }
    }

    #[test]
    fn local_datasets_are_listed_with_their_bytes_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = dir.path().join("sqlite");
        std::fs::create_dir_all(&sqlite).unwrap();
        std::fs::write(sqlite.join("1KiB-x10.sqlite"), vec![1u8; 100_000]).unwrap();
        std::fs::write(sqlite.join("1KiB-x10.sqlite-wal"), vec![1u8; 50_000]).unwrap();
        let fs = dir.path().join("fs").join("1KiB-x10");
        std::fs::create_dir_all(fs.join("00")).unwrap();
        for i in 0..10 {
            std::fs::write(fs.join("00").join(i.to_string()), vec![2u8; 1024]).unwrap();
        }
        std::fs::write(fs.join("manifest.json"), b"{}").unwrap();
        // A stopped write's temporary file and a stranger's file are no datasets.
        std::fs::write(sqlite.join("1KiB-x10.json.tmp"), b"{").unwrap();
        std::fs::write(sqlite.join("notes.txt"), b"mine").unwrap();
        // Nor are a stranger's file and folder that only bear a dataset's name: LMDB's
        // datasets are folders with data.mdb, redb's folders with blobs.redb.
        let lmdb = dir.path().join("lmdb").join("64KiB-x10");
        std::fs::create_dir_all(&lmdb).unwrap();
        std::fs::write(lmdb.join("photo.jpg"), b"mine").unwrap();
        std::fs::create_dir_all(dir.path().join("redb")).unwrap();
        std::fs::write(dir.path().join("redb").join("1KiB-x10"), b"mine").unwrap();
        let mut inventory = Inventory::default();
        local(dir.path(), &mut inventory);
        let mut others: Vec<(&str, &str)> = inventory
            .others
            .iter()
            .map(|d| (d.store.as_str(), d.name.as_str()))
            .collect();
        others.sort();
        assert_eq!(
            others,
            [
                ("lmdb", "64KiB-x10"),
                ("redb", "1KiB-x10"),
                ("sqlite", "1KiB-x10.json.tmp"),
                ("sqlite", "notes.txt")
            ]
        );
        let names: Vec<(&str, &str)> = inventory
            .datasets
            .iter()
            .map(|d| (d.store.as_str(), d.name.as_str()))
            .collect();
        assert_eq!(names, [("sqlite", "1KiB-x10"), ("fs", "1KiB-x10")]);
        let sqlite_bytes = inventory.datasets[0].bytes.unwrap();
        assert!(
            (150_000..=160_000 + 8192).contains(&sqlite_bytes),
            "{sqlite_bytes}"
        );
        // Ten files of one block each, at least.
        assert!(inventory.datasets[1].bytes.unwrap() >= 10 * 1024);
    }
}
