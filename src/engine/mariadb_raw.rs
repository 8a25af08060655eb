//! MariaDB without SeaORM: the same table and query through sqlx, a
//! server-side prepared statement.

use anyhow::Result;
use sea_orm::sqlx::MySql;

use super::mariadb::mariadb_settings;
use super::raw::RawEngine;
use crate::dataset::DatasetSpec;
use crate::store::{PgStorage, Server, connect_server, server_namespace};

pub async fn open(url: &str, spec: DatasetSpec) -> Result<RawEngine<MySql>> {
    let ns = server_namespace(Server::Mariadb, &spec, PgStorage::default());
    let db = connect_server(Server::Mariadb, url, Some(&ns)).await?;
    let pool = db.get_mysql_connection_pool().clone();
    let mut settings = mariadb_settings(&db).await?;
    settings.insert("database".into(), ns);
    Ok(RawEngine::new(
        db,
        pool,
        "SELECT data FROM blobs WHERE id = ?",
        settings,
    ))
}
