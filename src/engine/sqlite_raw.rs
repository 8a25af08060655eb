//! The same SQLite file and query without SeaORM: sqlx (the driver SeaORM sits
//! on) with a prepared, cached statement, copying the value into a reused buffer.
//! Its gap to `sqlite` is what the ORM costs.

use std::path::Path;

use anyhow::{Context, Result};
use sea_orm::sqlx::{self, Row, SqlitePool};
use sea_orm::{Database, DatabaseConnection};

use super::sqlite::{read_sqlite_settings, sqlite_path};
use super::{Engine, EngineSettings};
use crate::dataset::DatasetSpec;
use crate::store::sqlite_connect_options;

const FETCH_SQL: &str = "SELECT data FROM blobs WHERE id = ?";

pub struct SqliteRawEngine {
    // Owns the pool (and its one connection); the same options as `sqlite`.
    db: DatabaseConnection,
    pool: SqlitePool,
    settings: EngineSettings,
}

impl SqliteRawEngine {
    pub async fn open(data_dir: &Path, spec: DatasetSpec) -> Result<Self> {
        let path = sqlite_path(data_dir, spec);
        let db = Database::connect(sqlite_connect_options(&path, false))
            .await
            .with_context(|| format!("cannot open {}", path.display()))?;
        let pool = db.get_sqlite_connection_pool().clone();
        let mut settings = read_sqlite_settings(&db).await?;
        settings.insert(
            "access".into(),
            format!("sqlx prepared statement: {FETCH_SQL}"),
        );
        settings.insert("file".into(), path.display().to_string());
        Ok(Self { db, pool, settings })
    }
}

impl Engine for SqliteRawEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        let row = sqlx::query(FETCH_SQL)
            .bind(id as i64)
            .persistent(true)
            .fetch_one(&self.pool)
            .await?;
        let data: &[u8] = row.try_get(0)?;
        out.clear();
        out.extend_from_slice(data);
        Ok(())
    }

    fn settings(&self) -> EngineSettings {
        self.settings.clone()
    }

    async fn close(self) -> Result<()> {
        self.pool.close().await;
        Ok(self.db.close().await?)
    }
}
