//! The same MariaDB table and query without SeaORM: sqlx (the driver under
//! SeaORM), a server-side prepared statement, copied into a reused buffer.

use anyhow::Result;
use sea_orm::DatabaseConnection;
use sea_orm::sqlx::{self, MySqlPool, Row};

use super::mariadb::mariadb_settings;
use super::{Engine, EngineSettings};
use crate::dataset::DatasetSpec;
use crate::store::{Server, connect_server, server_namespace};

const FETCH_SQL: &str = "SELECT data FROM blobs WHERE id = ?";

pub struct MariadbRawEngine {
    db: DatabaseConnection,
    pool: MySqlPool,
    settings: EngineSettings,
}

impl MariadbRawEngine {
    pub async fn open(url: &str, spec: DatasetSpec) -> Result<Self> {
        let ns = server_namespace(&spec);
        let db = connect_server(Server::Mariadb, url, Some(&ns)).await?;
        let pool = db.get_mysql_connection_pool().clone();
        let mut settings = mariadb_settings(&db).await?;
        settings.insert("database".into(), ns);
        settings.insert(
            "access".into(),
            format!("sqlx prepared statement: {FETCH_SQL}"),
        );
        Ok(Self { db, pool, settings })
    }
}

impl Engine for MariadbRawEngine {
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
