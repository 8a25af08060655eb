//! The settings a server holds for a steady-state prefill (`SqlServer::prefill_settings`:
//! InnoDB's `innodb_old_blocks_pct`), set before it and put back after it. Only on a
//! server blobrace manages: a remote server's globals are its owner's, and every steady
//! cell starts the compose server cold (a restart), which puts them back even after a
//! kill.

use anyhow::{Context, Result};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};

use super::Server;

/// What a prefill set: each variable and the value to put back.
pub type HeldSettings = Vec<(&'static str, String)>;

/// Set `server`'s prefill settings on `admin`; what to put back, and a note of what
/// was done (None: nothing to set, or a remote server, which is said).
pub async fn hold(
    server: Server,
    admin: &DatabaseConnection,
    places: &super::place::Places,
) -> Result<(HeldSettings, Option<String>)> {
    let settings = server.require_sql()?.prefill_settings();
    if settings.is_empty() {
        return Ok((Vec::new(), None));
    }
    if let Some(why) = places.remote(server) {
        return Ok((
            Vec::new(),
            Some(format!(
                "{} not set for the prefill ({why}: a server blobrace does not manage keeps its own settings), so its pool may keep parts of blobs",
                names(settings)
            )),
        ));
    }
    let backend = admin.get_database_backend();
    let mut held = Vec::new();
    for &(name, value) in settings {
        let row = admin
            .query_one_raw(Statement::from_string(
                backend,
                format!("SELECT CAST(@@GLOBAL.{name} AS CHAR) AS v"),
            ))
            .await?
            .with_context(|| format!("{}: reading {name}", server.name()))?;
        let before: String = row.try_get("", "v")?;
        admin
            .execute_unprepared(&format!("SET GLOBAL {name} = {value}"))
            .await
            .with_context(|| format!("{}: setting {name} for the prefill", server.name()))?;
        held.push((name, before));
    }
    let note = format!(
        "{} for the prefill, put back after it: the pool keeps whole blobs, not parts",
        settings
            .iter()
            .zip(&held)
            .map(|((name, value), (_, before))| format!("{name} {before} -> {value}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok((held, Some(note)))
}

/// Put back what `hold` set.
pub async fn put_back(
    server: Server,
    admin: &DatabaseConnection,
    held: HeldSettings,
) -> Result<()> {
    for (name, before) in held {
        admin
            .execute_unprepared(&format!("SET GLOBAL {name} = {before}"))
            .await
            .with_context(|| format!("{}: putting {name} back to {before}", server.name()))?;
    }
    Ok(())
}

fn names(settings: &[(&str, &str)]) -> String {
    settings
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}
