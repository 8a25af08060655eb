//! SQLite through SeaORM, the way an application fetches a row.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sea_orm::{ConnectionTrait, Database, DatabaseConnection, EntityTrait, Statement};

use super::{Engine, EngineSettings};
use crate::dataset::DatasetSpec;
use crate::entity::blob;
use crate::store::{SqliteStore, sqlite_connect_options};

pub struct SqliteEngine {
    db: DatabaseConnection,
    settings: EngineSettings,
}

impl SqliteEngine {
    pub async fn open(data_dir: &Path, spec: DatasetSpec) -> Result<Self> {
        let path = SqliteStore::new(data_dir, spec).path().to_path_buf();
        let db = Database::connect(sqlite_connect_options(&path, false))
            .await
            .with_context(|| format!("cannot open {}", path.display()))?;
        let mut settings = read_sqlite_settings(&db).await?;
        settings.insert("access".into(), "sea-orm find_by_id".into());
        settings.insert("file".into(), path.display().to_string());
        Ok(Self { db, settings })
    }
}

/// Version and the pragmas that shape read performance, read back from the connection.
pub(super) async fn read_sqlite_settings(db: &DatabaseConnection) -> Result<EngineSettings> {
    let mut settings = EngineSettings::new();
    for (key, sql) in [
        ("sqlite_version", "SELECT sqlite_version() AS v"),
        ("page_size", "PRAGMA page_size"),
        ("journal_mode", "PRAGMA journal_mode"),
        ("synchronous", "PRAGMA synchronous"),
        ("cache_size", "PRAGMA cache_size"),
        ("mmap_size", "PRAGMA mmap_size"),
    ] {
        let row = db
            .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
            .await?
            .with_context(|| format!("{sql} returned nothing"))?;
        let value = row
            .try_get_by_index::<String>(0)
            .or_else(|_| row.try_get_by_index::<i64>(0).map(|v| v.to_string()))?;
        settings.insert(key.into(), value);
    }
    Ok(settings)
}

/// Where both SQLite engines' file lives, for messages.
pub(super) fn sqlite_path(data_dir: &Path, spec: DatasetSpec) -> PathBuf {
    SqliteStore::new(data_dir, spec).path().to_path_buf()
}

impl Engine for SqliteEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        let row = blob::Entity::find_by_id(id as i64)
            .one(&self.db)
            .await?
            .with_context(|| format!("row {id} not found"))?;
        *out = row.data;
        Ok(())
    }

    fn before_fetch(&mut self, out: &mut Vec<u8>) {
        // The ORM allocates a new Vec per row; free the previous one outside the clock.
        drop(std::mem::take(out));
    }

    fn settings(&self) -> EngineSettings {
        self.settings.clone()
    }

    async fn close(self) -> Result<()> {
        Ok(self.db.close().await?)
    }
}
