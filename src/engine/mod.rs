//! Engines: what one fetch is, per database. One trait, one file per engine,
//! and `EngineKind` lists them all.
//!
//! `Engine::fetch` is the only code inside the timed span: it gets a row id and
//! must leave that row's bytes in `out`. Everything around it (choosing ids,
//! checking bytes, reading I/O counters, recording) happens outside the clock.

mod floor;
mod fs;
mod mariadb;
mod mariadb_raw;
mod orm;
mod postgres;
mod postgres_raw;
mod raw;
mod sqlite;
mod sqlite_raw;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub use floor::FloorEngine;
pub use fs::FsEngine;
pub use orm::OrmEngine;
pub use raw::RawEngine;

use crate::config::Locations;
use crate::dataset::DatasetSpec;
use crate::error::InputError;
use crate::store::{Server, StoreKind, server_url};

/// Settings an engine ran with, read back from the engine where it can tell.
pub type EngineSettings = BTreeMap<String, String>;

#[allow(async_fn_in_trait)]
pub trait Engine {
    /// Fetch row `id` into `out`. Timed: keep it to what an application does.
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()>;

    /// Called before each fetch, outside the timed span. Engines that hand back a
    /// freshly allocated buffer release the previous one here, so freeing the last
    /// result is not timed as part of the next fetch.
    fn before_fetch(&mut self, _out: &mut Vec<u8>) {}

    /// Versions and settings to record with the result.
    fn settings(&self) -> EngineSettings;

    /// Release connections and files now, not in the background, so the next
    /// engine's cold start does not overlap this one's shutdown.
    async fn close(self) -> Result<()>
    where
        Self: Sized,
    {
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EngineKind {
    /// SQLite through SeaORM: `blob::Entity::find_by_id(id).one(&db)`.
    Sqlite,
    /// The same file and query through sqlx (the driver below SeaORM), prepared statement.
    SqliteRaw,
    /// One file per blob: open, read, close.
    Fs,
    /// One `pread` at the row's offset in a packed file: the physical floor.
    Floor,
    /// PostgreSQL (capped container) through SeaORM.
    Postgres,
    /// The same PostgreSQL table and query through sqlx.
    PostgresRaw,
    /// MariaDB (capped container) through SeaORM.
    Mariadb,
    /// The same MariaDB table and query through sqlx.
    MariadbRaw,
}

impl EngineKind {
    pub const ALL: [EngineKind; 8] = [
        EngineKind::Sqlite,
        EngineKind::SqliteRaw,
        EngineKind::Fs,
        EngineKind::Floor,
        EngineKind::Postgres,
        EngineKind::PostgresRaw,
        EngineKind::Mariadb,
        EngineKind::MariadbRaw,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sqlite => "sqlite",
            EngineKind::SqliteRaw => "sqlite-raw",
            EngineKind::Fs => "fs",
            EngineKind::Floor => "floor",
            EngineKind::Postgres => "postgres",
            EngineKind::PostgresRaw => "postgres-raw",
            EngineKind::Mariadb => "mariadb",
            EngineKind::MariadbRaw => "mariadb-raw",
        }
    }

    /// The store whose dataset this engine reads.
    pub fn store(self) -> StoreKind {
        match self {
            EngineKind::Sqlite | EngineKind::SqliteRaw => StoreKind::Sqlite,
            EngineKind::Fs => StoreKind::Fs,
            EngineKind::Floor => StoreKind::Floor,
            EngineKind::Postgres | EngineKind::PostgresRaw => StoreKind::Postgres,
            EngineKind::Mariadb | EngineKind::MariadbRaw => StoreKind::Mariadb,
        }
    }

    /// Open the engine on a loaded dataset.
    pub async fn open(self, at: &Locations, spec: DatasetSpec) -> Result<AnyEngine> {
        let data_dir = &at.data_dir;
        let pg = || server_url(Server::Postgres, at.server_url(Server::Postgres));
        let maria = || server_url(Server::Mariadb, at.server_url(Server::Mariadb));
        Ok(match self {
            EngineKind::Sqlite => AnyEngine::Orm(sqlite::open(data_dir, spec).await?),
            EngineKind::SqliteRaw => AnyEngine::SqliteRaw(sqlite_raw::open(data_dir, spec).await?),
            EngineKind::Fs => AnyEngine::Fs(FsEngine::open(data_dir, spec)?),
            EngineKind::Floor => AnyEngine::Floor(FloorEngine::open(data_dir, spec)?),
            EngineKind::Postgres => {
                AnyEngine::Orm(postgres::open(&pg()?, spec, at.pg_storage).await?)
            }
            EngineKind::PostgresRaw => {
                AnyEngine::PostgresRaw(postgres_raw::open(&pg()?, spec, at.pg_storage).await?)
            }
            EngineKind::Mariadb => AnyEngine::Orm(mariadb::open(&maria()?, spec).await?),
            EngineKind::MariadbRaw => {
                AnyEngine::MariadbRaw(mariadb_raw::open(&maria()?, spec).await?)
            }
        })
    }

    pub fn known_names() -> String {
        Self::ALL
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EngineKind {
    type Err = InputError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        Self::ALL
            .into_iter()
            .find(|k| k.name() == wanted)
            .ok_or_else(|| InputError::UnknownEngine {
                name: wanted.to_string(),
                known: Self::known_names(),
            })
    }
}

/// Parse `sqlite,fs` (or `all`) into engines, in the order of `EngineKind::ALL`.
pub fn parse_engine_list(text: &str) -> Result<Vec<EngineKind>, InputError> {
    if text.trim() == "all" {
        return Ok(EngineKind::ALL.to_vec());
    }
    let mut engines = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        engines.push(part.parse::<EngineKind>()?);
    }
    if engines.is_empty() {
        return Err(InputError::UnknownEngine {
            name: text.to_string(),
            known: EngineKind::known_names(),
        });
    }
    engines.sort();
    engines.dedup();
    Ok(engines)
}

/// Any engine, for code that picks one at run time. One match per fetch.
pub enum AnyEngine {
    Orm(OrmEngine),
    SqliteRaw(RawEngine<sea_orm::sqlx::Sqlite>),
    PostgresRaw(RawEngine<sea_orm::sqlx::Postgres>),
    MariadbRaw(RawEngine<sea_orm::sqlx::MySql>),
    Fs(FsEngine),
    Floor(FloorEngine),
}

macro_rules! each_engine {
    ($self:ident, $e:ident => $body:expr) => {
        match $self {
            AnyEngine::Orm($e) => $body,
            AnyEngine::SqliteRaw($e) => $body,
            AnyEngine::PostgresRaw($e) => $body,
            AnyEngine::MariadbRaw($e) => $body,
            AnyEngine::Fs($e) => $body,
            AnyEngine::Floor($e) => $body,
        }
    };
}

impl Engine for AnyEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        each_engine!(self, e => e.fetch(id, out).await)
    }
    #[inline]
    fn before_fetch(&mut self, out: &mut Vec<u8>) {
        each_engine!(self, e => e.before_fetch(out))
    }
    fn settings(&self) -> EngineSettings {
        each_engine!(self, e => e.settings())
    }
    async fn close(self) -> Result<()> {
        each_engine!(self, e => e.close().await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names_round_trip_and_unknown_is_explained() {
        for kind in EngineKind::ALL {
            assert_eq!(kind.name().parse::<EngineKind>().unwrap(), kind);
        }
        let err = parse_engine_list("sqlite,oracle").unwrap_err().to_string();
        assert!(
            err.contains("'oracle'") && err.contains("sqlite-raw"),
            "{err}"
        );
        assert_eq!(
            parse_engine_list("all").unwrap().len(),
            EngineKind::ALL.len()
        );
        assert_eq!(
            parse_engine_list("floor, sqlite").unwrap(),
            vec![EngineKind::Sqlite, EngineKind::Floor]
        );
    }
}
