//! The same PostgreSQL table and query without SeaORM: sqlx (the driver under
//! SeaORM), a prepared statement, bytea in the binary result format, copied into
//! a reused buffer.

use anyhow::Result;
use sea_orm::DatabaseConnection;
use sea_orm::sqlx::{self, PgPool, Row};

use super::postgres::postgres_settings;
use super::{Engine, EngineSettings};
use crate::dataset::DatasetSpec;
use crate::store::{Server, connect_server, server_namespace};

const FETCH_SQL: &str = "SELECT data FROM blobs WHERE id = $1";

pub struct PostgresRawEngine {
    db: DatabaseConnection,
    pool: PgPool,
    settings: EngineSettings,
}

impl PostgresRawEngine {
    pub async fn open(url: &str, spec: DatasetSpec) -> Result<Self> {
        let ns = server_namespace(&spec);
        let db = connect_server(Server::Postgres, url, Some(&ns)).await?;
        let pool = db.get_postgres_connection_pool().clone();
        let mut settings = postgres_settings(&db).await?;
        settings.insert("schema".into(), ns);
        settings.insert(
            "access".into(),
            format!("sqlx prepared statement: {FETCH_SQL}"),
        );
        Ok(Self { db, pool, settings })
    }
}

impl Engine for PostgresRawEngine {
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
