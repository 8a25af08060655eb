//! SQLite without SeaORM: the same file, the same query, through sqlx.

use std::path::Path;

use anyhow::{Context, Result};
use sea_orm::Database;
use sea_orm::sqlx::Sqlite;

use super::raw::RawEngine;
use super::sqlite::{read_sqlite_settings, sqlite_path};
use crate::dataset::DatasetSpec;
use crate::store::sqlite_connect_options;

pub async fn open(data_dir: &Path, spec: DatasetSpec) -> Result<RawEngine<Sqlite>> {
    let path = sqlite_path(data_dir, spec);
    let db = Database::connect(sqlite_connect_options(&path, false))
        .await
        .with_context(|| format!("cannot open {}", path.display()))?;
    let pool = db.get_sqlite_connection_pool().clone();
    let mut settings = read_sqlite_settings(&db).await?;
    settings.insert("file".into(), path.display().to_string());
    Ok(RawEngine::new(
        db,
        pool,
        "SELECT data FROM blobs WHERE id = ?",
        settings,
    ))
}
