//! SQLite store: one file per size class (`sqlite/<size>-x<rows>.sqlite`), schema
//! and manifest from the `migration` crate through SeaORM, rows through SQLite's C
//! API (`writer.rs`: a prepared insert, large blobs by incremental blob I/O), one
//! transaction per batch. Inserts go in id order and each batch
//! commits whole, so after a failed batch the table holds exactly ids 1..=MAX(id).
//!
//! Loading uses bulk settings (`LOAD_PRAGMAS`: the rollback journal in memory, no
//! fsync), and `finish` puts the file in the measured settings (WAL, synchronous
//! NORMAL) before it marks it complete: the file format measured is the one recorded.
//! WAL wrote every page twice (into the log, then checkpointed into the file). A
//! process killed mid-batch in bulk mode can leave the file inconsistent, so a resumed
//! load first runs `PRAGMA quick_check` and starts the file again if it fails.

use super::pragmas::sqlite_connect_options;
use super::pragmas::{LOAD_PRAGMAS, READ_PRAGMAS, URL_OF_THE_FILE_GIVEN_BELOW};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection, Statement};

use super::knobs::DEFAULT_PAGE_SIZE;
use crate::dataset::{DatasetSpec, DatasetState};
use crate::db::orm_store as orm;
use crate::db::store::{Churn, IdRange, Store, rows_for_batch};
use crate::disk::evict::{EvictionReport, evict_file, resident_bytes};
use crate::error::InputError;

use super::writer::Writer;

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// Rows per batch (one transaction each) at most; 4 MiB of blobs otherwise.
const MAX_ROWS_PER_INSERT: u64 = 8000;
const BATCH_BYTES: u64 = 4 << 20;

/// SQLite's own words for a file it cannot read as a database although its header
/// says it is one (SQLITE_CORRUPT, SQLITE_NOTADB).
const TORN_MESSAGES: [&str; 2] = ["database disk image is malformed", "file is not a database"];

/// `<file>-journal`: SQLite's rollback journal, hot when a process stopped mid-transaction.
fn journal_of(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf().into_os_string();
    p.push("-journal");
    p.into()
}

fn is_torn(e: &anyhow::Error) -> bool {
    let text = format!("{e:#}");
    TORN_MESSAGES.iter().any(|m| text.contains(m))
}

/// The SQLite message that made the file torn, without the wrapping context.
fn torn_reason(e: &anyhow::Error) -> &'static str {
    let text = format!("{e:#}");
    TORN_MESSAGES
        .iter()
        .find(|m| text.contains(**m))
        .copied()
        .unwrap_or("unreadable")
}

/// Whose an existing SQLite file is (`SqliteStore::schema_of`).
enum Schema {
    /// It has blobrace's manifest table.
    Blobrace,
    /// Only blobrace's tables, empty, no manifest yet: a load killed while creating them.
    Begun,
    /// Anything else: never written to.
    Foreign,
}

pub struct SqliteStore {
    spec: DatasetSpec,
    /// The file's page size: its layout, part of its name unless SQLite's default.
    page_size: u32,
    path: PathBuf,
    db: Option<DatabaseConnection>,
    /// The loader's rows go through SQLite's C API (`Writer`), between `begin` and
    /// `finish`; the schema and the manifest through SeaORM.
    writer: Option<Writer>,
}

impl SqliteStore {
    pub fn new(data_dir: &Path, spec: DatasetSpec, page_size: u32) -> Self {
        let layout = if page_size == DEFAULT_PAGE_SIZE {
            String::new()
        } else {
            format!("-p{page_size}")
        };
        let path = data_dir
            .join("sqlite")
            .join(format!("{}{layout}.sqlite", spec.stem()));
        Self {
            spec,
            page_size,
            path,
            db: None,
            writer: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Refuse files that are not SQLite before SQLite gets to them.
    fn check_header(&self) -> Result<()> {
        let mut header = [0u8; 16];
        let mut file = std::fs::File::open(&self.path)
            .with_context(|| format!("cannot open {}", self.path.display()))?;
        let n = std::io::Read::read(&mut file, &mut header)?;
        if n > 0 && (n < 16 || &header != SQLITE_MAGIC) {
            return Err(InputError::ForeignFile {
                path: self.path.clone(),
                why: "it is not an SQLite database (wrong file header)".into(),
            }
            .into());
        }
        Ok(())
    }

    async fn connect(&mut self, create: bool) -> Result<&DatabaseConnection> {
        if self.db.is_none() {
            if create {
                let dir = self.path.parent().expect("store path has a parent");
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            let db = Database::connect(sqlite_connect_options(
                &self.path,
                create,
                self.page_size,
                None,
            ))
            .await
            .with_context(|| super::cannot_open(&self.path))?;
            self.db = Some(db);
        }
        Ok(self.db.as_ref().expect("just connected"))
    }

    /// One connection to an existing file with no journal mode or other setting
    /// (either would rewrite its header): read-only, or read-write only so that SQLite
    /// may roll a hot journal back (`roll_back_hot_journal`).
    async fn open_plain(path: &Path, read_only: bool) -> Result<DatabaseConnection> {
        let file = path.to_path_buf();
        let mut opts = ConnectOptions::new(URL_OF_THE_FILE_GIVEN_BELOW);
        opts.sqlx_logging(false)
            .max_connections(1)
            .min_connections(1)
            .map_sqlx_sqlite_opts(move |o| {
                o.filename(&file).read_only(read_only).foreign_keys(false)
            });
        Database::connect(opts)
            .await
            .with_context(|| super::cannot_open(path))
    }

    /// A process stopped inside a transaction of the rollback-journal mode (creating the
    /// file, or switching its journal mode between the loader's and the readers') leaves
    /// a hot `-journal`: the file may hold uncommitted pages until SQLite copies the
    /// journal's back, and a read-only connection refuses to open it
    /// (SQLITE_READONLY_ROLLBACK). Any read-write connection rolls it back on its first
    /// read, which is what every SQLite client does with any file: it restores the last
    /// commit and changes no committed byte, so it is safe on a file not yet known to be
    /// blobrace's. No journal mode is set here (that would rewrite the header).
    async fn roll_back_hot_journal(path: &Path) -> Result<()> {
        if !journal_of(path).exists() {
            return Ok(());
        }
        let db = Self::open_plain(path, false).await?;
        let read = db
            .execute_unprepared("SELECT COUNT(*) FROM sqlite_master")
            .await
            .with_context(|| {
                format!(
                    "cannot roll back the journal left beside {} by a stopped load",
                    path.display()
                )
            });
        db.close().await?;
        read.map(|_| ())
    }

    /// What the file holds. The schema is created one table at a time (`blobs`, then
    /// `manifest`, then the migration's record), each its own statement: a load
    /// killed in between leaves `blobs` alone. A file holding nothing but blobrace's
    /// own empty tables is that begun load; any other table, or any row without a
    /// manifest, is someone else's.
    async fn schema_in(db: &DatabaseConnection) -> Result<Schema> {
        if Self::table_exists(db, "manifest").await? {
            return Ok(Schema::Blobrace);
        }
        let count = |sql: &'static str| async move {
            Ok::<i64, anyhow::Error>(
                db.query_one_raw(Statement::from_string(db.get_database_backend(), sql))
                    .await?
                    .map(|r| r.try_get::<i64>("", "n"))
                    .transpose()?
                    .unwrap_or(0),
            )
        };
        let others = count(
            "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' \
             AND name NOT IN ('seaql_migrations', 'blobs')",
        )
        .await?;
        let rows = if Self::table_exists(db, "blobs").await? {
            count("SELECT EXISTS (SELECT 1 FROM blobs) AS n").await?
        } else {
            0
        };
        Ok(if others > 0 || rows > 0 {
            Schema::Foreign
        } else {
            Schema::Begun
        })
    }

    async fn table_exists(db: &DatabaseConnection, name: &str) -> Result<bool> {
        let row = db
            .query_one_raw(Statement::from_sql_and_values(
                db.get_database_backend(),
                "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?",
                [name.into()],
            ))
            .await?
            .context("sqlite_master count returned no row")?;
        Ok(row.try_get::<i64>("", "n")? > 0)
    }

    /// A partial load resumed: a process killed mid-batch under the bulk settings
    /// (no journal on disk) may have left pages of a half-written batch. If SQLite's
    /// check finds the file inconsistent, remove it so the load starts again: only a
    /// file with no blobrace manifest or an incomplete one gets here (`state` refuses
    /// foreign files first).
    async fn restart_if_inconsistent(&mut self) -> Result<()> {
        let path = self.path.clone();
        let verdict = match self.connect(false).await {
            Err(e) => format!("{e:#}"),
            Ok(db) => match db
                .query_one_raw(Statement::from_string(
                    db.get_database_backend(),
                    "PRAGMA quick_check(1)",
                ))
                .await
            {
                Ok(Some(row)) => row.try_get::<String>("", "quick_check").unwrap_or_default(),
                Ok(None) => String::new(),
                Err(e) => format!("{e:#}"),
            },
        };
        if verdict != "ok" {
            say!(
                "note: {}: an interrupted load left it inconsistent (quick_check: {verdict}); loading it again from the start",
                path.display()
            );
            self.remove().await?;
        }
        Ok(())
    }

    /// Say once that the file is torn and what clears it; it counts as a load begun.
    fn torn(&mut self, e: &anyhow::Error) -> DatasetState {
        self.db = None;
        say!(
            "note: {}: SQLite cannot read it ({}): a load killed while writing it leaves it so; `blobrace load` loads it again from the start, `blobrace drop` removes it",
            self.path.display(),
            torn_reason(e)
        );
        DatasetState::Partial { rows_done: 0 }
    }

    /// The database file and its -wal, -shm and -journal, listed whether or not they
    /// exist: SQLite deletes the latter at any moment, so each caller takes a missing
    /// one as nothing.
    fn files(&self) -> Vec<PathBuf> {
        let mut files = vec![self.path.clone()];
        for suffix in ["-wal", "-shm"] {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            files.push(p.into());
        }
        files.push(journal_of(&self.path));
        files
    }
}

#[async_trait::async_trait(?Send)]
impl Store for SqliteStore {
    fn spec(&self) -> &DatasetSpec {
        &self.spec
    }

    fn location(&self) -> &Path {
        &self.path
    }

    /// The dataset is one file.
    fn own_files(&mut self, _: usize, _: u64) -> Result<Vec<PathBuf>, String> {
        Ok(vec![self.path.clone()])
    }

    async fn state(&mut self) -> Result<DatasetState> {
        if !self.path.exists() {
            return Ok(DatasetState::Absent);
        }
        self.check_header()?;
        let spec = self.spec;
        let path = self.path.clone();
        // A file with SQLite's header that SQLite cannot read is what a load killed
        // mid-batch under the bulk settings leaves (no journal on disk to roll back):
        // its manifest is inside it, so it cannot say whether it was complete. It is
        // a partial load, started again by `begin` and removable by `drop`, never a
        // dead end. Whose file it is is asked on a read-only connection: the loader's
        // settings (WAL) would rewrite the header of a file that is not blobrace's.
        if let Err(e) = Self::roll_back_hot_journal(&path).await {
            if is_torn(&e) {
                return Ok(self.torn(&e));
            }
            return Err(e);
        }
        let inspect = match Self::open_plain(&path, true).await {
            Ok(db) => db,
            Err(e) if is_torn(&e) => return Ok(self.torn(&e)),
            Err(e) => return Err(e),
        };
        let schema = Self::schema_in(&inspect).await;
        inspect.close().await?;
        match schema {
            Ok(Schema::Blobrace) => {}
            Ok(Schema::Begun) => return Ok(DatasetState::Partial { rows_done: 0 }),
            Ok(Schema::Foreign) => {
                return Err(InputError::ForeignFile {
                    path,
                    why: "it is an SQLite database without a blobrace manifest table".into(),
                }
                .into());
            }
            Err(e) if is_torn(&e) => return Ok(self.torn(&e)),
            Err(e) => {
                return Err(InputError::ForeignFile {
                    path,
                    why: format!("SQLite cannot read it: {e:#}"),
                }
                .into());
            }
        }
        let db = match self.connect(false).await {
            Ok(db) => db,
            Err(e) if is_torn(&e) => return Ok(self.torn(&e)),
            Err(e) => return Err(e),
        };
        // One writer, batches in id order.
        orm::state(db, &spec, &path, orm::LoadOrder::Serial).await
    }

    async fn begin(&mut self) -> Result<u64> {
        if self.path.exists() {
            self.check_header()?;
            self.restart_if_inconsistent().await?;
        }
        let spec = self.spec;
        let path = self.path.clone();
        let db = self.connect(true).await?;
        for pragma in LOAD_PRAGMAS {
            db.execute_unprepared(pragma).await?;
        }
        let rows_done = orm::begin(
            db,
            &spec,
            &path,
            migration::DataColumn::Blob,
            orm::LoadOrder::Serial,
        )
        .await?;
        self.writer = Some(Writer::open(&path, spec)?);
        Ok(rows_done)
    }

    fn rows_per_batch(&self) -> usize {
        rows_for_batch(&self.spec, BATCH_BYTES, MAX_ROWS_PER_INSERT)
    }

    async fn append(&mut self, first_id: u64, blobs: &mut Vec<Vec<u8>>) -> Result<()> {
        let writer = self.writer.as_mut().context("append before begin")?;
        writer.append(first_id, blobs)
    }

    async fn finish(&mut self) -> Result<()> {
        // Leaving the bulk journal mode for WAL needs the only open connection.
        drop(self.writer.take());
        let db = self.db.as_ref().context("finish before begin")?;
        for pragma in READ_PRAGMAS {
            db.execute_unprepared(pragma).await?;
        }
        let mode = db
            .query_one_raw(Statement::from_string(
                db.get_database_backend(),
                "PRAGMA journal_mode",
            ))
            .await?
            .context("PRAGMA journal_mode returned no row")?
            .try_get::<String>("", "journal_mode")?;
        anyhow::ensure!(
            mode == "wal",
            "{}: could not put the file back in WAL mode (journal_mode is {mode})",
            self.path.display()
        );
        orm::mark_complete(db).await?;
        // Fold the WAL into the main file: the dataset is then one self-contained file.
        db.execute_unprepared("PRAGMA wal_checkpoint(TRUNCATE)")
            .await?;
        // Close now: a pool left open keeps its worker thread and that thread's
        // malloc arena, which the next load's peak RSS would carry.
        self.db.take().expect("connected").close().await?;
        // Loaded without fsync: make the complete file durable before saying so.
        std::fs::File::open(&self.path)
            .and_then(|f| f.sync_all())
            .with_context(|| format!("cannot sync {}", self.path.display()))?;
        Ok(())
    }

    fn estimated_disk_bytes(&self, rows: u64) -> u64 {
        let page = u64::from(self.page_size);
        // A table leaf page keeps ~page - 35 usable bytes (4061 at 4 KiB); a row whose
        // payload fits stays local (several rows a page), larger payloads spill into
        // overflow pages holding page - 4 bytes each. Cell headers: ~12 bytes a row.
        let per_row = |size: u64| {
            if size + 12 <= page - 96 {
                page as f64 / ((page - 35) / (size + 12)) as f64
            } else {
                (size.div_ceil(page - 4) + 1) as f64 * page as f64 * 1.01
            }
        };
        // A keyed row also carries its 16-byte key, and the key's index holds it again
        // with the rowid: ~64 bytes a row with the index's free space (random keys
        // leave its pages part-filled).
        let key_bytes = if self.spec.key.is_binary() { 64 } else { 0 };
        self.spec.sum_over_rows(rows, |size| per_row(size) as u64) + key_bytes * rows + (1 << 20)
    }

    async fn evict(&mut self) -> Result<EvictionReport> {
        // Close our connections first so SQLite holds no pages of its own.
        drop(self.writer.take());
        if let Some(db) = self.db.take() {
            db.close().await?;
        }
        let started = Instant::now();
        let mut report = EvictionReport {
            method: "fdatasync + posix_fadvise(DONTNEED)".into(),
            ..Default::default()
        };
        let mut resident = 0;
        for file in self.files() {
            // The last connection to close (perhaps an engine's pool shutting down in
            // the background) deletes the -wal and -shm files: gone is evicted too.
            if !file.exists() {
                continue;
            }
            match evict_file(&file) {
                Ok(bytes) => report.bytes += bytes,
                Err(_) if !file.exists() => continue,
                Err(e) => return Err(e),
            }
            report.files += 1;
            resident +=
                resident_bytes(&file).or_else(|e| if file.exists() { Err(e) } else { Ok(0) })?;
        }
        report.resident_after_bytes = Some(resident);
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    async fn id_range(&mut self) -> Result<IdRange> {
        let spec = self.spec;
        let db = self.connect(false).await?;
        orm::id_range(db, &spec).await
    }

    async fn read_chunk(&mut self, at: f64, bytes: u64) -> Result<u64> {
        crate::db::store::read_file_chunk(&self.path, at, bytes)
    }

    /// The file and its WAL (checkpointed into the file when the load finished).
    async fn disk_bytes(&mut self) -> Result<Option<u64>> {
        let mut bytes = 0;
        for file in self.files() {
            match std::fs::metadata(&file) {
                Ok(m) => bytes += m.len(),
                // A -wal or -shm removed since it was listed holds nothing.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot stat {}", file.display()));
                }
            }
        }
        Ok(Some(bytes))
    }

    async fn remove(&mut self) -> Result<()> {
        drop(self.writer.take());
        if let Some(db) = self.db.take() {
            db.close().await?;
        }
        // A connection that just failed to read a torn file closes on sqlx's worker
        // thread and may take its -wal and -shm with it while this loop runs: a file
        // already gone is removed.
        for file in self.files() {
            crate::db::store::remove_if_present(&file)?;
        }
        Ok(())
    }

    fn churner(&mut self) -> Option<&mut dyn Churn> {
        Some(self)
    }
}

#[async_trait::async_trait(?Send)]
impl Churn for SqliteStore {
    async fn churn_applied(&mut self) -> Result<crate::dataset::churn::ChurnProgress> {
        let db = self.connect(false).await?;
        crate::db::orm_churn::applied(db).await
    }

    /// SQLite runs no cleanup by itself (auto_vacuum is off, SQLite's default): freed
    /// pages stay on its freelist until a VACUUM (`--maintenance full`).
    async fn churn_maintenance(&mut self, after: bool) -> Result<Option<String>> {
        use crate::dataset::churn::Maintenance;
        let maintenance = self.spec.churn.map(|c| c.maintenance).unwrap_or_default();
        match (maintenance, after) {
            (Maintenance::None, false) => Ok(Some(
                "nothing to turn off: SQLite runs no cleanup by itself (auto_vacuum off)".into(),
            )),
            (Maintenance::Full, true) => {
                let path = self.path.display().to_string();
                let db = self.connect(false).await?;
                if crate::db::orm_churn::applied(db).await?.compacted {
                    return Ok(Some("compacted before this run".into()));
                }
                let started = Instant::now();
                db.execute_unprepared("VACUUM")
                    .await
                    .with_context(|| format!("VACUUM of {path}"))?;
                crate::db::orm_churn::mark_compacted(db).await?;
                Ok(Some(format!(
                    "`VACUUM` in {:.1} s",
                    started.elapsed().as_secs_f64()
                )))
            }
            _ => Ok(None),
        }
    }

    async fn cleanup_facts(&mut self) -> Result<Vec<(String, i64)>> {
        let db = self.connect(false).await?;
        let mut facts = Vec::new();
        for (name, pragma) in [
            ("pages", "page_count"),
            ("freelist pages", "freelist_count"),
        ] {
            let row = db
                .query_one_raw(Statement::from_string(
                    db.get_database_backend(),
                    format!("PRAGMA {pragma}"),
                ))
                .await?
                .with_context(|| format!("PRAGMA {pragma} returned no row"))?;
            facts.push((name.to_string(), row.try_get::<i64>("", pragma)?));
        }
        Ok(facts)
    }

    /// Through sqlx in the readers' settings (WAL, synchronous NORMAL): an application's
    /// write path, not the loader's bulk one.
    async fn churn(&mut self, ids: &[u64], blobs: &mut Vec<Vec<u8>>, applied: u64) -> Result<()> {
        let spec = self.spec;
        let db = self.connect(false).await?;
        crate::db::orm_churn::change(db, &spec, ids, blobs, applied, None).await
    }

    /// The WAL folded into the file, as after a load; freed pages stay on SQLite's
    /// freelist (no VACUUM: that is maintenance).
    async fn churn_finish(&mut self) -> Result<()> {
        if let Some(db) = self.db.take() {
            db.execute_unprepared("PRAGMA wal_checkpoint(TRUNCATE)")
                .await?;
            db.close().await?;
        }
        Ok(())
    }
}
