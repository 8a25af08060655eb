//! The store of every server database (every `ServerDb` in `DATABASES`): the server process does
//! the writing, so the pages it caches are charged to its own capped container.
//! Each size class gets its own namespace (a PostgreSQL schema, a MariaDB database)
//! named `blobs_<size>_x<rows>`, holding the migration's `blobs` and `manifest`
//! tables. What differs between servers is asked of their descriptor.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use tokio::task::JoinSet;

use super::place::Places;
use super::{BulkLoad, Server, SqlServer, redact_url};
use crate::dataset::{DatasetSpec, DatasetState};
use crate::db::knobs::Knobs;
use crate::db::orm_store as orm;
use crate::db::store::{Churn, IdRange, Store, rows_for_batch};
use crate::disk::evict::EvictionReport;
use crate::error::InputError;

const BATCH_BYTES: u64 = 4 << 20;
/// PostgreSQL binds at most 65535 parameters per statement (two per row here).
const MAX_ROWS_PER_INSERT: u64 = 8000;
/// Rows per batch when each row creates a large object (see `rows_per_batch`).
const MAX_LARGE_OBJECTS_PER_BATCH: u64 = 512;

pub struct ServerStore {
    server: Server,
    /// Its SQL side: how a dataset is laid out, written and dropped.
    sql: &'static dyn SqlServer,
    spec: DatasetSpec,
    url: Option<String>,
    /// Where the run found the server (`place`): its compose container, or remote.
    places: Places,
    namespace: String,
    options: Knobs,
    location: PathBuf,
    db: Option<DatabaseConnection>,
    /// Batches being written (`ServerDb::load_connections` > 1): each on its own
    /// connection of `db`'s pool; errors surface at the next append or at finish.
    in_flight: JoinSet<Result<()>>,
    /// Settings held for a prefill (`prefill::hold`), to put back after it.
    prefill_held: super::prefill::HeldSettings,
    /// The prefill's connections (`read_chunks`), closed at its end.
    prefill_pool: Option<DatabaseConnection>,
}

impl ServerStore {
    pub fn new(
        server: Server,
        url: Option<&str>,
        spec: DatasetSpec,
        options: Knobs,
        places: Places,
    ) -> Self {
        let sql = server
            .sql()
            .expect("an SQL server's store is opened on an SQL server");
        let namespace = server.namespace(&spec, &options);
        let location = PathBuf::from(format!(
            "{}#{namespace}",
            url.map(redact_url)
                .unwrap_or_else(|| format!("{}://(no URL)", server.name()))
        ));
        Self {
            server,
            sql,
            spec,
            url: url.map(str::to_string),
            places,
            namespace,
            options,
            location,
            db: None,
            in_flight: JoinSet::new(),
            prefill_held: Vec::new(),
            prefill_pool: None,
        }
    }

    /// Batches in flight at once: the server's choice for integer ids, one for keys.
    fn parallel_batches(&self) -> usize {
        if self.spec.key.is_binary() {
            1
        } else {
            self.sql.load_connections(&self.options).max(1)
        }
    }

    /// Whether a stopped load of this store can leave a gap in its ids.
    fn load_order(&self) -> orm::LoadOrder {
        if self.parallel_batches() > 1 {
            orm::LoadOrder::Parallel
        } else {
            orm::LoadOrder::Serial
        }
    }

    /// Wait for batches in flight until at most `left` remain; the first error wins
    /// (the rest are dropped: their transactions roll back).
    async fn settle(&mut self, left: usize) -> Result<()> {
        while self.in_flight.len() > left {
            match self.in_flight.join_next().await {
                Some(done) => done.context("a loading task failed")??,
                None => break,
            }
        }
        Ok(())
    }

    /// The prefill's read of the rows about `bytes` from fraction `at` of the dataset.
    fn chunk_sql(&self, at: f64, bytes: u64) -> String {
        let ids = crate::db::store::chunk_ids(&self.spec, at, bytes);
        let spec = &self.spec;
        match spec
            .key
            .key_bounds(spec.seed, spec.rows, *ids.start(), *ids.end())
        {
            Some((first, last)) => self.sql.read_range_sql(
                &self.sql.binary_literal(&first),
                &self.sql.binary_literal(&last),
                &self.options,
            ),
            None => self.sql.read_range_sql(
                &ids.start().to_string(),
                &ids.end().to_string(),
                &self.options,
            ),
        }
    }

    async fn admin(&self) -> Result<DatabaseConnection> {
        let url = self.server.require_url(self.url.as_deref())?;
        self.server.connect(&url, None).await
    }

    async fn count(db: &DatabaseConnection, sql: String) -> Result<i64> {
        let row = db
            .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
            .await?
            .context("count returned no row")?;
        Ok(row.try_get::<i64>("", "n")?)
    }

    async fn namespace_exists(&self, admin: &DatabaseConnection) -> Result<bool> {
        let sql = format!(
            "SELECT COUNT(*) AS n FROM information_schema.schemata WHERE schema_name = '{}'",
            self.namespace
        );
        Ok(Self::count(admin, sql).await? > 0)
    }

    async fn connect_namespace(&mut self) -> Result<&DatabaseConnection> {
        if self.db.is_none() {
            let url = self.server.require_url(self.url.as_deref())?;
            self.db = Some(self.server.connect(&url, Some(&self.namespace)).await?);
        }
        Ok(self.db.as_ref().expect("just connected"))
    }

    /// The server's statements after a load (`Loading::after_load_sql`: Dolt's commit,
    /// PostgreSQL's VACUUM ANALYZE). Where the server says what is still owed and
    /// nothing is, they are skipped: a Dolt load stopped by SIGTERM 1.2 s in left its
    /// dataset committed, and Dolt refuses a second commit ("nothing to commit").
    async fn after_load(&self, db: &DatabaseConnection) -> Result<()> {
        if let Some(sql) = self.sql.after_load_owed_sql()
            && Self::count(db, sql).await? == 0
        {
            return Ok(());
        }
        self.run_after_load_sql(db).await
    }

    /// `after_load_sql`'s statements, unconditionally.
    async fn run_after_load_sql(&self, db: &DatabaseConnection) -> Result<()> {
        for sql in self.sql.after_load_sql(&self.options) {
            db.execute_unprepared(&sql)
                .await
                .with_context(|| format!("{}: `{sql}` after loading", self.server.name()))?;
        }
        Ok(())
    }

    /// A blob must fit the server's packet limit, if it has one: checked before loading.
    async fn check_packet_limit(&self, admin: &DatabaseConnection) -> Result<()> {
        let Some(limit) = self.sql.packet_limit() else {
            return Ok(());
        };
        let row = admin
            .query_one_raw(Statement::from_string(
                admin.get_database_backend(),
                limit.query,
            ))
            .await?
            .with_context(|| format!("{} returned nothing", limit.what))?;
        let bytes = row.try_get::<i64>("", "n")? as u64;
        let needed = self.spec.size.bytes() + (1 << 20);
        if bytes < needed {
            return Err(InputError::Value {
                what: limit.what,
                input: crate::size::format_bytes(bytes),
                why: format!(
                    "a {} blob needs at least {}: {}",
                    self.spec.size,
                    crate::size::format_bytes(needed),
                    limit.fix
                ),
            }
            .into());
        }
        Ok(())
    }
}

#[async_trait::async_trait(?Send)]
impl Store for ServerStore {
    fn spec(&self) -> &DatasetSpec {
        &self.spec
    }

    fn location(&self) -> &Path {
        &self.location
    }

    async fn state(&mut self) -> Result<DatasetState> {
        let admin = self.admin().await?;
        let exists = self.namespace_exists(&admin).await?;
        admin.close().await?;
        if !exists {
            return Ok(DatasetState::Absent);
        }
        let sql = format!(
            "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = '{}' AND table_name = 'manifest'",
            self.namespace
        );
        let spec = self.spec;
        let location = self.location.clone();
        let order = self.load_order();
        let db = self.connect_namespace().await?;
        if Self::count(db, sql).await? == 0 {
            return Ok(DatasetState::Partial { rows_done: 0 });
        }
        orm::state(db, &spec, &location, order).await
    }

    async fn begin(&mut self) -> Result<u64> {
        let admin = self.admin().await?;
        self.check_packet_limit(&admin).await?;
        admin
            .execute_unprepared(&self.sql.create_namespace_sql(&self.namespace))
            .await?;
        admin.close().await?;
        let spec = self.spec;
        let location = self.location.clone();
        let setup = self.sql.table_setup_sql(&self.options, spec.content);
        let parallel = self.parallel_batches();
        if parallel > 1 && self.db.is_none() {
            let url = self.server.require_url(self.url.as_deref())?;
            self.db = Some(
                self.server
                    .connect_pool(&url, Some(&self.namespace), parallel as u32)
                    .await?,
            );
        }
        let data = self.sql.data_column(&self.options);
        let order = self.load_order();
        let db = self.connect_namespace().await?;
        let rows_done = orm::begin(db, &spec, &location, data, order).await?;
        for sql in setup {
            db.execute_unprepared(&sql).await?;
        }
        Ok(rows_done)
    }

    fn rows_per_batch(&self) -> usize {
        // Each large object created holds a lock until its transaction ends, and the
        // lock table is shared (max_locks_per_transaction x connections): 4096 1 KiB
        // rows in one transaction would run it out of shared memory.
        let most = match self.sql.data_column(&self.options) {
            migration::DataColumn::Oid => MAX_LARGE_OBJECTS_PER_BATCH,
            migration::DataColumn::Blob => MAX_ROWS_PER_INSERT,
        };
        let loading = self.sql;
        rows_for_batch(&self.spec, BATCH_BYTES, most.min(loading.max_batch_rows()))
    }

    async fn append(&mut self, first_id: u64, blobs: &mut Vec<Vec<u8>>) -> Result<()> {
        let db = self.db.clone().context("append before begin")?;
        let spec = self.spec;
        let template = self.sql.insert_data_template(&self.options);
        let bulk = self.sql.bulk_load();
        let parallel = self.parallel_batches();
        if parallel > 1 {
            // A free connection first; the batch's buffers go with its task (the
            // loader fills new ones meanwhile).
            self.settle(parallel - 1).await?;
            let blobs = std::mem::take(blobs);
            self.in_flight.spawn(async move {
                insert_batch(&db, &spec, first_id, &blobs, template, bulk).await
            });
            return Ok(());
        }
        insert_batch(&db, &spec, first_id, blobs, template, bulk).await
    }

    async fn finish(&mut self) -> Result<()> {
        self.settle(0).await?;
        let db = self.db.take().context("finish before begin")?;
        // Dolt commits: the rows before the dataset is marked complete (a failure
        // there leaves it incomplete, and the resumed load commits again), then the mark.
        self.after_load(&db).await?;
        orm::mark_complete(&db).await?;
        self.after_load(&db).await?;
        db.close().await?;
        if self.sql.restart_after_load() && self.places.remote(self.server).is_none() {
            let docker = crate::docker::connect().await?;
            if let Some((id, _, _)) =
                crate::docker::find_service(&docker, self.server.name()).await?
            {
                crate::docker::restart_and_wait(&docker, &id, Duration::from_secs(180))
                    .await
                    .with_context(|| format!("restarting {} after a load", self.server.name()))?;
            }
        }
        Ok(())
    }

    fn estimated_disk_bytes(&self, rows: u64) -> u64 {
        // What the server writes into its volume (`disk_room` places that on its file
        // system): the blobs with the pages around them (`disk_bytes_per_blob_byte`),
        // a random key's half-filled index pages (4.93 GiB with uuidv4), and some of
        // the write-ahead log a load grows (at most PostgreSQL's max_wal_size, 1 GB,
        // for the server: not per dataset).
        if rows == 0 {
            return 0;
        }
        let key = if self.spec.key.is_binary() {
            640.0
        } else {
            128.0
        };
        let per_row =
            |size: u64| (size as f64 * self.sql.disk_bytes_per_blob_byte(size) + key) as u64;
        self.spec.sum_over_rows(rows, per_row) + (256 << 20)
    }

    async fn evict(&mut self) -> Result<EvictionReport> {
        if self.state().await? != DatasetState::Complete {
            bail!("{} is not loaded", self.location.display());
        }
        if let Some(db) = self.db.take() {
            db.close().await?;
        }
        super::cold::restart_cold(self.server, self.url.as_deref(), &self.places).await
    }

    async fn read_chunk(&mut self, at: f64, bytes: u64) -> Result<u64> {
        let sql = self.chunk_sql(at, bytes);
        let db = self.connect_namespace().await?;
        Ok(Self::count(db, sql).await?.max(0) as u64)
    }

    /// On `SqlServer::prefill_connections` connections at once where the server has
    /// more than one: one at a time, Dolt answered one chunk after another while its
    /// disk and its second CPU waited.
    async fn read_chunks(&mut self, chunks: &[(f64, u64)]) -> Result<u64> {
        let connections = self.sql.prefill_connections();
        if connections < 2 || chunks.len() < 2 {
            return crate::db::store::read_one_by_one(self, chunks).await;
        }
        if self.prefill_pool.is_none() {
            let url = self.server.require_url(self.url.as_deref())?;
            let pool = self
                .server
                .connect_pool(&url, Some(&self.namespace), connections as u32)
                .await?;
            self.prefill_pool = Some(pool);
        }
        let pool = self.prefill_pool.as_ref().expect("just connected");
        let mut read = 0;
        for group in chunks.chunks(connections) {
            let reads = group
                .iter()
                .map(|&(at, bytes)| Self::count(pool, self.chunk_sql(at, bytes)));
            let counts = futures_util::future::try_join_all(reads).await?;
            read += counts.into_iter().map(|n| n.max(0) as u64).sum::<u64>();
        }
        Ok(read)
    }

    async fn prefill_begin(&mut self) -> Result<Option<String>> {
        let admin = self.admin().await?;
        let (held, note) = super::prefill::hold(self.server, &admin, &self.places).await?;
        admin.close().await?;
        self.prefill_held = held;
        let connections = self.sql.prefill_connections();
        let at_once = (connections > 1)
            .then(|| format!("{connections} at once, each on a connection of its own"));
        Ok(match (at_once, note) {
            (Some(a), Some(n)) => Some(format!("{a}; {n}")),
            (a, n) => a.or(n),
        })
    }

    async fn prefill_end(&mut self) -> Result<()> {
        // Its connections closed before measuring: the server holds only the engine's.
        if let Some(pool) = self.prefill_pool.take() {
            pool.close().await?;
        }
        let held = std::mem::take(&mut self.prefill_held);
        if held.is_empty() {
            return Ok(());
        }
        let admin = self.admin().await?;
        super::prefill::put_back(self.server, &admin, held).await?;
        Ok(admin.close().await?)
    }

    async fn id_range(&mut self) -> Result<IdRange> {
        let spec = self.spec;
        let db = self.connect_namespace().await?;
        orm::id_range(db, &spec).await
    }

    /// One SELECT over the id range, in id order, through the same read expression
    /// the engines fetch with (PostgreSQL's `lo_get(data)` for large objects).
    async fn read_rows(
        &mut self,
        first: u64,
        last: u64,
        each: &mut dyn for<'b> FnMut(u64, &'b [u8]),
    ) -> Result<bool> {
        if self.spec.key.is_binary() {
            return Ok(false);
        }
        let data = self.sql.data_read_expr(&self.options);
        let sql = format!(
            "SELECT id, {data} AS data FROM blobs WHERE id BETWEEN {first} AND {last} ORDER BY id"
        );
        let db = self.connect_namespace().await?;
        let rows = db
            .query_all_raw(Statement::from_string(db.get_database_backend(), sql))
            .await
            .with_context(|| format!("reading ids {first}..={last}"))?;
        for row in rows {
            let id: i64 = row.try_get("", "id")?;
            let bytes: Vec<u8> = row.try_get("", "data")?;
            each(id as u64, &bytes);
        }
        Ok(true)
    }

    async fn finish_interrupted(&mut self) -> Result<Option<String>> {
        let Some(sql) = self.sql.after_load_owed_sql() else {
            return Ok(None);
        };
        self.connect_namespace().await?;
        let db = self.db.as_ref().expect("just connected");
        if Self::count(db, sql).await? == 0 {
            return Ok(None);
        }
        let started = Instant::now();
        self.run_after_load_sql(db).await?;
        Ok(Some(format!(
            "complete, but what its load owes it was not done (a load stopped before it, or an older blobrace loaded it): ran `{}` now, in {:.1} s",
            self.sql.after_load_sql(&self.options).join("; "),
            started.elapsed().as_secs_f64()
        )))
    }

    async fn disk_bytes(&mut self) -> Result<Option<u64>> {
        let Some(sql) = self
            .server
            .recording()
            .disk_bytes_sql(&self.namespace, &self.options)
        else {
            return match self.server.recording().namespace_dir(&self.namespace) {
                Some(dir) => crate::docker::dir_bytes_in_service(self.server.name(), &dir).await,
                None => Ok(None),
            };
        };
        let db = self.connect_namespace().await?;
        let backend = db.get_database_backend();
        let ask = || db.query_one_raw(Statement::from_string(backend, sql.clone()));
        let mut row = ask().await?;
        if row.is_none() {
            // MariaDB lists in INNODB_SYS_TABLESPACES only the tablespaces opened since
            // it started: after a restart (a cold start, compose recreating it, a
            // reboot) a loaded table is not there until something opens it.
            db.execute_unprepared("SELECT 1 FROM blobs LIMIT 1").await?;
            row = ask().await?;
        }
        // Still nothing: the size is unknown, not zero, and no reason to stop a run.
        let Some(row) = row else {
            return Ok(None);
        };
        Ok(row
            .try_get::<Option<i64>>("", "n")?
            .map(|n| n.max(0) as u64))
    }

    async fn remove(&mut self) -> Result<()> {
        if let Some(db) = self.db.take() {
            db.close().await?;
        }
        let admin = self.admin().await?;
        for sql in self.sql.before_drop_sql(&self.namespace, &self.options) {
            admin.execute_unprepared(&sql).await?;
        }
        admin
            .execute_unprepared(&self.sql.drop_namespace_sql(&self.namespace))
            .await?;
        admin.close().await?;
        Ok(())
    }

    /// Rows kept as PostgreSQL large objects are not changed: replacing one means
    /// `lo_unlink` and a new object, which no application path here takes yet.
    fn churner(&mut self) -> Option<&mut dyn Churn> {
        let can = self.sql.data_column(&self.options) != migration::DataColumn::Oid;
        can.then_some(self as &mut dyn Churn)
    }
}

#[async_trait::async_trait(?Send)]
impl Churn for ServerStore {
    async fn churn_applied(&mut self) -> Result<crate::dataset::churn::ChurnProgress> {
        let db = self.connect_namespace().await?;
        crate::db::orm_churn::applied(db).await
    }

    async fn churn_maintenance(&mut self, after: bool) -> Result<Option<String>> {
        use crate::dataset::churn::Maintenance;
        let maintenance = self.spec.churn.map(|c| c.maintenance).unwrap_or_default();
        let name = self.server.name();
        let statements = match (maintenance, after) {
            (Maintenance::None, false) => match self.sql.cleanup_off_sql() {
                Ok(sql) => sql,
                Err(why) => return Ok(Some(format!("not controlled: {why}"))),
            },
            (Maintenance::Full, true) => {
                let sql = match self.sql.compaction_sql() {
                    Ok(sql) => sql,
                    Err(why) => return Ok(Some(format!("not available: {why}"))),
                };
                let db = self.connect_namespace().await?;
                if crate::db::orm_churn::applied(db).await?.compacted {
                    return Ok(Some("compacted before this run".into()));
                }
                sql
            }
            _ => return Ok(None),
        };
        let started = Instant::now();
        let db = self.connect_namespace().await?;
        for sql in &statements {
            db.execute_unprepared(sql)
                .await
                .with_context(|| format!("{name}: `{sql}` (--maintenance {maintenance})"))?;
        }
        if after {
            crate::db::orm_churn::mark_compacted(db).await?;
        }
        Ok(Some(format!(
            "`{}` in {:.1} s",
            statements.join("; "),
            started.elapsed().as_secs_f64()
        )))
    }

    async fn cleanup_facts(&mut self) -> Result<Vec<(String, i64)>> {
        let statements = self.sql.cleanup_facts_sql();
        if statements.is_empty() {
            return Ok(Vec::new());
        }
        let db = self.connect_namespace().await?;
        crate::db::orm_churn::facts(db, &statements).await
    }

    async fn churn(&mut self, ids: &[u64], blobs: &mut Vec<Vec<u8>>, applied: u64) -> Result<()> {
        let spec = self.spec;
        let piece = match self.sql.bulk_load() {
            BulkLoad::InsertInPieces(piece) => Some(piece),
            BulkLoad::Insert => None,
        };
        let db = self.connect_namespace().await?;
        crate::db::orm_churn::change(db, &spec, ids, blobs, applied, piece).await
    }

    /// What a load owes its dataset, where the server can say it is still owed, is owed
    /// after the churn too: Dolt commits the churn's working set. PostgreSQL's check
    /// (never vacuumed) finds the vacuum its load ran, so nothing runs there; a server
    /// with no such check runs nothing (its after-load statements would be maintenance).
    async fn churn_finish(&mut self) -> Result<()> {
        if self.sql.after_load_owed_sql().is_some() {
            let db = self.connect_namespace().await?.clone();
            self.after_load(&db).await?;
        }
        if let Some(db) = self.db.take() {
            db.close().await?;
        }
        Ok(())
    }
}

/// One batch of rows in one transaction, the way the server takes it (`BulkLoad`).
async fn insert_batch(
    db: &DatabaseConnection,
    spec: &DatasetSpec,
    first_id: u64,
    blobs: &[Vec<u8>],
    template: &'static str,
    bulk: BulkLoad,
) -> Result<()> {
    match bulk {
        BulkLoad::Insert => orm::append(db, spec, first_id, blobs, template).await,
        BulkLoad::InsertInPieces(piece) => {
            orm::append_in_pieces(db, spec, first_id, blobs, piece).await
        }
    }
}
