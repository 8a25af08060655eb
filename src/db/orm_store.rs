//! What every SeaORM-backed store does the same way on SQLite, PostgreSQL and
//! MariaDB: schema through the migration crate, the one-row manifest, batched
//! multi-row inserts through sqlx (one transaction per batch, in id order, so a crash leaves
//! exactly ids 1..=MAX(id)), and counting ids for `verify`.

use std::path::Path;

use anyhow::{Context, Result};
use migration::{DataColumn, KeyColumn, Migrator, MigratorTrait};
use sea_orm::sqlx;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ConnectionTrait, DatabaseConnection, DbBackend,
    EntityTrait, Statement,
};

use super::store::IdRange;
use crate::dataset::key::KEY_BYTES;
use crate::dataset::{DatasetSpec, DatasetState, Manifest};
use crate::entity::manifest;

fn manifest_of(model: &manifest::Model) -> Result<Manifest> {
    Ok(Manifest {
        size_bytes: model.size_bytes as u64,
        rows: model.rows as u64,
        seed: model
            .seed
            .parse()
            .context("manifest seed is not a number")?,
        dataset_bytes: model.dataset_bytes as u64,
        complete: model.complete,
        format_version: model.format_version,
        loaded_at: model.loaded_at.clone(),
        rows_done: None,
        disk_bytes: None,
        // The manifest table has no column for it: a mix's dataset lives under a name
        // that holds its hash (`SizeMix::short_id`), so no other mix is found there.
        mix: None,
    })
}

/// How a store's load writes its batches: whether a stopped load can leave a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadOrder {
    /// One batch at a time, in id order: ids 1..=MAX(id) are present.
    Serial,
    /// Batches on several connections at once: a later one may have committed and an
    /// earlier one not.
    Parallel,
}

/// Rows already loaded: ids 1..=this are present, since rows go in id order in whole
/// batches. For integer ids the highest id before any gap; the row count for a keyed
/// dataset (a random key's order says nothing of its id; keyed loads are serial).
pub(super) async fn rows_done(
    db: &DatabaseConnection,
    spec: &DatasetSpec,
    order: LoadOrder,
) -> Result<u64> {
    if spec.key.is_binary() {
        return query_u64(db, "SELECT COUNT(*) AS m FROM blobs").await;
    }
    let max = query_u64(db, "SELECT COALESCE(MAX(id), 0) AS m FROM blobs").await?;
    // A serial load leaves no gap, so no count: Dolt 0.40 counts by reading every
    // row, and counting a stopped 1 KiB load's 1.9 million rows took over 5 minutes,
    // in silence, before the run could say its plan.
    if max == 0
        || order == LoadOrder::Serial
        || query_u64(db, "SELECT COUNT(*) AS m FROM blobs").await? == max
    {
        return Ok(max);
    }
    // A parallel load (`ServerDb::load_connections`) stopped with a later batch
    // committed and an earlier one not: the ids without a gap end before the first
    // id whose successor is missing.
    if query_u64(db, "SELECT COUNT(*) AS m FROM blobs WHERE id = 1").await? == 0 {
        return Ok(0);
    }
    query_u64(
        db,
        "SELECT COALESCE(MIN(b.id), 0) AS m FROM blobs b WHERE NOT EXISTS (SELECT 1 FROM blobs c WHERE c.id = b.id + 1)",
    )
    .await
}

async fn query_u64(db: &DatabaseConnection, sql: &str) -> Result<u64> {
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await?
        .with_context(|| format!("{sql} returned no row"))?;
    Ok(row.try_get::<i64>("", "m")? as u64)
}

/// State of a dataset whose manifest table exists (checked by the caller).
pub(super) async fn state(
    db: &DatabaseConnection,
    spec: &DatasetSpec,
    location: &Path,
    order: LoadOrder,
) -> Result<DatasetState> {
    let Some(model) = manifest::Entity::find_by_id(1).one(db).await? else {
        return Ok(DatasetState::Partial { rows_done: 0 });
    };
    manifest_of(&model)?.check_matches(spec, location)?;
    if model.complete {
        return Ok(DatasetState::Complete);
    }
    Ok(DatasetState::Partial {
        rows_done: rows_done(db, spec, order).await?,
    })
}

/// Create the schema and the manifest if missing; return the rows already loaded.
pub(super) async fn begin(
    db: &DatabaseConnection,
    spec: &DatasetSpec,
    location: &Path,
    data: DataColumn,
    order: LoadOrder,
) -> Result<u64> {
    if spec.key.is_binary() || data != DataColumn::Blob {
        // The migration creates `blobs` (BIGINT ids, the bytes in the row) only if it
        // is missing: a dataset of another layout creates it first.
        let backend = db.get_database_backend();
        let key = if spec.key.is_binary() {
            KeyColumn::Binary16
        } else {
            KeyColumn::Integer
        };
        db.execute(&migration::blobs_table(backend, key, data))
            .await
            .with_context(|| format!("cannot create the table in {}", location.display()))?;
    }
    Migrator::up(db, None)
        .await
        .with_context(|| format!("cannot create the schema in {}", location.display()))?;
    match manifest::Entity::find_by_id(1).one(db).await? {
        Some(model) => manifest_of(&model)?.check_matches(spec, location)?,
        None => {
            let m = Manifest::started(spec);
            manifest::ActiveModel {
                id: Set(1),
                size_bytes: Set(m.size_bytes as i64),
                rows: Set(m.rows as i64),
                seed: Set(m.seed.to_string()),
                dataset_bytes: Set(m.dataset_bytes as i64),
                complete: Set(false),
                format_version: Set(m.format_version),
                loaded_at: Set(None),
            }
            .insert(db)
            .await?;
        }
    }
    let done = rows_done(db, spec, order).await?;
    if !spec.key.is_binary() {
        // Rows past a gap (a parallel load's later batches) go: the load resumes
        // after the last id of the unbroken run 1..=done.
        db.execute_unprepared(&format!("DELETE FROM blobs WHERE id > {done}"))
            .await
            .with_context(|| format!("cannot trim {} to ids 1..={done}", location.display()))?;
    }
    Ok(done)
}

/// Insert rows `first_id..` in one multi-row INSERT inside one transaction.
/// Insert a batch in one transaction, binding the blobs by reference through
/// sqlx (the driver under SeaORM). `insert_many` would first move every blob into
/// a SeaORM value and the driver would copy it again: at 32 MiB blobs that held
/// ~5 copies of a blob at once (175-190 MB peak RSS); here the driver's argument
/// buffer and its socket (or SQLite's bind) buffer are the only copies, and the
/// loader reuses its own buffers from batch to batch.
pub(super) async fn append(
    db: &DatabaseConnection,
    spec: &DatasetSpec,
    first_id: u64,
    blobs: &[Vec<u8>],
    data_template: &str,
) -> Result<()> {
    let backend = db.get_database_backend();
    let sql = insert_sql(backend, blobs.len(), data_template);
    match backend {
        DbBackend::Postgres => {
            insert_batch(
                db.get_postgres_connection_pool(),
                &sql,
                spec,
                first_id,
                blobs,
            )
            .await
        }
        DbBackend::MySql => {
            insert_batch(db.get_mysql_connection_pool(), &sql, spec, first_id, blobs).await
        }
        DbBackend::Sqlite => {
            insert_batch(db.get_sqlite_connection_pool(), &sql, spec, first_id, blobs).await
        }
        other => anyhow::bail!("no loader for {other:?}"),
    }
}

/// The keys of a batch's rows, for binding (empty for integer ids).
fn batch_keys(spec: &DatasetSpec, first_id: u64, rows: usize) -> Vec<[u8; KEY_BYTES]> {
    (first_id..first_id + rows as u64)
        .filter_map(|id| spec.key_of(id))
        .collect()
}

/// `INSERT INTO blobs (id, data) VALUES ($1, $2), ($3, $4), ...` (`?` outside
/// PostgreSQL), each blob's placeholder put in `data_template` for `{}`
/// (`lo_from_bytea(0, {})`: PostgreSQL large objects).
fn insert_sql(backend: DbBackend, rows: usize, data_template: &str) -> String {
    let mut sql = String::from("INSERT INTO blobs (id, data) VALUES ");
    for i in 0..rows {
        if i > 0 {
            sql.push_str(", ");
        }
        let (id, data) = match backend {
            DbBackend::Postgres => (format!("${}", 2 * i + 1), format!("${}", 2 * i + 2)),
            _ => ("?".to_string(), "?".to_string()),
        };
        sql.push_str(&format!("({id}, {})", data_template.replace("{}", &data)));
    }
    sql
}

async fn insert_batch<DB>(
    pool: &sqlx::Pool<DB>,
    sql: &str,
    spec: &DatasetSpec,
    first_id: u64,
    blobs: &[Vec<u8>],
) -> Result<()>
where
    DB: sqlx::Database,
    i64: for<'t> sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'b> &'b [u8]: sqlx::Encode<'b, DB> + sqlx::Type<DB>,
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
{
    let keys = batch_keys(spec, first_id, blobs.len());
    let mut query = sqlx::query::<DB>(sqlx::AssertSqlSafe(sql));
    for (i, blob) in blobs.iter().enumerate() {
        query = match keys.get(i) {
            Some(key) => query.bind(&key[..]),
            None => query.bind((first_id + i as u64) as i64),
        };
        query = query.bind(blob.as_slice());
    }
    let mut tx = pool.begin().await?;
    query.execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

/// The same insert for a server that refuses a bound blob parameter longer than
/// `piece` bytes (Dolt 0.40 types one as BLOB, 65535 bytes at most): each blob is
/// bound in pieces and joined on the server, `(?, CONCAT(?, ?, …))`. Its bytes still go
/// over the wire once, in a prepared statement: inlined as a hex literal they went
/// twice, and Dolt spent three quarters of its CPU on that literal (a regular
/// expression over every query's text for its log, then the parser's hex scan:
/// 11-12 MB/s at 64 KiB).
pub(super) async fn append_in_pieces(
    db: &DatabaseConnection,
    spec: &DatasetSpec,
    first_id: u64,
    blobs: &[Vec<u8>],
    piece: usize,
) -> Result<()> {
    let mut sql = String::from("INSERT INTO blobs (id, data) VALUES ");
    for (i, blob) in blobs.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        let pieces = blob.len().div_ceil(piece).max(1);
        sql.push_str("(?, CONCAT(?");
        sql.push_str(&", ?".repeat(pieces - 1));
        sql.push_str("))");
    }
    let keys = batch_keys(spec, first_id, blobs.len());
    let mut query = sqlx::query::<sqlx::MySql>(sqlx::AssertSqlSafe(sql.as_str()));
    for (i, blob) in blobs.iter().enumerate() {
        query = match keys.get(i) {
            Some(key) => query.bind(&key[..]),
            None => query.bind((first_id + i as u64) as i64),
        };
        if blob.is_empty() {
            query = query.bind(&blob[..]);
        }
        for chunk in blob.chunks(piece) {
            query = query.bind(chunk);
        }
    }
    use sqlx::Executor as _;
    let mut tx = db.get_mysql_connection_pool().begin().await?;
    // Dolt 0.40 keeps each session's last prepared statement, and executing that one
    // formats its whole plan, every bound blob quoted with %q, for two trace lines it
    // does not print (go-mysql-server's analyzePreparedQuery): 66% of its CPU loading
    // 64 KiB blobs. A statement it did not prepare last is analyzed the ordinary way,
    // bindings applied afterwards. So the INSERT is prepared (sqlx caches it per
    // connection), then a throwaway statement, then the INSERT runs: 9.5 -> 31 MB/s
    // at 64 KiB, 9.1 -> 33 MB/s at 4 MiB on one connection under a 1 GiB cap (a Go
    // client with other work running, 2026-11-25; docs/servers.md has blobrace's own).
    (&mut *tx)
        .prepare(sqlx::SqlSafeStr::into_sql_str(sqlx::AssertSqlSafe(
            sql.as_str(),
        )))
        .await?;
    sqlx::query::<sqlx::MySql>("SELECT ?")
        .bind(0_i32)
        .persistent(false)
        .execute(&mut *tx)
        .await?;
    query.execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

pub(super) async fn mark_complete(db: &DatabaseConnection) -> Result<()> {
    let mut model: manifest::ActiveModel = manifest::Entity::find_by_id(1)
        .one(db)
        .await?
        .context("manifest row vanished")?
        .into();
    model.complete = Set(true);
    model.loaded_at = Set(Some(crate::now_rfc3339()));
    model.update(db).await?;
    Ok(())
}

pub(super) async fn id_range(db: &DatabaseConnection, spec: &DatasetSpec) -> Result<IdRange> {
    if spec.key.is_binary() {
        return Ok(IdRange {
            count: rows_done(db, spec, LoadOrder::Serial).await?,
            ids: None,
        });
    }
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT COUNT(*) AS n, COALESCE(MIN(id), 0) AS lo, COALESCE(MAX(id), 0) AS hi FROM blobs",
        ))
        .await?
        .context("count returned no row")?;
    Ok(IdRange {
        count: row.try_get::<i64>("", "n")? as u64,
        ids: Some((
            row.try_get::<i64>("", "lo")? as u64,
            row.try_get::<i64>("", "hi")? as u64,
        )),
    })
}
