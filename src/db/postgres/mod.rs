//! PostgreSQL. Values over ~2 kB live out of line in TOAST (~2000-byte chunks),
//! so one fetch reads the row plus its TOAST chunks; the column's storage decides
//! whether PostgreSQL first tries to compress them. Caches in `shared_buffers`
//! and in the page cache, both inside its container's cap.

pub mod knobs;

pub use knobs::{PgCompression, PgStorage, PostgresKnobs};

use crate::dataset::documents::Content;
use sea_orm::{ConnectOptions, DbBackend};

use crate::db::knobs::Knobs;

use crate::db::server::{
    CacheSetting, ComposeEnv, Loading, MemoryModel, PieceSql, Recording, ServerDb, SqlServer,
    compose_port,
};

pub struct Postgres;

impl ServerDb for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn url_flag(&self) -> &'static str {
        "postgres-url"
    }

    fn url_env(&self) -> &'static str {
        "BLOBRACE_POSTGRES_URL"
    }

    fn url_help(&self) -> &'static str {
        "PostgreSQL URL for the postgres engines. Default: built from compose/.env."
    }

    fn url_from_compose(&self, env: &ComposeEnv) -> Option<String> {
        let port = compose_port(env, &self.port_env(), "15432");
        env.get("POSTGRES_PASSWORD")
            .map(|pw| format!("postgres://blobrace:{pw}@127.0.0.1:{port}/blobrace"))
    }

    fn container_data_dir(&self) -> &'static str {
        "\"$PGDATA\""
    }

    fn sql(&self) -> Option<&dyn SqlServer> {
        Some(self)
    }
}

/// How it is spoken to: SQL over its wire protocol.
impl SqlServer for Postgres {
    fn backend(&self) -> DbBackend {
        DbBackend::Postgres
    }

    fn engine_help(&self) -> [&'static str; 2] {
        [
            "PostgreSQL (capped container) through SeaORM",
            "the same PostgreSQL table and query through sqlx, binary bytea",
        ]
    }

    fn connection_setup(&self, options: &mut ConnectOptions, namespace: Option<&str>) {
        if let Some(ns) = namespace.map(str::to_string) {
            options.map_sqlx_postgres_opts(move |o| o.options([("search_path", ns.as_str())]));
        }
    }

    fn namespace_word(&self) -> &'static str {
        "schema"
    }

    /// A dataset stored EXTERNAL, or compressed with lz4, is a different dataset: its
    /// own schema.
    fn namespace_suffix(&self, options: &Knobs) -> &'static str {
        let knobs = options.get::<PostgresKnobs>();
        match knobs.storage {
            PgStorage::Extended if knobs.lz4() => "_lz4",
            PgStorage::Extended => "",
            PgStorage::External => "_external",
            PgStorage::LargeObject => "_lo",
        }
    }

    fn layout_words(&self, options: &Knobs) -> Option<String> {
        let knobs = options.get::<PostgresKnobs>();
        match knobs.storage {
            PgStorage::Extended if knobs.lz4() => Some("compression lz4".into()),
            PgStorage::Extended => None,
            PgStorage::External => Some("storage external".into()),
            PgStorage::LargeObject => Some("storage lo".into()),
        }
    }

    fn create_namespace_sql(&self, namespace: &str) -> String {
        format!("CREATE SCHEMA IF NOT EXISTS {namespace}")
    }

    fn drop_namespace_sql(&self, namespace: &str) -> String {
        format!("DROP SCHEMA IF EXISTS {namespace} CASCADE")
    }

    fn data_read_expr(&self, options: &Knobs) -> &'static str {
        match options.get::<PostgresKnobs>().storage {
            PgStorage::LargeObject => "lo_get(data)",
            _ => "data",
        }
    }

    fn fetch_sql(&self, options: &Knobs) -> &'static str {
        match options.get::<PostgresKnobs>().storage {
            PgStorage::LargeObject => "SELECT lo_get(data) FROM blobs WHERE id = $1",
            _ => "SELECT data FROM blobs WHERE id = $1",
        }
    }

    /// A large object's piece through `lo_get(oid, offset, length)` (0-based offset);
    /// a bytea's through `substring()`, which reads only the TOAST chunks it needs when
    /// the column is stored EXTERNAL (uncompressed), and all of them otherwise.
    fn piece_sql(&self, options: &Knobs) -> Result<PieceSql, &'static str> {
        Ok(PieceSql {
            sql: match options.get::<PostgresKnobs>().storage {
                PgStorage::LargeObject => {
                    "SELECT lo_get(data, ($2::int - 1)::bigint, $3::int) FROM blobs WHERE id = $1"
                }
                _ => "SELECT substring(data FROM $2::int FOR $3::int) FROM blobs WHERE id = $1",
            },
            id_first: true,
        })
    }

    /// bytea's hex input format.
    fn binary_literal(&self, bytes: &[u8]) -> String {
        format!("'\\x{}'::bytea", crate::dataset::key::hex(bytes))
    }

    /// `length()` of a TOASTed value reads only its header; `get_byte` detoasts the
    /// whole value, as a fetch does. shared_buffers are shared memory, which the
    /// container's `cache` figure already counts: no private cache.
    fn read_range_sql(&self, first: &str, last: &str, options: &Knobs) -> String {
        let data = self.data_read_expr(options);
        format!(
            "SELECT COALESCE(SUM(length({data}) + 0 * get_byte({data}, 0)), 0)::bigint AS n FROM blobs WHERE id BETWEEN {first} AND {last}"
        )
    }
}

/// What Postgres records with each result, and how its bytes on disk are read.
impl Recording for Postgres {
    /// EXTENDED compresses a value over ~2 kB before TOASTing it, and gives up where the
    /// first ~1 kB does not compress (random bytes).
    fn compression(&self, options: &Knobs) -> String {
        let knobs = options.get::<PostgresKnobs>();
        match knobs.storage {
            PgStorage::Extended if knobs.lz4() => {
                "lz4 (the column's COMPRESSION) on values over ~2 kB".into()
            }
            PgStorage::Extended => "pglz, PostgreSQL's default, on values over ~2 kB".into(),
            PgStorage::External => "none: EXTERNAL storage never compresses".into(),
            PgStorage::LargeObject => "none: large objects are stored as given".into(),
        }
    }

    /// The heap, its TOAST table and every index (the primary key's). Large objects
    /// live in pg_largeobject, shared by every large object of the database, and it
    /// keeps the space of unlinked ones (a dropped dataset's: 8.07 GiB measured for a
    /// 3 GiB dataset loaded after another was dropped): none of it can be given to one
    /// dataset, so their size is unavailable.
    fn disk_bytes_sql(&self, namespace: &str, options: &Knobs) -> Option<String> {
        match options.get::<PostgresKnobs>().storage {
            PgStorage::LargeObject => None,
            _ => Some(format!(
                "SELECT pg_total_relation_size('{namespace}.blobs')::bigint AS n"
            )),
        }
    }

    /// Every relation of the schema with its TOAST table and indexes (large objects
    /// live in pg_largeobject, shared by all schemas: not counted).
    fn namespace_bytes_sql(&self, namespace: &str) -> Option<String> {
        Some(format!(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = '{namespace}' AND c.relkind = 'r'"
        ))
    }

    fn settings_queries(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("server_version", "SELECT version()"),
            ("shared_buffers", "SHOW shared_buffers"),
            ("effective_cache_size", "SHOW effective_cache_size"),
            // p = plain, m = main, x = extended (compress, then TOAST), e = external (TOAST, no compression).
            (
                "data_storage",
                "SELECT attstorage::text FROM pg_attribute WHERE attrelid = 'blobs'::regclass AND attname = 'data'",
            ),
            // The column's own compression (empty: the server's default, below).
            (
                "data_compression",
                "SELECT CASE attcompression WHEN 'l' THEN 'lz4' WHEN 'p' THEN 'pglz' ELSE 'default' END FROM pg_attribute WHERE attrelid = 'blobs'::regclass AND attname = 'data'",
            ),
            (
                "default_toast_compression",
                "SHOW default_toast_compression",
            ),
        ]
    }
}

/// How a dataset is written into Postgres and dropped from it.
impl Loading for Postgres {
    /// One backend is CPU-bound cutting each value into TOAST rows with their index
    /// entries and WAL records (75-80% of a CPU at 64 MB/s with 64 KiB blobs, whether
    /// through INSERT or binary COPY): a second connection is a second backend, on the
    /// second CPU of a 2-CPU cap.
    fn load_connections(&self, options: &Knobs) -> usize {
        match options.get::<PostgresKnobs>().storage {
            // Serial, so a stopped load leaves no rows past a gap: trimming them
            // would leave their large objects behind.
            PgStorage::LargeObject => 1,
            _ => 2,
        }
    }

    fn data_column(&self, options: &Knobs) -> migration::DataColumn {
        match options.get::<PostgresKnobs>().storage {
            PgStorage::LargeObject => migration::DataColumn::Oid,
            _ => migration::DataColumn::Blob,
        }
    }

    /// A new large object per row, in the row's own transaction (a failed batch
    /// leaves none behind).
    fn insert_data_template(&self, options: &Knobs) -> &'static str {
        match options.get::<PostgresKnobs>().storage {
            PgStorage::LargeObject => "lo_from_bytea(0, {})",
            _ => "{}",
        }
    }

    /// Large objects belong to the database, not the schema: unlinked first, or a
    /// dropped dataset's bytes would stay in pg_largeobject.
    /// In transactions of 500 (a DO block at top level may commit): unlinking takes a
    /// lock per object, and 49152 in one transaction ran the lock table out of shared
    /// memory.
    fn before_drop_sql(&self, namespace: &str, options: &Knobs) -> Vec<String> {
        match options.get::<PostgresKnobs>().storage {
            PgStorage::LargeObject => vec![format!(
                "DO $$ DECLARE r record; n int := 0; BEGIN IF to_regclass('{namespace}.blobs') IS NOT NULL THEN FOR r IN SELECT data FROM {namespace}.blobs LOOP PERFORM lo_unlink(r.data); n := n + 1; IF n % 500 = 0 THEN COMMIT; END IF; END LOOP; END IF; END $$"
            )],
            _ => Vec::new(),
        }
    }

    /// The storage applies to rows inserted from then on, so it is set before the
    /// first batch (and again on resume, harmlessly).
    ///
    /// Both bytea storages load as EXTERNAL: EXTENDED first tries to compress every
    /// value (pglz), and on incompressible bytes the attempt fails every time and the
    /// value is stored exactly as EXTERNAL stores it (out of line, uncompressed). The
    /// attempt was most of the backend's CPU: 64 KiB, 3 GiB, two connections, 90 MB/s
    /// EXTENDED vs 211 MB/s EXTERNAL, and the same bytes on disk (3.13 GiB each).
    /// An EXTENDED dataset gets its own setting back before it is marked complete
    /// (`after_load_sql`), so what is measured and recorded is PostgreSQL's default.
    /// That shortcut holds for random bytes only: documents that compress (`--content`)
    /// load EXTENDED, so pglz compresses them as it would a user's.
    ///
    /// lz4 is the column's own COMPRESSION, which is what `default_toast_compression`
    /// would give a column created under it; set on the column, it holds whatever the
    /// server's default.
    fn table_setup_sql(&self, options: &Knobs, content: Content) -> Vec<String> {
        let knobs = options.get::<PostgresKnobs>();
        let mut sql = Vec::new();
        if knobs.lz4() {
            sql.push("ALTER TABLE blobs ALTER COLUMN data SET COMPRESSION lz4".into());
        }
        match knobs.storage {
            PgStorage::Extended if !content.is_random() => {}
            PgStorage::Extended | PgStorage::External => {
                sql.push("ALTER TABLE blobs ALTER COLUMN data SET STORAGE EXTERNAL".into())
            }
            // An oid column is stored as it is: nothing to set.
            PgStorage::LargeObject => {}
        }
        sql
    }

    /// An EXTENDED dataset's own storage back, then a VACUUM ANALYZE, as pgbench runs
    /// after its load: what autovacuum would have done to a long-running service's
    /// table. Without it the first read of every page after a load dirties it to set
    /// its hint bits, autovacuum's insert-triggered pass over the whole table can start
    /// in the middle of a measurement, and the planner, with no statistics, plans the
    /// prefill's range read for 270,000 rows instead of 1,024, in parallel workers and
    /// JIT-compiled (about 300 ms a chunk). Steady 1 KiB over 3 GiB under 1 GiB, the
    /// same table before and after its VACUUM: prefill 52.7 s against 4.0 s, 19.9 KiB
    /// read from disk a fetch against 8.0 (which of the two above read the difference
    /// was not traced), p50 338 against 271 µs. Large objects live in pg_largeobject,
    /// which the table's VACUUM does not reach. Last, so a table never vacuumed is a
    /// load that did not finish (`after_load_owed_sql`).
    fn after_load_sql(&self, options: &Knobs) -> Vec<String> {
        let mut sql = Vec::new();
        match options.get::<PostgresKnobs>().storage {
            PgStorage::Extended => {
                sql.push("ALTER TABLE blobs ALTER COLUMN data SET STORAGE EXTENDED".into())
            }
            PgStorage::LargeObject => sql.push("VACUUM (ANALYZE) pg_largeobject".into()),
            PgStorage::External => {}
        }
        sql.push("VACUUM (ANALYZE) blobs".into());
        sql
    }

    /// The table was never vacuumed by hand: the loader's VACUUM is owed (autovacuum's
    /// passes do not count; its statistics reset after a crash, which costs one more
    /// VACUUM, quick on a table already vacuumed).
    fn after_load_owed_sql(&self) -> Option<String> {
        Some(
            "SELECT COUNT(*) AS n FROM pg_stat_user_tables WHERE relid = 'blobs'::regclass AND last_vacuum IS NULL"
                .into(),
        )
    }

    /// Autovacuum off for the table and its TOAST table: their dead rows stay.
    fn cleanup_off_sql(&self) -> Result<Vec<String>, &'static str> {
        Ok(vec![
            "ALTER TABLE blobs SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)"
                .into(),
        ])
    }

    /// VACUUM FULL rewrites the table and its TOAST table without the dead rows; it
    /// leaves the statistics' dead-row counts as they were, so a plain VACUUM (ANALYZE)
    /// follows, as after a load (nothing left for it to remove).
    fn compaction_sql(&self) -> Result<Vec<String>, &'static str> {
        Ok(vec![
            "VACUUM FULL blobs".into(),
            "VACUUM (ANALYZE) blobs".into(),
        ])
    }

    /// The statistics of the table and its TOAST table (where the blobs' old versions
    /// are dead rows); this backend's pending counts flushed first (PostgreSQL 15+).
    fn cleanup_facts_sql(&self) -> Vec<String> {
        vec![
            "SELECT pg_stat_force_next_flush()".into(),
            "SELECT (CASE WHEN s.relid = 'blobs'::regclass THEN 'table' ELSE 'TOAST' END) || ' ' || f.k AS name, f.v AS value \
             FROM pg_stat_all_tables s CROSS JOIN LATERAL (VALUES ('live rows', s.n_live_tup), ('dead rows', s.n_dead_tup), \
             ('autovacuum runs', s.autovacuum_count), ('vacuum runs', s.vacuum_count)) AS f(k, v) \
             WHERE s.relid = 'blobs'::regclass OR s.relid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'blobs'::regclass) \
             ORDER BY 1"
                .into(),
        ]
    }
}

/// What Postgres holds in memory, for fitting it under a cap.
impl MemoryModel for Postgres {
    /// shared_buffers needs a restart: ALTER SYSTEM writes postgresql.auto.conf (in the
    /// data volume, so it persists), which the compose file leaves in charge by not
    /// passing shared_buffers on the command line (that would override it).
    fn cache(&self) -> Option<CacheSetting> {
        Some(CacheSetting {
            name: "shared_buffers",
            read_sql: "SELECT pg_size_bytes(current_setting('shared_buffers'))::bigint AS n",
            set_sql: |bytes| format!("ALTER SYSTEM SET shared_buffers = '{}kB'", bytes >> 10),
            applied_by_restart: true,
        })
    }

    /// 1/8 of the cap (its 128MB default for 1 GiB): PostgreSQL leans on the page
    /// cache, which the container's cap covers too.
    fn cache_bytes_for_cap(&self, cap_bytes: u64, _largest_blob: u64) -> u64 {
        (cap_bytes / 8) >> 20 << 20
    }

    /// Loading, each of its `load_connections` (2) backends holds about 3 copies of
    /// the row it inserts (the message, the bound value, the TOAST chunks being cut):
    /// anonymous memory peaked at 200 MiB loading 32 MiB blobs, 40 MiB with 4 MiB
    /// blobs (1 GiB cap, 2026-11-25). Shared buffers, an eighth of the cap
    /// (`cache_bytes_for_cap`), come on top: the cap must hold both.
    fn min_cap_bytes(&self, largest_blob: u64) -> u64 {
        let own = (40 << 20) + 2 * 3 * largest_blob;
        (own * 8 / 7).div_ceil(1 << 20) << 20
    }

    /// The postmaster and its background processes; shared_buffers are the cache.
    fn serving_memory_bytes(&self) -> u64 {
        32 << 20
    }

    /// A backend detoasts the value into its own memory and copies it into the
    /// message it sends: measured 64 MiB more anonymous memory per client
    /// of 32 MiB blobs (71, 267, 529 MiB at 1, 4, 8 clients), 7 MiB per client of
    /// 4 MiB blobs.
    fn fetch_copies(&self) -> u64 {
        2
    }
}
