//! The two engines of every server database: SeaORM and raw sqlx on the
//! dataset's namespace, recording the server's version and settings (its
//! descriptor says which) with each result.

use anyhow::Result;
use sea_orm::DatabaseConnection;

use super::orm::{OrmEngine, read_settings};
use super::{AnyEngine, EngineSettings, raw};
use crate::dataset::DatasetSpec;
use crate::locations::Locations;
use crate::store::StoreKind;

async fn connect(
    store: StoreKind,
    at: &Locations,
    spec: DatasetSpec,
) -> Result<(DatabaseConnection, EngineSettings)> {
    let server = store
        .server()
        .expect("a server engine reads a server store");
    let url = server.require_url(at.server_url(server))?;
    let namespace = server.namespace(&spec, &at.server_options);
    let db = server.connect(&url, Some(&namespace)).await?;
    let mut settings = read_settings(&db, server.settings_queries()).await?;
    settings.insert(server.namespace_word().into(), namespace);
    Ok((db, settings))
}

pub async fn open_orm(store: StoreKind, at: &Locations, spec: DatasetSpec) -> Result<AnyEngine> {
    let (db, settings) = connect(store, at, spec).await?;
    let server = store.server().expect("a server store");
    let data = server.data_read_expr(&at.server_options);
    Ok(AnyEngine::Orm(
        OrmEngine::new(db, spec, settings).reading(data),
    ))
}

pub async fn open_raw(store: StoreKind, at: &Locations, spec: DatasetSpec) -> Result<AnyEngine> {
    let (db, settings) = connect(store, at, spec).await?;
    let server = store.server().expect("a server store");
    raw::open(db, server.fetch_sql(&at.server_options), spec, settings)
}
