//! The descriptor a server's folder fills in: `ServerDb`, its core (who it is, how
//! to reach it, its data directory for a cold start) with its capabilities, each a
//! small trait it answers for: `MemoryModel` (its cache and its own memory),
//! `Recording` (its settings and its bytes on disk), and `pprof` (a Go profile
//! endpoint); and, for an SQL database, `SqlServer` (its namespaces, how a fetch and
//! the prefill read) with `Loading` (how a dataset is written and dropped, where not
//! plainly).

use std::collections::HashMap;

use sea_orm::{ConnectOptions, DbBackend};

use crate::db::knobs::Knobs;

/// The command that starts the compose servers, for every message that needs it: the
/// script, not a bare `docker compose up` (compose/.env with the passwords is written
/// by it, and it names the project the volumes belong to; a bare command would fail on
/// a fresh checkout or start a second, empty project).
pub const COMPOSE_UP: &str = "scripts/servers.sh up";

/// KEY=VALUE pairs of compose/.env: passwords and published ports.
pub type ComposeEnv = HashMap<String, String>;

/// How the loader writes a batch of rows into a server. (PostgreSQL's binary COPY was
/// tried and measured slower than the prepared INSERT: 53-59 vs 64 MB/s at 64 KiB,
/// its backend CPU-bound either way, cutting each value into TOAST rows.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkLoad {
    /// One prepared multi-row `INSERT`, every blob a bound parameter.
    Insert,
    /// The same, each blob bound in pieces of at most this many bytes and joined on
    /// the server (`CONCAT`): for a server whose bound blob parameters have a length
    /// limit (Dolt 0.40 types one as BLOB, 65535 bytes at most).
    InsertInPieces(usize),
}

/// A server's own listing of its datasets: (name, bytes on disk).
pub type Listing = std::pin::Pin<
    Box<dyn std::future::Future<Output = anyhow::Result<Vec<(String, Option<u64>)>>> + Send>,
>;

/// A prepared read of one piece of a row's value: the id, the piece's 1-based offset
/// and its length, the id bound first or last.
#[derive(Debug, Clone, Copy)]
pub struct PieceSql {
    pub sql: &'static str,
    pub id_first: bool,
}

/// A server's Go pprof endpoint (`/debug/pprof/profile?seconds=N`).
pub struct ServerPprof {
    /// Its port on the container's loopback (it is not published).
    pub port: u16,
    /// The parts its CPU time is split into (the innermost frame of one decides).
    pub parts: crate::cpu_profile::go_pprof::Parts,
    /// How to start the server with the endpoint, for the line that says it is absent.
    pub how_to_enable: &'static str,
}

/// A server's own cache (PostgreSQL's shared_buffers, InnoDB's buffer pool): it must
/// be sized for the container's memory cap, or a small cap is mostly taken by it (or
/// the server is OOM-killed) and a large one is left to the page cache.
pub struct CacheSetting {
    /// The setting's name as the server knows it.
    pub name: &'static str,
    /// Returns the value in force, in bytes, as column `n` (BIGINT).
    pub read_sql: &'static str,
    /// The statement that sets it to this many bytes.
    pub set_sql: fn(u64) -> String,
    /// True: it takes effect at the next restart and persists (PostgreSQL's ALTER
    /// SYSTEM). False: at once, but lost on restart (MariaDB has no SET PERSIST), so it
    /// is set again after every cold restart.
    pub applied_by_restart: bool,
}

/// A server's check that a blob fits one client packet, before anything is loaded.
pub struct PacketLimit {
    /// Returns the limit in bytes as column `n` (BIGINT).
    pub query: &'static str,
    /// What the limit is called, for the error.
    pub what: &'static str,
    /// How to raise it.
    pub fix: &'static str,
}

/// Everything the suite knows about one server in its own capped container: the core
/// every server answers here (who it is, how to reach it, its data directory for a
/// cold start), and its capabilities, the supertraits, which `Server` hands out as
/// `memory()` and `recording()`:
/// - `MemoryModel`: its own cache and what it holds besides, for sizing it for the
///   run's cap and for `memory_fit` (a server whose memory is not modelled cannot be
///   fitted under a cap, so every server answers it);
/// - `Recording`: what it records with each result (version, settings, its process's
///   environment) and how its bytes on disk are read.
///
/// How it is spoken to is the rest: an SQL database answers `sql` with its
/// `SqlServer` side (namespaces, statements, `Loading`), which makes it a `Database`
/// with the SeaORM and sqlx engines; a server of another protocol (the S3 object
/// store, `db/seaweedfs/`) implements `Database` itself.
pub trait ServerDb: MemoryModel + Recording + Sync + 'static {
    /// Engine, store and compose service name: `postgres`.
    fn name(&self) -> &'static str;

    /// `--<this>` gives the URL (`postgres-url`).
    fn url_flag(&self) -> &'static str;

    /// ... as does this variable (`BLOBRACE_POSTGRES_URL`).
    fn url_env(&self) -> &'static str;

    /// Help text of the URL flag.
    fn url_help(&self) -> &'static str;

    /// The URL of the compose service, from compose/.env's password and published port.
    fn url_from_compose(&self, env: &ComposeEnv) -> Option<String>;

    /// The variable its published port is set with (`BLOBRACE_POSTGRES_PORT`), in
    /// compose/.env and by scripts/servers.sh: `url_from_compose` reads it, and
    /// `blobrace` knows it as a variable (a name it does not know is refused).
    fn port_env(&self) -> String {
        format!("BLOBRACE_{}_PORT", self.name().to_ascii_uppercase())
    }

    /// Variables read for it beside its port and image (`Database::variables`): by its
    /// container in compose, or by the script that builds its stand-in.
    fn other_variables(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// How to get it running, for the errors when it cannot be reached.
    fn unreachable_hint(&self) -> String {
        format!("is it running? start it with: {COMPOSE_UP}")
    }

    /// A Go pprof endpoint inside its container, for the server's own CPU profile
    /// beside the client's (`--profile-fetches`). None: it has none.
    fn pprof(&self) -> Option<ServerPprof> {
        None
    }

    /// Where its data files live inside its container (a shell word): a cold start
    /// flushes them and drops them from the page cache there.
    fn container_data_dir(&self) -> &'static str;

    /// Its SQL side, where it is an SQL database; None for another protocol.
    fn sql(&self) -> Option<&dyn SqlServer>;

    /// The datasets it holds, for `blobrace env`, where they are not SQL namespaces
    /// (an object store's buckets): each one's name and bytes on disk (None where it
    /// cannot say). None: an SQL server, listed through its namespaces.
    fn list_datasets(&self) -> Option<Listing> {
        None
    }
}

/// An SQL server: its wire protocol, its namespaces, how a fetch and the prefill
/// read, and how a dataset is written (`Loading`). Every `SqlServer` is a `Database`
/// with two engines (SeaORM, raw sqlx) and a namespace per dataset.
pub trait SqlServer: ServerDb + Loading {
    /// The wire protocol (sea-orm backend) the engines speak to it.
    fn backend(&self) -> DbBackend;

    /// One help line per engine: (ORM engine, raw engine).
    fn engine_help(&self) -> [&'static str; 2];

    /// Set up every connection to it: pointed at one dataset's namespace where given
    /// (None: the admin connection), and whatever its wire protocol needs here.
    fn connection_setup(&self, options: &mut ConnectOptions, namespace: Option<&str>);

    /// What a namespace is called here ("schema", "database"): the key under which
    /// the engines record theirs.
    fn namespace_word(&self) -> &'static str;

    /// Appended to a dataset's namespace when a run option makes it a different dataset.
    fn namespace_suffix(&self, _options: &Knobs) -> &'static str {
        ""
    }

    /// What the report calls the dataset `namespace_suffix` makes another one
    /// (`storage external`, `compression lz4`); by default the suffix's own name.
    fn layout_words(&self, options: &Knobs) -> Option<String> {
        let suffix = self.namespace_suffix(options).trim_start_matches('_');
        (!suffix.is_empty()).then(|| suffix.to_string())
    }

    fn create_namespace_sql(&self, namespace: &str) -> String;

    fn drop_namespace_sql(&self, namespace: &str) -> String;

    /// The expression that reads a row's bytes (`data`, or PostgreSQL's
    /// `lo_get(data)`): the ORM engine selects it as `data`.
    fn data_read_expr(&self, _options: &Knobs) -> &'static str {
        "data"
    }

    /// The raw engine's prepared fetch, one placeholder for the id or key.
    fn fetch_sql(&self, _options: &Knobs) -> &'static str {
        match self.backend() {
            DbBackend::Postgres => "SELECT data FROM blobs WHERE id = $1",
            _ => "SELECT data FROM blobs WHERE id = ?",
        }
    }

    /// The raw engine's prepared read of one piece of a row's value, for a streamed
    /// fetch (the time to its first bytes), and where its id placeholder sits: PostgreSQL
    /// numbers its placeholders, so the id is `$1` and the piece's 1-based offset and
    /// length `$2` and `$3`; MySQL's are positional, `SUBSTRING(data, ?, ?)` before the
    /// id. Err: why it reads whole values only.
    fn piece_sql(&self, _options: &Knobs) -> Result<PieceSql, &'static str> {
        Ok(match self.backend() {
            DbBackend::Postgres => PieceSql {
                sql: "SELECT substring(data FROM $2::int FOR $3::int) FROM blobs WHERE id = $1",
                id_first: true,
            },
            _ => PieceSql {
                sql: "SELECT SUBSTRING(data, ?, ?) FROM blobs WHERE id = ?",
                id_first: false,
            },
        })
    }

    /// A query reading the blobs whose key is from `first` to `last` (SQL literals: ids,
    /// or `binary_literal`s in a keyed dataset) all the way through the server's read
    /// path (into its own cache and its container's page cache), returning their total
    /// length as `n`: the steady-state prefill.
    fn read_range_sql(&self, first: &str, last: &str, options: &Knobs) -> String;

    /// Global settings (variable, numeric value) held for the steady-state prefill and
    /// put back after it: what makes the prefill's pages stay in the server's own cache
    /// whole, as a long-running service's are. Empty: none needed.
    fn prefill_settings(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// Connections the steady-state prefill reads its chunks on at once (`read_chunks`),
    /// where that was measured to reach the same steady state sooner (the prefill asks
    /// at most `steady::CHUNKS_AT_ONCE`, 4, at a time). One: one chunk at a time.
    fn prefill_connections(&self) -> usize {
        1
    }

    /// A 16-byte key as an SQL literal (MySQL's `X'…'`).
    fn binary_literal(&self, bytes: &[u8]) -> String {
        format!("X'{}'", crate::dataset::key::hex(bytes))
    }
}

/// How a dataset is written into a server and dropped from it. Every method has the
/// plain answer as its default: a server overrides what it does otherwise.
pub trait Loading {
    /// About what a load costs (`Database::load_cost`).
    fn load_cost(&self) -> crate::db::database::LoadCost {
        crate::db::database::LoadCost::TYPICAL
    }

    /// Bytes a loaded dataset takes in the server's volume per byte of its blobs of
    /// `blob_bytes` (the disk plan's estimate, `Store::estimated_disk_bytes`): the
    /// blobs, TOAST's or InnoDB's pages around them (3.49 GiB for 3 GiB of 1 KiB rows
    /// in InnoDB, measured).
    fn disk_bytes_per_blob_byte(&self, _blob_bytes: u64) -> f64 {
        1.2
    }

    /// A limit on one packet, checked against the largest blob before loading.
    fn packet_limit(&self) -> Option<PacketLimit> {
        None
    }

    /// Statements run in the dataset's namespace once the tables exist, before any row.
    fn table_setup_sql(
        &self,
        _options: &Knobs,
        _content: crate::dataset::documents::Content,
    ) -> Vec<String> {
        Vec::new()
    }

    /// How the loader writes a batch of rows (`BulkLoad`).
    fn bulk_load(&self) -> BulkLoad {
        BulkLoad::Insert
    }

    /// At most this many rows in one batch, whatever their bytes.
    fn max_batch_rows(&self) -> u64 {
        u64::MAX
    }

    /// Batches the loader keeps in flight at once, each on its own connection (and
    /// its own server process or thread), for a server whose one connection cannot
    /// use the CPUs of its cap. Integer ids only: a keyed dataset goes in one batch
    /// after another, in generation order.
    fn load_connections(&self, _options: &Knobs) -> usize {
        1
    }

    /// The blob column's type (`DataColumn::Oid`: the bytes live in a large object).
    fn data_column(&self, _options: &Knobs) -> migration::DataColumn {
        migration::DataColumn::Blob
    }

    /// How a bound blob becomes the column's value: `{}` is its placeholder.
    fn insert_data_template(&self, _options: &Knobs) -> &'static str {
        "{}"
    }

    /// Statements run before a dataset's namespace is dropped (PostgreSQL unlinks its
    /// large objects: they live outside the schema).
    fn before_drop_sql(&self, _namespace: &str, _options: &Knobs) -> Vec<String> {
        Vec::new()
    }

    /// Statements run in the dataset's namespace once every row is in: what the load
    /// owes its dataset before it is measured (Dolt's commit; PostgreSQL's VACUUM
    /// ANALYZE). They run before the dataset is marked complete and again after (a load
    /// stopped in between left them owed), and for a complete dataset where
    /// `after_load_owed_sql` says they are still owed.
    fn after_load_sql(&self, _options: &Knobs) -> Vec<String> {
        Vec::new()
    }

    /// A query returning, as `n`, how much of `after_load_sql`'s work a dataset still
    /// owes (Dolt's uncommitted changes; 1 for a PostgreSQL table the loader never
    /// vacuumed): 0 skips the statements. None: they run after every load and never
    /// for a dataset already complete.
    fn after_load_owed_sql(&self) -> Option<String> {
        None
    }

    /// Restart the server's container after each dataset it loads: for a server whose
    /// process keeps what a load made it allocate and carries it into the next load.
    fn restart_after_load(&self) -> bool {
        false
    }

    /// `--maintenance none`: statements that turn the server's own cleanup off for the
    /// dataset's table before its churn, or why it cannot be turned off.
    fn cleanup_off_sql(&self) -> Result<Vec<String>, &'static str> {
        Err("it runs no cleanup of its own")
    }

    /// `--maintenance full`: its compaction of the table after a churn, or why there is
    /// none.
    fn compaction_sql(&self) -> Result<Vec<String>, &'static str> {
        Err("blobrace knows no compaction for it")
    }

    /// What the server says of its own cleanup of the table after a churn: statements,
    /// the last returning rows `(name, value)`; empty where it says nothing.
    fn cleanup_facts_sql(&self) -> Vec<String> {
        Vec::new()
    }
}

/// What a server records with each result, and how its bytes on disk are read.
pub trait Recording {
    /// What compresses the blobs it stores under `options` (`Database::compression`).
    fn compression(&self, _options: &Knobs) -> String {
        crate::db::database::NO_COMPRESSION.into()
    }

    /// A query returning, as `n`, the bytes the namespace's `blobs` table takes on
    /// disk (rows, TOAST, indexes; NULL where it cannot say this time); None where the
    /// server has no such figure.
    fn disk_bytes_sql(&self, _namespace: &str, _options: &Knobs) -> Option<String> {
        None
    }

    /// The directory inside the server's container that holds a namespace and nothing
    /// else, where its bytes on disk are the directory's (`du`) and no query says them;
    /// None where the server has a query or mixes namespaces in shared files.
    fn namespace_dir(&self, _namespace: &str) -> Option<String> {
        None
    }

    /// A query returning, as `n`, the bytes every table of a namespace holds, for the
    /// listing of what is loaded (`inventory`). information_schema.TABLES serves the
    /// MySQL protocol's servers (InnoDB's figure is its statistics' estimate); None
    /// where the server cannot say.
    fn namespace_bytes_sql(&self, namespace: &str) -> Option<String> {
        Some(format!(
            "SELECT CAST(SUM(DATA_LENGTH + INDEX_LENGTH) AS SIGNED) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{namespace}'"
        ))
    }

    /// Version and settings that shape reads: (key, query returning one value).
    fn settings_queries(&self) -> &'static [(&'static str, &'static str)];

    /// Environment variables of the server's process that shape reads (Go's
    /// GOMEMLIMIT), recorded with each result from inside its container.
    fn process_env(&self) -> &'static [&'static str] {
        &[]
    }
}

/// What a server holds in memory: its own cache, sized for the container's cap, and
/// its memory besides (serving, loading, per fetch in flight).
pub trait MemoryModel {
    /// Its own cache, and the size it gets under a container memory cap of `cap_bytes`
    /// when the largest blob it must load and serve is `largest_blob` bytes. None: it
    /// has no cache setting to size (Dolt), only its container's cap is set.
    fn cache(&self) -> Option<CacheSetting>;

    fn cache_bytes_for_cap(&self, cap_bytes: u64, largest_blob: u64) -> u64;

    /// The smallest container memory cap it runs under at all with blobs up to
    /// `largest_blob` (its own memory besides the cache); below it the kernel kills
    /// it mid-run.
    fn min_cap_bytes(&self, _largest_blob: u64) -> u64 {
        0
    }

    /// Its memory besides its cache while it serves with no fetch in flight
    /// (`memory_fit`); its peak while loading can be higher (`min_cap_bytes`).
    fn serving_memory_bytes(&self) -> u64;

    /// Blob-sized buffers each fetch in flight holds inside the server (`memory_fit`).
    fn fetch_copies(&self) -> u64 {
        2
    }

    /// A query returning, as `n`, bytes of data the server caches outside the page
    /// cache (memory its container's `cache` figure does not count); None if none.
    fn private_cache_sql(&self) -> Option<&'static str> {
        None
    }
}
