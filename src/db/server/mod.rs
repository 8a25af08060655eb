//! What every server database shares (`db/postgres/`, `db/mariadb/`, `db/mysql/`,
//! `db/dolt/`): a database in its own capped container, reached over its wire
//! protocol. A server's folder fills in one `ServerDb` descriptor: how to reach it
//! (URL flag, variable, compose defaults), how a dataset is laid out in it
//! (namespace, DDL, checks before loading), what to record (settings), how to start
//! it cold (its data directory in the container), and its memory model. Every
//! `ServerDb` is a `Database` with two engines (SeaORM, `engines.rs`, and raw sqlx,
//! `raw.rs`) and one store (`store.rs`), so a server's folder is all it takes.

pub mod cache;
mod database;
pub mod engines;
pub mod mysql_wire;
pub mod raw;
pub mod store;

use std::collections::HashMap;
use std::ops::Deref;
use std::time::Duration;

use anyhow::{Context, Result};
use sea_orm::{ConnectOptions, Database, DatabaseConnection, DbBackend};

use crate::db::postgres::storage::PgStorage;

/// The command that starts the compose servers, for every message that needs it.
pub const COMPOSE_UP: &str =
    "docker compose -f compose/compose.yaml --env-file compose/.env up -d --wait";

/// KEY=VALUE pairs of compose/.env: passwords and published ports.
pub type ComposeEnv = HashMap<String, String>;

/// Run choices that make a server's dataset a different dataset (its own
/// namespace). Each database reads only its own fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerOptions {
    pub pg_storage: PgStorage,
}

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

/// A server's Go pprof endpoint (`/debug/pprof/profile?seconds=N`).
pub struct ServerPprof {
    /// Its port on the container's loopback (it is not published).
    pub port: u16,
    /// The parts its CPU time is split into (the innermost frame of one decides).
    pub parts: crate::profile::go_pprof::Parts,
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

/// Everything the suite knows about one server database.
pub trait ServerDb: Sync + 'static {
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
    /// The wire protocol (sea-orm backend) the engines speak to it.
    fn backend(&self) -> DbBackend;
    /// One help line per engine: (ORM engine, raw engine).
    fn engine_help(&self) -> [&'static str; 2];
    /// How to get it running, for the errors when it cannot be reached.
    fn unreachable_hint(&self) -> String {
        format!("is it running? start it with: {COMPOSE_UP}")
    }

    /// Set up every connection to it: pointed at one dataset's namespace where given
    /// (None: the admin connection), and whatever its wire protocol needs here.
    fn connection_setup(&self, options: &mut ConnectOptions, namespace: Option<&str>);
    /// What a namespace is called here ("schema", "database"): the key under which
    /// the engines record theirs.
    fn namespace_word(&self) -> &'static str;
    /// Appended to a dataset's namespace when a run option makes it a different dataset.
    fn namespace_suffix(&self, _options: &ServerOptions) -> &'static str {
        ""
    }
    fn create_namespace_sql(&self, namespace: &str) -> String;
    fn drop_namespace_sql(&self, namespace: &str) -> String;
    /// A limit on one packet, checked against the largest blob before loading.
    fn packet_limit(&self) -> Option<PacketLimit> {
        None
    }
    /// Statements run in the dataset's namespace once the tables exist, before any row.
    fn table_setup_sql(&self, _options: &ServerOptions) -> Vec<String> {
        Vec::new()
    }
    /// How the loader writes a batch of rows (`BulkLoad`).
    fn bulk_load(&self) -> BulkLoad {
        BulkLoad::Insert
    }
    /// Batches the loader keeps in flight at once, each on its own connection (and
    /// its own server process or thread), for a server whose one connection cannot
    /// use the CPUs of its cap. Integer ids only: a keyed dataset goes in one batch
    /// after another, in generation order.
    fn load_connections(&self, _options: &ServerOptions) -> usize {
        1
    }
    /// The blob column's type (`DataColumn::Oid`: the bytes live in a large object).
    fn data_column(&self, _options: &ServerOptions) -> migration::DataColumn {
        migration::DataColumn::Blob
    }
    /// How a bound blob becomes the column's value: `{}` is its placeholder.
    fn insert_data_template(&self, _options: &ServerOptions) -> &'static str {
        "{}"
    }
    /// The expression that reads a row's bytes (`data`, or PostgreSQL's
    /// `lo_get(data)`): the ORM engine selects it as `data`.
    fn data_read_expr(&self, _options: &ServerOptions) -> &'static str {
        "data"
    }
    /// The raw engine's prepared fetch, one placeholder for the id or key.
    fn fetch_sql(&self, _options: &ServerOptions) -> &'static str {
        match self.backend() {
            DbBackend::Postgres => "SELECT data FROM blobs WHERE id = $1",
            _ => "SELECT data FROM blobs WHERE id = ?",
        }
    }
    /// Statements run before a dataset's namespace is dropped (PostgreSQL unlinks its
    /// large objects: they live outside the schema).
    fn before_drop_sql(&self, _namespace: &str, _options: &ServerOptions) -> Vec<String> {
        Vec::new()
    }
    /// Statements run in the dataset's namespace once every row is in (Dolt's commit).
    fn after_load_sql(&self, _options: &ServerOptions) -> Vec<String> {
        Vec::new()
    }
    /// A query returning, as `n`, how many changes in the namespace are not yet made
    /// durable by `after_load_sql` (Dolt's uncommitted working set); None where loaded
    /// rows need nothing after the load.
    fn uncommitted_sql(&self) -> Option<String> {
        None
    }
    /// Restart the server's container after each dataset it loads: for a server whose
    /// process keeps what a load made it allocate and carries it into the next load.
    fn restart_after_load(&self) -> bool {
        false
    }

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

    /// A query reading the blobs whose key is from `first` to `last` (SQL literals: ids,
    /// or `binary_literal`s in a keyed dataset) all the way through the server's read
    /// path (into its own cache and its container's page cache), returning their total
    /// length as `n`: the steady-state prefill.
    fn read_range_sql(&self, first: &str, last: &str, options: &ServerOptions) -> String;

    /// A query returning, as `n`, the bytes the namespace's `blobs` table takes on
    /// disk (rows, TOAST, indexes; NULL where it cannot say this time); None where the
    /// server has no such figure.
    fn disk_bytes_sql(&self, _namespace: &str, _options: &ServerOptions) -> Option<String> {
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

    /// A 16-byte key as an SQL literal (MySQL's `X'…'`).
    fn binary_literal(&self, bytes: &[u8]) -> String {
        format!("X'{}'", crate::key::hex(bytes))
    }
    /// A query returning, as `n`, bytes of data the server caches outside the page
    /// cache (memory its container's `cache` figure does not count); None if none.
    fn private_cache_sql(&self) -> Option<&'static str> {
        None
    }

    /// Version and settings that shape reads: (key, query returning one value).
    fn settings_queries(&self) -> &'static [(&'static str, &'static str)];
    /// Environment variables of the server's process that shape reads (Go's
    /// GOMEMLIMIT), recorded with each result from inside its container.
    fn process_env(&self) -> &'static [&'static str] {
        &[]
    }
    /// A Go pprof endpoint inside its container, for the server's own CPU profile
    /// beside the client's (`--profile-fetches`). None: it has none.
    fn pprof(&self) -> Option<ServerPprof> {
        None
    }
    /// Where its data files live inside its container (a shell word): a cold start
    /// flushes them and drops them from the page cache there.
    fn container_data_dir(&self) -> &'static str;
}

/// One registered server database: its place in `DATABASES` (equal, ordered and
/// hashed by it) and its descriptor, which it derefs to. The registry makes them
/// (`StoreKind::server`, `Server::all`, in `registry.rs`).
#[derive(Clone, Copy)]
pub struct Server {
    place: usize,
    descriptor: &'static dyn ServerDb,
}

impl PartialEq for Server {
    fn eq(&self, other: &Self) -> bool {
        self.place == other.place
    }
}

impl Eq for Server {}

impl std::hash::Hash for Server {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.place.hash(state)
    }
}

impl PartialOrd for Server {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Server {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.place.cmp(&other.place)
    }
}

impl Server {
    /// The server at `place` in `DATABASES`, for the registry.
    pub(in crate::db) fn new(place: usize, descriptor: &'static dyn ServerDb) -> Server {
        Server { place, descriptor }
    }

    /// Its place in `DATABASES`, for the registry.
    pub(in crate::db) fn place(self) -> usize {
        self.place
    }

    /// The URL, or an error saying how to provide one.
    pub fn require_url(self, url: Option<&str>) -> Result<String> {
        url.map(str::to_string).ok_or_else(|| {
            anyhow::anyhow!(
                "no URL for {}: set {} or create compose/.env from compose/.env.example ({})",
                self.name(),
                self.url_env(),
                self.unreachable_hint()
            )
        })
    }

    /// Connection settings shared by the loader and the engines: no ping per
    /// checkout, no statement logging, one connection, the dataset's namespace.
    pub fn connect_options(self, url: &str, namespace: Option<&str>) -> ConnectOptions {
        self.pool_options(url, namespace, 1)
    }

    /// The same with a pool of `connections` (the loader's parallel batches).
    pub fn pool_options(
        self,
        url: &str,
        namespace: Option<&str>,
        connections: u32,
    ) -> ConnectOptions {
        let mut options = ConnectOptions::new(url.to_string());
        options
            .sqlx_logging(false)
            .test_before_acquire(false)
            .max_connections(connections)
            .min_connections(1)
            .connect_timeout(Duration::from_secs(5));
        self.connection_setup(&mut options, namespace);
        options
    }

    /// Connect, turning a refusal into an error that names the URL and the fix.
    pub async fn connect(self, url: &str, namespace: Option<&str>) -> Result<DatabaseConnection> {
        self.connect_pool(url, namespace, 1).await
    }

    /// `connect` with a pool of `connections`.
    pub async fn connect_pool(
        self,
        url: &str,
        namespace: Option<&str>,
        connections: u32,
    ) -> Result<DatabaseConnection> {
        let mut connected = Database::connect(self.pool_options(url, namespace, connections)).await;
        if let Err(e) = &connected
            && crate::docker::dropped_connection(e)
            && crate::docker::came_back_up(
                self.name(),
                Duration::from_secs(180),
                Duration::from_secs(3),
            )
            .await
        {
            connected = Database::connect(self.pool_options(url, namespace, connections)).await;
        }
        connected.with_context(|| {
            format!(
                "cannot connect to {} at {} ({}; wrong password? check compose/.env or {})",
                self.name(),
                redact_url(url),
                self.unreachable_hint(),
                self.url_env()
            )
        })
    }

    /// Whether the server answers: something listens at the URL's address (a refused
    /// port is known at once, where the driver's pool retries it for 30 s), then a
    /// connection opens and closes. For probes that decide whether to use a server.
    pub async fn probe(self, url: &str) -> Result<()> {
        if let Some(address) = url_address(url) {
            let answers = tokio::task::spawn_blocking(move || {
                use std::net::ToSocketAddrs;
                address
                    .to_socket_addrs()
                    .ok()
                    .into_iter()
                    .flatten()
                    .any(|a| {
                        std::net::TcpStream::connect_timeout(&a, Duration::from_secs(2)).is_ok()
                    })
            })
            .await
            .unwrap_or(true);
            if !answers
                && !crate::docker::came_back_up(
                    self.name(),
                    Duration::from_secs(180),
                    Duration::from_secs(3),
                )
                .await
            {
                anyhow::bail!(
                    "cannot connect to {} at {}: nothing answers there ({})",
                    self.name(),
                    redact_url(url),
                    self.unreachable_hint()
                );
            }
        }
        self.connect(url, None).await?.close().await?;
        Ok(())
    }

    /// Namespace of a dataset: only [a-z0-9_], so it can be inlined in SQL safely.
    pub fn namespace(self, spec: &crate::dataset::DatasetSpec, options: &ServerOptions) -> String {
        format!(
            "blobs_{}_x{}{}{}",
            spec.size.to_string().to_lowercase(),
            spec.rows,
            spec.key_suffix("_"),
            self.namespace_suffix(options)
        )
    }
}

impl Deref for Server {
    type Target = dyn ServerDb;
    fn deref(&self) -> &(dyn ServerDb + 'static) {
        self.descriptor
    }
}

/// `scheme://user:secret@host/db` → `scheme://user@host/db`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.rsplit_once('@') {
        Some((creds, host)) => {
            let user = creds.split(':').next().unwrap_or("");
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_string(),
    }
}

/// `host:port` of a server URL, with the scheme's default port where none is given;
/// None where it cannot be read (then only the driver can tell).
pub fn url_address(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    let host = rest.split(['/', '?', '#']).next()?;
    if host.is_empty() {
        return None;
    }
    let has_port = !host.ends_with(']')
        && host
            .rsplit_once(':')
            .is_some_and(|(_, port)| port.parse::<u16>().is_ok());
    if has_port {
        return Some(host.to_string());
    }
    let port = match scheme {
        "postgres" | "postgresql" => 5432,
        "mysql" | "mariadb" => 3306,
        _ => return None,
    };
    Some(format!("{host}:{port}"))
}

/// KEY=VALUE lines of compose/.env (or $BLOBRACE_COMPOSE_ENV); empty if the file is absent.
pub fn compose_env() -> ComposeEnv {
    let path = std::env::var("BLOBRACE_COMPOSE_ENV").unwrap_or_else(|_| "compose/.env".into());
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches('"').to_string()))
        .collect()
}

/// The port compose publishes a server on: the env file's setting or the default.
pub fn compose_port(env: &ComposeEnv, key: &str, default: &str) -> String {
    env.get(key).cloned().unwrap_or_else(|| default.into())
}

#[cfg(test)]
mod tests;
