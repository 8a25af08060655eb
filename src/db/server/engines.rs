//! The two engines of every server database: SeaORM and raw sqlx on the
//! dataset's namespace, recording the server's version and settings (its
//! descriptor says which) with each result.

use anyhow::{Result, bail};
use sea_orm::{DatabaseConnection, DbBackend};

use super::Server;
use super::raw::RawEngine;
use crate::dataset::DatasetSpec;
use crate::db::any_engine::AnyEngine;
use crate::db::engine::EngineSettings;
use crate::db::locations::Locations;
use crate::db::orm_engine::{OrmEngine, read_settings};

async fn connect(
    server: Server,
    at: &Locations,
    spec: DatasetSpec,
) -> Result<(DatabaseConnection, EngineSettings)> {
    // Through the run's network, where it set one (`deploy::network`).
    let url = server.require_url(at.fetch_url(server))?;
    let namespace = server.namespace(&spec, &at.knobs);
    let db = server.connect(&url, Some(&namespace)).await?;
    let mut settings = read_settings(&db, server.recording().settings_queries()).await?;
    settings.insert(server.require_sql()?.namespace_word().into(), namespace);
    Ok((db, settings))
}

pub async fn open_orm(server: Server, at: &Locations, spec: DatasetSpec) -> Result<OrmEngine> {
    let (db, settings) = connect(server, at, spec).await?;
    let data = server.require_sql()?.data_read_expr(&at.knobs);
    Ok(OrmEngine::new(db, spec, settings).reading(data))
}

pub async fn open_raw(server: Server, at: &Locations, spec: DatasetSpec) -> Result<AnyEngine> {
    let (db, settings) = connect(server, at, spec).await?;
    let sql_server = server.require_sql()?;
    let sql = sql_server.fetch_sql(&at.knobs);
    let piece = sql_server.piece_sql(&at.knobs);
    // The protocol decides sqlx's database type and the placeholder; every server
    // speaking it shares the variant.
    Ok(match db.get_database_backend() {
        DbBackend::Postgres => {
            let pool = db.get_postgres_connection_pool().clone();
            AnyEngine::RawPostgres(RawEngine::new(db, &pool, sql, piece, spec, settings).await?)
        }
        DbBackend::MySql => {
            let pool = db.get_mysql_connection_pool().clone();
            AnyEngine::RawMySql(RawEngine::new(db, &pool, sql, piece, spec, settings).await?)
        }
        other => bail!("no raw engine for {other:?}"),
    })
}
