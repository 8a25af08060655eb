//! SQLite, the embedded engine: the size class's file opened in this process (so
//! its cache is this process's page cache, under this process's cap), through
//! SeaORM (`sqlite`). `sqlite-raw` and `sqlite-blobio` open it through SQLite's C API
//! (sqlite_raw.rs, sqlite_blobio.rs).

use anyhow::{Context, Result};
use sea_orm::{Database, DatabaseConnection};

use super::c_api::SETTINGS;
use super::pragmas::sqlite_connect_options;
use super::store::SqliteStore;
use crate::dataset::DatasetSpec;
use crate::db::engine::EngineSettings;
use crate::db::locations::Locations;
use crate::db::orm_engine::{OrmEngine, read_settings};

/// The loaded file, opened with the loader's settings, and what it runs with.
async fn connect(
    at: &Locations,
    spec: DatasetSpec,
) -> Result<(DatabaseConnection, EngineSettings)> {
    let store = SqliteStore::new(
        &at.data_dir,
        spec,
        at.knobs.get::<super::SqliteKnobs>().page_size,
    );
    let path = store.path();
    let options = sqlite_connect_options(
        path,
        false,
        at.knobs.get::<super::SqliteKnobs>().page_size,
        Some(at.knobs.get::<super::SqliteKnobs>().mmap_size),
    );
    let db = Database::connect(options)
        .await
        .with_context(|| super::cannot_open(path))?;
    let mut settings = read_settings(&db, SETTINGS).await?;
    settings.insert("file".into(), path.display().to_string());
    Ok((db, settings))
}

pub async fn open(at: &Locations, spec: DatasetSpec) -> Result<OrmEngine> {
    let (db, settings) = connect(at, spec).await?;
    Ok(OrmEngine::new(db, spec, settings))
}
