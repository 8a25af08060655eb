//! PostgreSQL without SeaORM: the same table and query through sqlx, bytea in
//! the binary result format.

use anyhow::Result;
use sea_orm::sqlx::Postgres;

use super::postgres::postgres_settings;
use super::raw::RawEngine;
use crate::dataset::DatasetSpec;
use crate::store::{PgStorage, Server, connect_server, server_namespace};

pub async fn open(
    url: &str,
    spec: DatasetSpec,
    pg_storage: PgStorage,
) -> Result<RawEngine<Postgres>> {
    let ns = server_namespace(Server::Postgres, &spec, pg_storage);
    let db = connect_server(Server::Postgres, url, Some(&ns)).await?;
    let pool = db.get_postgres_connection_pool().clone();
    let mut settings = postgres_settings(&db).await?;
    settings.insert("schema".into(), ns);
    Ok(RawEngine::new(
        db,
        pool,
        "SELECT data FROM blobs WHERE id = $1",
        settings,
    ))
}
