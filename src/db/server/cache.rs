//! A server's own cache setting (shared_buffers, the InnoDB buffer pool), read and
//! set over its connection: the run sizes it for the cap (`server_caps`), and a cold
//! restart sets back one that does not survive a restart (`store.rs`).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};

use super::Server;

/// The server's cache setting in force, in bytes; None for a server without one.
pub async fn read_cache(db: &DatabaseConnection, server: Server) -> Result<Option<u64>> {
    let Some(cache) = server.memory().cache() else {
        return Ok(None);
    };
    let sql = cache.read_sql;
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await?
        .with_context(|| format!("`{sql}` returned nothing"))?;
    Ok(Some(row.try_get::<i64>("", "n")? as u64))
}

/// Set the cache, and wait until the server reports it (MariaDB resizes in the
/// background, chunk by chunk). Returns the value in force.
pub async fn set_cache(db: &DatabaseConnection, server: Server, bytes: u64) -> Result<Option<u64>> {
    let Some(cache) = server.memory().cache() else {
        return Ok(None);
    };
    db.execute_unprepared(&(cache.set_sql)(bytes))
        .await
        .with_context(|| format!("cannot set {} of {}", cache.name, server.name()))?;
    if cache.applied_by_restart {
        return read_cache(db, server).await;
    }
    let started = Instant::now();
    loop {
        let now = read_cache(db, server).await?;
        if now == Some(bytes) || started.elapsed() > Duration::from_secs(60) {
            return Ok(now);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The cache a server has now (to set it again after a restart, see `restore_cache`).
pub async fn cache_now(server: Server, url: &str) -> Result<Option<u64>> {
    let db = server.connect(url, None).await?;
    let bytes = read_cache(&db, server).await?;
    db.close().await?;
    Ok(bytes)
}

/// After a restart: set the server's cache back to what it was before it, for a
/// setting that does not survive a restart (MariaDB starts with the pool on its
/// command line, which may be meant for another cap: 640M inside a 256 MiB container
/// is an OOM kill waiting to happen). The caller reads `cache_now` before the restart
/// only for such a setting (`!applied_by_restart`).
pub async fn restore_cache(server: Server, url: &str, bytes: u64) -> Result<()> {
    let db = server.connect(url, None).await?;
    if read_cache(&db, server).await? != Some(bytes) {
        set_cache(&db, server, bytes).await?;
    }
    db.close().await?;
    Ok(())
}
