//! PostgreSQL through SeaORM. Blobs over ~2 kB live out of line in TOAST
//! (~2000-byte chunks), so one fetch reads the row plus its TOAST chunks.

use anyhow::Result;

use super::EngineSettings;
use super::orm::{OrmEngine, read_settings};
use crate::dataset::DatasetSpec;
use crate::store::{PgStorage, Server, connect_server, server_namespace};

/// Server version and the settings that shape read performance.
pub(super) async fn postgres_settings(db: &sea_orm::DatabaseConnection) -> Result<EngineSettings> {
    read_settings(
        db,
        &[
            ("server_version", "SELECT version()"),
            ("shared_buffers", "SHOW shared_buffers"),
            ("effective_cache_size", "SHOW effective_cache_size"),
            // p = plain, m = main, x = extended (compress, then TOAST), e = external (TOAST, no compression).
            (
                "data_storage",
                "SELECT attstorage::text FROM pg_attribute WHERE attrelid = 'blobs'::regclass AND attname = 'data'",
            ),
        ],
    )
    .await
}

pub async fn open(url: &str, spec: DatasetSpec, pg_storage: PgStorage) -> Result<OrmEngine> {
    let ns = server_namespace(Server::Postgres, &spec, pg_storage);
    let db = connect_server(Server::Postgres, url, Some(&ns)).await?;
    let mut settings = postgres_settings(&db).await?;
    settings.insert("schema".into(), ns);
    Ok(OrmEngine::new(db, settings))
}
