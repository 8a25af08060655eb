//! The fetch every server's raw engine does, whatever the database: the SQL the ORM would
//! send, through sqlx (the driver SeaORM sits on) with a prepared, cached
//! statement, copying the value into a reused buffer. Its gap to the SeaORM
//! engine on the same table is what the ORM costs.
//!
//! On one connection taken from the pool when the engine opens and held until it
//! closes: sqlx's pool pings every connection it gets back (`return_to_pool` in
//! sqlx-core 0.9's pool/connection.rs, unconditionally), in a task the current-thread
//! runtime runs inside the next fetch's clock, so a fetch through `&Pool` was two round
//! trips: 64 KiB hot through the compose port, postgres-raw p50 289-337 µs beside
//! psycopg's 210-254 µs, mariadb-raw 242-282 µs beside PyMySQL's 174-199 µs
//! (2026-12-05). The SeaORM engines fetch through the pool, as an application
//! using SeaORM does, and pay that ping: part of what the ORM costs here.

use std::time::Instant;

use anyhow::{Context, Result, bail};
use sea_orm::DatabaseConnection;
use sea_orm::sqlx::pool::PoolConnection;
use sea_orm::sqlx::{
    self, ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Row, Type,
};

use super::PieceSql;
use crate::dataset::DatasetSpec;
use crate::db::engine::{Engine, EngineSettings, Streaming};

pub struct RawEngine<DB: Database> {
    // Owns the pool (one connection), opened with the same options as the ORM engine.
    db: DatabaseConnection,
    /// The pool's one connection, held: every fetch one round trip (see above).
    conn: Held<DB>,
    sql: &'static str,
    /// The read of one piece, for a streamed fetch; Err: why whole values only.
    piece: Result<PieceSql, &'static str>,
    spec: DatasetSpec,
    settings: EngineSettings,
}

impl<DB: Database> RawEngine<DB> {
    pub async fn new(
        db: DatabaseConnection,
        pool: &Pool<DB>,
        sql: &'static str,
        piece: Result<PieceSql, &'static str>,
        spec: DatasetSpec,
        mut settings: EngineSettings,
    ) -> Result<Self> {
        settings.insert(
            "access".into(),
            format!("sqlx prepared statement on one held connection: {sql}"),
        );
        let conn = pool
            .acquire()
            .await
            .context("taking the raw engine's connection from its pool")?;
        Ok(Self {
            db,
            conn: Held {
                conn: Some(conn),
                runtime: tokio::runtime::Handle::current(),
            },
            sql,
            piece,
            spec,
            settings,
        })
    }
}

/// A connection held out of its pool. sqlx gives a `PoolConnection` back to its pool in
/// a task it spawns when the connection is dropped, which panics outside a Tokio runtime
/// ("this functionality requires a Tokio context"): a cell whose server died under it
/// drops its engine after the runtime's `block_on` has returned. Dropped inside the
/// runtime the engine was opened in, wherever it is dropped.
struct Held<DB: Database> {
    conn: Option<PoolConnection<DB>>,
    runtime: tokio::runtime::Handle,
}

impl<DB: Database> Held<DB> {
    fn get(&mut self) -> &mut DB::Connection {
        self.conn.as_mut().expect("held until dropped")
    }
}

impl<DB: Database> Drop for Held<DB> {
    fn drop(&mut self) {
        let _inside = self.runtime.enter();
        drop(self.conn.take());
    }
}

impl<DB> Engine for RawEngine<DB>
where
    DB: Database,
    i64: for<'t> Encode<'t, DB> + Type<DB>,
    for<'r> &'r [u8]: Decode<'r, DB> + Encode<'r, DB> + Type<DB>,
    usize: ColumnIndex<DB::Row>,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    DB::Arguments: IntoArguments<DB>,
{
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        // sqlx prepares the statement once and caches it per connection (persistent
        // is its default), so every fetch after the first only binds and executes.
        let key = self.spec.key_of(id);
        let query = sqlx::query::<DB>(self.sql);
        let query = match &key {
            Some(key) => query.bind(&key[..]),
            None => query.bind(id as i64),
        };
        let row = query.fetch_one(self.conn.get()).await?;
        let data: &[u8] = row.try_get(0)?;
        out.clear();
        out.extend_from_slice(data);
        Ok(())
    }

    fn streaming(&self) -> Streaming {
        match self.piece {
            Ok(_) => Streaming::Chunks(
                "one prepared query per piece (substring() of the value, lo_get with an offset for a large object), in order",
            ),
            Err(why) => Streaming::No(why),
        }
    }

    /// One query per piece until the blob's size is read: what an application that
    /// streams a value out of a database row does.
    async fn fetch_streamed(
        &mut self,
        id: u64,
        chunk: usize,
        out: &mut Vec<u8>,
    ) -> Result<Instant> {
        let piece = self.piece.map_err(anyhow::Error::msg)?;
        let key = self.spec.key_of(id);
        // A mix's row has its own size (its lookup is nothing beside the round trips).
        let size = self.spec.blob_bytes(id) as usize;
        out.clear();
        let mut first = None;
        while out.len() < size {
            let (offset, len) = (out.len() as i64 + 1, chunk.min(size - out.len()) as i64);
            let mut query = sqlx::query::<DB>(piece.sql);
            // The id where the statement's placeholders put it: first or last.
            if piece.id_first {
                query = match &key {
                    Some(key) => query.bind(&key[..]),
                    None => query.bind(id as i64),
                };
            }
            query = query.bind(offset).bind(len);
            if !piece.id_first {
                query = match &key {
                    Some(key) => query.bind(&key[..]),
                    None => query.bind(id as i64),
                };
            }
            let row = query.fetch_one(self.conn.get()).await?;
            let data: &[u8] = row.try_get(0)?;
            if data.is_empty() {
                bail!(
                    "id {id}: the value ends at {} bytes, short of {size}",
                    out.len()
                );
            }
            out.extend_from_slice(data);
            first.get_or_insert_with(Instant::now);
        }
        first.context("an empty blob")
    }

    fn settings(&self) -> EngineSettings {
        self.settings.clone()
    }

    async fn close(self) -> Result<()> {
        // Back to the pool (its ping, outside any clock), then the pool closes.
        drop(self.conn);
        Ok(self.db.close().await?)
    }
}
