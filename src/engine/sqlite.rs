//! SQLite through SeaORM, the way an application fetches a row.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sea_orm::{Database, DatabaseConnection};

use super::EngineSettings;
use super::orm::{OrmEngine, read_settings};
use crate::dataset::DatasetSpec;
use crate::store::{SqliteStore, sqlite_connect_options};

/// SQLite through SeaORM on the size class's file.
pub async fn open(data_dir: &Path, spec: DatasetSpec) -> Result<OrmEngine> {
    let path = sqlite_path(data_dir, spec);
    let db = Database::connect(sqlite_connect_options(&path, false))
        .await
        .with_context(|| format!("cannot open {}", path.display()))?;
    let mut settings = read_sqlite_settings(&db).await?;
    settings.insert("file".into(), path.display().to_string());
    Ok(OrmEngine::new(db, settings))
}

/// Version and the pragmas that shape read performance, read back from the connection.
pub(super) async fn read_sqlite_settings(db: &DatabaseConnection) -> Result<EngineSettings> {
    read_settings(
        db,
        &[
            ("sqlite_version", "SELECT sqlite_version()"),
            ("page_size", "PRAGMA page_size"),
            ("journal_mode", "PRAGMA journal_mode"),
            ("synchronous", "PRAGMA synchronous"),
            ("cache_size", "PRAGMA cache_size"),
            ("mmap_size", "PRAGMA mmap_size"),
        ],
    )
    .await
}

/// Where both SQLite engines' file lives, for messages.
pub(super) fn sqlite_path(data_dir: &Path, spec: DatasetSpec) -> PathBuf {
    SqliteStore::new(data_dir, spec).path().to_path_buf()
}
