//! What every server shares (`db/postgres/`, `db/mariadb/`, `db/mysql/`, `db/dolt/`,
//! `db/seaweedfs/`): a store in its own capped container, reached over the network.
//! A server's folder fills in one `ServerDb` descriptor: how to reach it (URL flag,
//! variable, compose defaults), what to record (settings), how to start it cold (its
//! data directory in the container), and its memory model. An SQL server also fills
//! in `SqlServer`: how a dataset is laid out in it (namespace, DDL, checks before
//! loading) and read; every `SqlServer` is a `Database` with two engines (SeaORM,
//! `engines.rs`, and raw sqlx, `raw.rs`) and one store (`store.rs`), so an SQL
//! server's folder is all it takes.

pub mod cache;
pub mod cold;
mod database;
mod descriptor;
pub mod engines;
pub mod mysql_wire;
pub mod place;
mod prefill;
pub mod raw;
pub mod round_trip;
pub mod store;

pub use descriptor::{
    BulkLoad, COMPOSE_UP, CacheSetting, ComposeEnv, Listing, Loading, MemoryModel, PacketLimit,
    PieceSql, Recording, ServerDb, ServerPprof, SqlServer,
};

use std::ops::Deref;
use std::time::Duration;

use anyhow::{Context, Result};
use sea_orm::{ConnectOptions, Database, DatabaseConnection};

use crate::db::knobs::Knobs;

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

    /// Its SQL side; None for a server of another protocol (the object store).
    pub fn sql(self) -> Option<&'static dyn SqlServer> {
        self.descriptor.sql()
    }

    /// Its SQL side, or an error naming the server: for what only SQL servers do.
    pub fn require_sql(self) -> Result<&'static dyn SqlServer> {
        self.sql()
            .with_context(|| format!("{} is not an SQL server", self.name()))
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
    pub fn connect_options(self, url: &str, namespace: Option<&str>) -> Result<ConnectOptions> {
        self.pool_options(url, namespace, 1)
    }

    /// The same with a pool of `connections` (the loader's parallel batches).
    pub fn pool_options(
        self,
        url: &str,
        namespace: Option<&str>,
        connections: u32,
    ) -> Result<ConnectOptions> {
        let sql = self.require_sql()?;
        let mut options = ConnectOptions::new(url.to_string());
        options
            .sqlx_logging(false)
            .test_before_acquire(false)
            .max_connections(connections)
            .min_connections(1)
            .connect_timeout(Duration::from_secs(5));
        sql.connection_setup(&mut options, namespace);
        Ok(options)
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
        let mut connected =
            Database::connect(self.pool_options(url, namespace, connections)?).await;
        if let Err(e) = &connected
            && crate::docker::dropped_connection(e)
            && crate::docker::came_back_up(
                self.name(),
                Duration::from_secs(180),
                Duration::from_secs(3),
            )
            .await
        {
            connected = Database::connect(self.pool_options(url, namespace, connections)?).await;
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
                // Either kind of server: the compose one is started by blobrace's
                // scripts; one it does not manage (remote) only its owner can start.
                anyhow::bail!(
                    "cannot connect to {} at {}: nothing answers there (the compose server: {}; a server blobrace does not manage: is it up, and does this machine reach that host and port?)",
                    self.name(),
                    redact_url(url),
                    self.unreachable_hint()
                );
            }
        }
        // An SQL server: a connection opens and closes. Another protocol's store
        // checks its credentials and bucket when it is opened.
        if self.sql().is_some() {
            self.connect(url, None).await?.close().await?;
        }
        Ok(())
    }

    /// Namespace of a dataset: only [a-z0-9_], so it can be inlined in SQL safely.
    pub fn namespace(self, spec: &crate::dataset::DatasetSpec, options: &Knobs) -> String {
        format!(
            "blobs_{}_x{}{}{}{}{}",
            match spec.mix {
                // A mix's name can be long: its kind and a hash of its text.
                Some(mix) => mix.get().short_id(),
                None => spec.size.to_string().to_lowercase(),
            },
            spec.rows,
            spec.key_suffix("_"),
            spec.churn_suffix("_").replace('-', "_"),
            spec.content.suffix().replace('-', "_"),
            self.sql().map_or("", |sql| sql.namespace_suffix(options))
        )
    }
}

/// Its capabilities, each the descriptor itself seen as the supertrait.
impl Server {
    pub fn memory(&self) -> &'static dyn MemoryModel {
        self.descriptor
    }

    pub fn recording(&self) -> &'static dyn Recording {
        self.descriptor
    }
}

impl Deref for Server {
    type Target = dyn ServerDb;
    fn deref(&self) -> &(dyn ServerDb + 'static) {
        self.descriptor
    }
}

/// Server URLs are recorded and said without their secrets (`crate::secret`).
pub use crate::secret::redact_url;

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
