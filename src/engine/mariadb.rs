//! MariaDB through SeaORM. InnoDB (>= 10.6) reads its data files with O_DIRECT:
//! its cache under the container cap is the buffer pool, not the page cache.

use anyhow::Result;

use super::EngineSettings;
use super::orm::{OrmEngine, read_settings};
use crate::dataset::DatasetSpec;
use crate::store::{PgStorage, Server, connect_server, server_namespace};

/// Server version and the settings that shape read performance (as text).
pub(super) async fn mariadb_settings(db: &sea_orm::DatabaseConnection) -> Result<EngineSettings> {
    read_settings(
        db,
        &[
            ("server_version", "SELECT CAST(VERSION() AS CHAR)"),
            (
                "innodb_buffer_pool_size",
                "SELECT CAST(@@innodb_buffer_pool_size AS CHAR)",
            ),
            (
                "innodb_flush_method",
                "SELECT CAST(@@innodb_flush_method AS CHAR)",
            ),
            (
                "max_allowed_packet",
                "SELECT CAST(@@max_allowed_packet AS CHAR)",
            ),
        ],
    )
    .await
}

pub async fn open(url: &str, spec: DatasetSpec) -> Result<OrmEngine> {
    let ns = server_namespace(Server::Mariadb, &spec, PgStorage::default());
    let db = connect_server(Server::Mariadb, url, Some(&ns)).await?;
    let mut settings = mariadb_settings(&db).await?;
    settings.insert("database".into(), ns);
    Ok(OrmEngine::new(db, settings))
}
