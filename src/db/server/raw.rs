//! The fetch every server's raw engine does, whatever the database: the SQL the ORM would
//! send, through sqlx (the driver SeaORM sits on) with a prepared, cached
//! statement, copying the value into a reused buffer. Its gap to the SeaORM
//! engine on the same table is what the ORM costs.

use anyhow::Result;
use sea_orm::DatabaseConnection;
use sea_orm::sqlx::{
    self, ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Row, Type,
};

use crate::dataset::DatasetSpec;
use crate::db::engine::{Engine, EngineSettings};

pub struct RawEngine<DB: Database> {
    // Owns the pool (one connection), opened with the same options as the ORM engine.
    db: DatabaseConnection,
    pool: Pool<DB>,
    sql: &'static str,
    spec: DatasetSpec,
    settings: EngineSettings,
}

impl<DB: Database> RawEngine<DB> {
    pub fn new(
        db: DatabaseConnection,
        pool: Pool<DB>,
        sql: &'static str,
        spec: DatasetSpec,
        mut settings: EngineSettings,
    ) -> Self {
        settings.insert("access".into(), format!("sqlx prepared statement: {sql}"));
        Self {
            db,
            pool,
            sql,
            spec,
            settings,
        }
    }
}

impl<DB> Engine for RawEngine<DB>
where
    DB: Database,
    i64: for<'t> Encode<'t, DB> + Type<DB>,
    for<'r> &'r [u8]: Decode<'r, DB> + Encode<'r, DB> + Type<DB>,
    usize: ColumnIndex<DB::Row>,
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
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
        let row = query.fetch_one(&self.pool).await?;
        let data: &[u8] = row.try_get(0)?;
        out.clear();
        out.extend_from_slice(data);
        Ok(())
    }

    fn streaming(&self) -> crate::db::engine::Streaming {
        crate::db::engine::Streaming::No(
            "whole value only as built: a query returns the row whole (a read in pieces, substring() per piece or lo_get with an offset, is not built yet)",
        )
    }

    fn settings(&self) -> EngineSettings {
        self.settings.clone()
    }

    async fn close(self) -> Result<()> {
        self.pool.close().await;
        Ok(self.db.close().await?)
    }
}
