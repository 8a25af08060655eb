//! `--churn` on every SQL store (SQLite, PostgreSQL, MariaDB, Dolt, MySQL): a batch of
//! rows changed the way an application changes them (`UPDATE`, or `DELETE` then
//! `INSERT`), in one transaction with the count of changes applied so far, which lives
//! in a one-row table beside the rows (`blobrace_churn`). A churn killed mid-batch
//! loses the whole batch and its count together, so it resumes at the batch.

use anyhow::{Context, Result};
use sea_orm::sqlx;
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement};

use crate::dataset::DatasetSpec;
use crate::dataset::churn::{ChurnKind, ChurnProgress};

/// How many of the churn's changes are in (0 before the first batch), and whether its
/// compaction is done.
pub async fn applied(db: &DatabaseConnection) -> Result<ChurnProgress> {
    let backend = db.get_database_backend();
    db.execute_unprepared(
        "CREATE TABLE IF NOT EXISTS blobrace_churn (applied BIGINT NOT NULL, compacted BIGINT NOT NULL DEFAULT 0)",
    )
    .await
    .context("creating the churn's count table")?;
    let row = db
        .query_one_raw(Statement::from_string(
            backend,
            "SELECT COALESCE(MAX(applied), 0) AS n, COALESCE(MAX(compacted), 0) AS c FROM blobrace_churn",
        ))
        .await?
        .context("the churn's count returned no row")?;
    Ok(ChurnProgress {
        applied: row.try_get::<i64>("", "n")? as u64,
        compacted: row.try_get::<i64>("", "c")? != 0,
    })
}

/// Record that the compaction after the churn is done (it ran to its end first).
pub async fn mark_compacted(db: &DatabaseConnection) -> Result<()> {
    db.execute_unprepared("UPDATE blobrace_churn SET compacted = 1")
        .await?;
    Ok(())
}

/// Run `statements`, the last of which returns rows `(name, value)`: what a database
/// says of its own cleanup.
pub async fn facts(db: &DatabaseConnection, statements: &[String]) -> Result<Vec<(String, i64)>> {
    let Some((query, first)) = statements.split_last() else {
        return Ok(Vec::new());
    };
    for sql in first {
        db.execute_unprepared(sql).await?;
    }
    let rows = db
        .query_all_raw(Statement::from_string(
            db.get_database_backend(),
            query.as_str(),
        ))
        .await
        .with_context(|| format!("`{query}`"))?;
    rows.iter()
        .map(|row| {
            Ok((
                row.try_get::<String>("", "name")?,
                row.try_get::<i64>("", "value")?,
            ))
        })
        .collect()
}

/// Change rows `ids` to `blobs` and record `applied`, in one transaction. `piece`: a
/// server that refuses a bound blob longer than that (Dolt 0.40) gets each blob in
/// pieces joined on the server, as its loader sends them.
pub async fn change(
    db: &DatabaseConnection,
    spec: &DatasetSpec,
    ids: &[u64],
    blobs: &[Vec<u8>],
    applied: u64,
    piece: Option<usize>,
) -> Result<()> {
    // A writer on a dataset without a churn (`--write-rate` alone) replaces rows.
    let kind = spec.churn.map_or(ChurnKind::Replace, |c| c.kind);
    let backend = db.get_database_backend();
    let statements = Statements::new(backend, kind, spec.size.as_usize(), piece);
    let rows = Rows {
        spec,
        ids,
        blobs,
        piece,
        applied,
    };
    match backend {
        DbBackend::Postgres => {
            rows.change(db.get_postgres_connection_pool(), &statements)
                .await
        }
        DbBackend::MySql => {
            rows.change(db.get_mysql_connection_pool(), &statements)
                .await
        }
        DbBackend::Sqlite => {
            rows.change(db.get_sqlite_connection_pool(), &statements)
                .await
        }
        other => anyhow::bail!("no churn for {other:?}"),
    }
}

/// The statements of one change, with each backend's placeholders.
struct Statements {
    /// `UPDATE` (replace) or `INSERT` (delete-insert) of the new value.
    write: String,
    /// `DELETE` of the old row first (delete-insert).
    delete: Option<String>,
    record: String,
}

impl Statements {
    fn new(backend: DbBackend, kind: ChurnKind, blob_len: usize, piece: Option<usize>) -> Self {
        let p = |n: usize| match backend {
            DbBackend::Postgres => format!("${n}"),
            _ => "?".into(),
        };
        // The value first, the id after it, in both statements.
        let value = match piece {
            Some(piece) => {
                let pieces = blob_len.div_ceil(piece).max(1);
                format!("CONCAT(?{})", ", ?".repeat(pieces - 1))
            }
            None => p(1),
        };
        let id_at = if piece.is_some() { "?".into() } else { p(2) };
        match kind {
            ChurnKind::Replace => Self {
                write: format!("UPDATE blobs SET data = {value} WHERE id = {id_at}"),
                delete: None,
                record: Self::record(&p),
            },
            ChurnKind::DeleteInsert => Self {
                write: format!("INSERT INTO blobs (data, id) VALUES ({value}, {id_at})"),
                delete: Some(format!("DELETE FROM blobs WHERE id = {}", p(1))),
                record: Self::record(&p),
            },
        }
    }

    fn record(p: &dyn Fn(usize) -> String) -> String {
        format!("INSERT INTO blobrace_churn (applied) VALUES ({})", p(1))
    }
}

struct Rows<'a> {
    spec: &'a DatasetSpec,
    ids: &'a [u64],
    blobs: &'a [Vec<u8>],
    piece: Option<usize>,
    applied: u64,
}

impl Rows<'_> {
    async fn change<DB>(&self, pool: &sqlx::Pool<DB>, statements: &Statements) -> Result<()>
    where
        DB: sqlx::Database,
        i64: for<'t> sqlx::Encode<'t, DB> + sqlx::Type<DB>,
        for<'b> &'b [u8]: sqlx::Encode<'b, DB> + sqlx::Type<DB>,
        for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
        DB::Arguments: sqlx::IntoArguments<DB>,
    {
        let mut tx = pool.begin().await?;
        for (&id, blob) in self.ids.iter().zip(self.blobs) {
            let key = self.spec.key_of(id);
            // The row's key where the dataset has one, else its id.
            macro_rules! bind_id {
                ($q:expr) => {
                    match &key {
                        Some(key) => $q.bind(&key[..]),
                        None => $q.bind(id as i64),
                    }
                };
            }
            if let Some(delete) = &statements.delete {
                bind_id!(sqlx::query::<DB>(sqlx::AssertSqlSafe(delete.as_str())))
                    .execute(&mut *tx)
                    .await
                    .with_context(|| format!("deleting id {id}"))?;
            }
            let mut write = sqlx::query::<DB>(sqlx::AssertSqlSafe(statements.write.as_str()));
            match self.piece {
                Some(piece) => {
                    for chunk in blob.chunks(piece) {
                        write = write.bind(chunk);
                    }
                }
                None => write = write.bind(blob.as_slice()),
            }
            bind_id!(write)
                .execute(&mut *tx)
                .await
                .with_context(|| format!("writing id {id}'s new version"))?;
        }
        sqlx::query::<DB>("DELETE FROM blobrace_churn")
            .execute(&mut *tx)
            .await?;
        sqlx::query::<DB>(sqlx::AssertSqlSafe(statements.record.as_str()))
            .bind(self.applied as i64)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}
