//! `AnyEngine`: every engine type behind one enum, so the timed loop dispatches a
//! fetch with one match. (A `dyn Engine` cannot have an async `fetch` without boxing
//! its future, an allocation inside the clock.) An engine of a new type adds its
//! variant here; a database that reuses a type (every SQL server's SeaORM and raw
//! engines) adds nothing.

use anyhow::Result;

use std::time::Instant;

use super::engine::{Engine, EngineSettings, Streaming};
use super::floor::engine::FloorEngine;
use super::fs::engine::FsEngine;
use super::lmdb::engine::LmdbEngine;
use super::orm_engine::OrmEngine;
use super::redb::engine::RedbEngine;
use super::rocksdb::engine::RocksdbEngine;
use super::seaweedfs::engine::S3Engine;
use super::server::raw::RawEngine;
use super::sqlite::blobio::BlobIoEngine;
use super::sqlite::stmt::StmtEngine;

/// Any engine, for code that picks one at run time: one match per fetch. The
/// raw engines differ by wire protocol (sqlx's database type), not by server:
/// servers speaking the same protocol share a variant.
pub enum AnyEngine {
    Orm(OrmEngine),
    SqliteStmt(StmtEngine),
    RawPostgres(RawEngine<sea_orm::sqlx::Postgres>),
    RawMySql(RawEngine<sea_orm::sqlx::MySql>),
    SqliteBlobIo(BlobIoEngine),
    Fs(FsEngine),
    Floor(FloorEngine),
    S3(S3Engine),
    Redb(RedbEngine),
    Lmdb(LmdbEngine),
    Rocksdb(RocksdbEngine),
}

macro_rules! each_engine {
    ($self:ident, $e:ident => $body:expr) => {
        match $self {
            AnyEngine::Orm($e) => $body,
            AnyEngine::SqliteStmt($e) => $body,
            AnyEngine::RawPostgres($e) => $body,
            AnyEngine::RawMySql($e) => $body,
            AnyEngine::SqliteBlobIo($e) => $body,
            AnyEngine::Fs($e) => $body,
            AnyEngine::Floor($e) => $body,
            AnyEngine::S3($e) => $body,
            AnyEngine::Redb($e) => $body,
            AnyEngine::Lmdb($e) => $body,
            AnyEngine::Rocksdb($e) => $body,
        }
    };
}

impl Engine for AnyEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        each_engine!(self, e => e.fetch(id, out).await)
    }
    #[inline]
    fn before_fetch(&mut self, id: u64, out: &mut Vec<u8>) {
        each_engine!(self, e => e.before_fetch(id, out))
    }
    fn settings(&self) -> EngineSettings {
        each_engine!(self, e => e.settings())
    }
    fn streaming(&self) -> Streaming {
        each_engine!(self, e => e.streaming())
    }
    #[inline]
    async fn fetch_streamed(
        &mut self,
        id: u64,
        chunk: usize,
        out: &mut Vec<u8>,
    ) -> Result<Instant> {
        each_engine!(self, e => e.fetch_streamed(id, chunk, out).await)
    }
    async fn close(self) -> Result<()> {
        each_engine!(self, e => e.close().await)
    }
}
