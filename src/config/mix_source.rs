//! `--size-mix` sampled from the user's own table: the sizes of one column's values,
//! nothing else. `sqlite:FILE#TABLE.COLUMN`, `postgres://…/DB#[SCHEMA.]TABLE.COLUMN`,
//! `mysql://…/DB#TABLE.COLUMN` (MySQL, MariaDB, Dolt). At most `SAMPLE_ROWS` values,
//! drawn with the database's own sampling where it has one:
//!
//! - PostgreSQL: `TABLESAMPLE BERNOULLI` at the share of `pg_class.reltuples` that gives
//!   about `SAMPLE_ROWS`; `octet_length` of a TOASTed value reads its header, not its bytes;
//! - MySQL-wire servers have no table sampling: `RAND() <` that share of
//!   `information_schema.TABLES.TABLE_ROWS` (the server reads each value to measure it);
//! - SQLite: `abs(random()) %` the row count; `octet_length` of a blob reads its record
//!   header, not its overflow pages.
//!
//! The sizes become a mix like a directory's (`mix::from_sampled_sizes`); the run saves its
//! canonical form, so the mix is run again without the source (`file:size-mix.txt`). The
//! source named in lines and results has no password (`redact_url`).
//!
//! Here in the config layer, not in `mix/`: it connects through the databases' drivers,
//! and `mix/` sits below every store.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use sea_orm::sqlx::{self, AssertSqlSafe, ConnectOptions, Connection};

use crate::dataset::mix::{SAMPLE_ROWS, SizeMix, bad, from_sampled_sizes};
use crate::db::server::redact_url;
use crate::error::InputError;

/// How long connecting and sampling may take before the flag is refused.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Whether `text` names a table to sample (then `sample` reads it).
pub fn is_table(text: &str) -> bool {
    let text = text.trim();
    [
        "sqlite:",
        "postgres://",
        "postgresql://",
        "mysql://",
        "mariadb://",
    ]
    .iter()
    .any(|p| text.starts_with(p))
}

/// The mix of the column's value sizes, or one line saying why not.
pub fn sample(text: &str) -> Result<SizeMix, InputError> {
    let text = text.trim();
    let (source, table) = text.rsplit_once('#').ok_or_else(|| {
        bad(
            &redact_url(text),
            "name the table and column after '#': sqlite:FILE#TABLE.COLUMN, postgres://USER@HOST/DB#[SCHEMA.]TABLE.COLUMN, mysql://USER@HOST/DB#TABLE.COLUMN",
        )
    })?;
    let shown = format!("{}#{table}", redact_url(source));
    let column = Column::parse(table).map_err(|why| bad(&shown, why))?;
    let owned = (source.to_string(), column);
    // A thread of its own with its own runtime: clap calls this from plain code or
    // from inside a runtime (the bench's), and a runtime cannot block inside another.
    let sizes = std::thread::spawn(move || -> Result<Vec<u64>> {
        let (source, column) = owned;
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(async {
                tokio::time::timeout(TIMEOUT, read_sizes(&source, &column))
                    .await
                    .map_err(|_| anyhow!("no answer within {} s", TIMEOUT.as_secs()))?
            })
    })
    .join()
    .map_err(|_| bad(&shown, "the sampling thread failed"))?
    .map_err(|e| {
        bad(
            &shown,
            format!("{:#}", e).replace(source, &redact_url(source)),
        )
    })?;
    if sizes.is_empty() {
        return Err(bad(
            &shown,
            format!(
                "{} has no row with a value in {}",
                column_table(table),
                column_name(table)
            ),
        ));
    }
    from_sampled_sizes(&sizes, &shown)
}

fn column_table(spec: &str) -> &str {
    spec.rsplit_once('.').map_or(spec, |(t, _)| t)
}

fn column_name(spec: &str) -> &str {
    spec.rsplit_once('.').map_or(spec, |(_, c)| c)
}

/// `[schema.]table.column`, each part a plain name (quoted when sent).
struct Column {
    table: Vec<String>,
    column: String,
}

impl Column {
    fn parse(spec: &str) -> Result<Column, String> {
        let parts: Vec<&str> = spec.split('.').collect();
        if parts.len() < 2 || parts.len() > 3 {
            return Err(format!(
                "'{spec}' is not TABLE.COLUMN (or SCHEMA.TABLE.COLUMN for PostgreSQL)"
            ));
        }
        if let Some(p) = parts.iter().find(|p| {
            p.is_empty()
                || !p
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '-')
        }) {
            return Err(format!(
                "'{p}' in '{spec}' is not a plain name (letters, digits, _, $ and -)"
            ));
        }
        let (column, table) = parts.split_last().expect("two parts or more");
        Ok(Column {
            table: table.iter().map(|s| s.to_string()).collect(),
            column: column.to_string(),
        })
    }

    /// The table and column quoted with `q` (`"` or `` ` ``).
    fn quoted(&self, q: char) -> (String, String) {
        let one = |s: &str| format!("{q}{s}{q}");
        let table: Vec<String> = self.table.iter().map(|s| one(s)).collect();
        (table.join("."), one(&self.column))
    }
}

/// The share of `rows` that samples about `SAMPLE_ROWS` of them, in percent (100 where
/// the count is unknown or small).
fn percent_for(rows: f64) -> f64 {
    if rows > SAMPLE_ROWS as f64 {
        (100.0 * SAMPLE_ROWS as f64 / rows).max(0.0001)
    } else {
        100.0
    }
}

async fn read_sizes(source: &str, column: &Column) -> Result<Vec<u64>> {
    let sizes: Vec<i64> = if let Some(path) = source.strip_prefix("sqlite:") {
        sqlite(Path::new(path), column).await?
    } else if source.starts_with("postgres") {
        postgres(source, column).await?
    } else {
        mysql(source, column).await?
    };
    Ok(sizes.into_iter().map(|s| s.max(0) as u64).collect())
}

async fn sqlite(path: &Path, column: &Column) -> Result<Vec<i64>> {
    if !path.is_file() {
        bail!("{} is not a file", path.display());
    }
    if column.table.len() != 1 {
        bail!("SQLite has no schemas here: write TABLE.COLUMN");
    }
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .connect()
        .await
        .with_context(|| format!("cannot open {} with SQLite", path.display()))?;
    // Backquotes: SQLite takes a double-quoted name that is no column for a string
    // (every "size" would then be the name's length).
    let (table, col) = column.quoted('`');
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info(?1)")
        .bind(&column.table[0])
        .fetch_all(&mut conn)
        .await
        .with_context(|| format!("cannot read the columns of {table}"))?;
    if names.is_empty() {
        bail!("there is no table {table} in {}", path.display());
    }
    if !names.contains(&column.column) {
        bail!(
            "there is no column {col} in {table} (its columns: {})",
            names.join(", ")
        );
    }
    let rows: i64 = sqlx::query_scalar(AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
        .fetch_one(&mut conn)
        .await
        .with_context(|| format!("cannot count the rows of {table}"))?;
    let every = (rows as u64).div_ceil(SAMPLE_ROWS as u64).max(1) as i64;
    let sql = format!(
        "SELECT octet_length({col}) FROM {table} WHERE {col} IS NOT NULL AND abs(random()) % {every} = 0 LIMIT {SAMPLE_ROWS}"
    );
    let sizes = sqlx::query_scalar(AssertSqlSafe(sql))
        .fetch_all(&mut conn)
        .await
        .with_context(|| format!("cannot read the sizes of {table}.{col}"))?;
    conn.close().await.ok();
    Ok(sizes)
}

async fn postgres(url: &str, column: &Column) -> Result<Vec<i64>> {
    let mut conn = sqlx::postgres::PgConnection::connect(url)
        .await
        .context("cannot connect")?;
    let (table, col) = column.quoted('"');
    let reltuples: Option<f64> =
        sqlx::query_scalar("SELECT reltuples::float8 FROM pg_class WHERE oid = to_regclass($1)")
            .bind(&table)
            .fetch_optional(&mut conn)
            .await
            .with_context(|| format!("cannot look up {table}"))?;
    let Some(rows) = reltuples else {
        bail!("there is no table {table} (SCHEMA.TABLE.COLUMN names another schema)");
    };
    // reltuples is -1 until the table is first analyzed: then every row.
    let percent = percent_for(rows);
    let sample = if percent < 100.0 {
        format!(" TABLESAMPLE BERNOULLI ({percent})")
    } else {
        String::new()
    };
    let sql = format!(
        "SELECT octet_length({col})::int8 FROM {table}{sample} WHERE {col} IS NOT NULL LIMIT {SAMPLE_ROWS}"
    );
    let sizes = sqlx::query_scalar(AssertSqlSafe(sql))
        .fetch_all(&mut conn)
        .await
        .with_context(|| format!("cannot read the sizes of {table}.{col}"))?;
    conn.close().await.ok();
    Ok(sizes)
}

async fn mysql(url: &str, column: &Column) -> Result<Vec<i64>> {
    // MariaDB's scheme is MySQL's to the driver.
    let url = url.replacen("mariadb://", "mysql://", 1);
    let mut conn = sqlx::mysql::MySqlConnection::connect(&url)
        .await
        .context("cannot connect")?;
    if column.table.len() != 1 {
        bail!("name the database in the URL (mysql://USER@HOST/DB) and write TABLE.COLUMN");
    }
    let name = &column.table[0];
    let rows: Option<i64> = sqlx::query_scalar(
        "SELECT CAST(TABLE_ROWS AS SIGNED) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
    )
    .bind(name)
    .fetch_optional(&mut conn)
    .await
    .with_context(|| format!("cannot look up table {name}"))?
    .flatten();
    let Some(rows) = rows else {
        bail!("there is no table {name} in the URL's database");
    };
    let (table, col) = column.quoted('`');
    let share = percent_for(rows as f64) / 100.0;
    let sample = if share < 1.0 {
        format!(" AND RAND() < {share}")
    } else {
        String::new()
    };
    let sql = format!(
        "SELECT CAST(LENGTH({col}) AS SIGNED) FROM {table} WHERE {col} IS NOT NULL{sample} LIMIT {SAMPLE_ROWS}"
    );
    let sizes = sqlx::query_scalar(AssertSqlSafe(sql))
        .fetch_all(&mut conn)
        .await
        .with_context(|| format!("cannot read the sizes of {table}.{col}"))?;
    conn.close().await.ok();
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_and_column_are_plain_names_and_quoted_when_sent() {
        let c = Column::parse("blobs_x.blobs.data").unwrap();
        assert_eq!(
            c.quoted('"'),
            ("\"blobs_x\".\"blobs\"".into(), "\"data\"".into())
        );
        for bad in ["data", "a.b.c.d", "blobs.", "t.da\"ta", "t;drop.x"] {
            assert!(Column::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_large_table_is_sampled_to_about_the_rows_kept() {
        assert_eq!(percent_for(-1.0), 100.0);
        assert_eq!(percent_for(1000.0), 100.0);
        let p = percent_for(20_000_000.0);
        assert!((p - 1.0).abs() < 1e-9, "{p}");
    }

    #[test]
    fn a_source_without_a_column_or_that_is_not_there_is_one_line_without_its_password() {
        let err = sample("postgres://me:s3cret@127.0.0.1:1/db")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("after '#'") && !err.contains("s3cret"),
            "{err}"
        );
        let err = sample("sqlite:/nonexistent.sqlite#blobs.data")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not a file"), "{err}");
        // Nothing answers on port 1: refused at once, the password not said.
        let err = sample("postgres://me:s3cret@127.0.0.1:1/db#t.c")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cannot connect") && !err.contains("s3cret"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
