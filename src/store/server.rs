//! PostgreSQL and MariaDB stores: the server process does the writing, so the
//! pages it caches are charged to its own capped container. Each size class gets
//! its own namespace (a PostgreSQL schema, a MariaDB database) named
//! `blobs_<size>_x<rows>`, holding the migration's `blobs` and `manifest` tables.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection, Statement};
use serde::{Deserialize, Serialize};

use super::{IdRange, Store, StoreKind, orm, rows_for_batch};
use crate::config::redact_url;
use crate::dataset::{DatasetSpec, DatasetState};
use crate::error::InputError;
use crate::evict::EvictionReport;

const BATCH_BYTES: u64 = 4 << 20;
/// PostgreSQL binds at most 65535 parameters per statement (two per row here).
const MAX_ROWS_PER_INSERT: u64 = 8000;
/// The command that starts the compose servers, for every message that needs it.
pub const COMPOSE_UP: &str =
    "docker compose -f compose/compose.yaml --env-file compose/.env up -d --wait";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    Postgres,
    Mariadb,
}

impl Server {
    pub const ALL: [Server; 2] = [Server::Postgres, Server::Mariadb];

    /// Also the compose service name.
    pub fn name(self) -> &'static str {
        match self {
            Server::Postgres => "postgres",
            Server::Mariadb => "mariadb",
        }
    }

    fn env_var(self) -> &'static str {
        match self {
            Server::Postgres => "BLOBRACE_POSTGRES_URL",
            Server::Mariadb => "BLOBRACE_MARIADB_URL",
        }
    }
}

/// Connection settings shared by the loader and the server engines: no ping per
/// checkout, no statement logging, one connection, the size class's namespace.
pub fn server_connect_options(
    server: Server,
    url: &str,
    namespace: Option<&str>,
) -> ConnectOptions {
    let mut opts = ConnectOptions::new(url.to_string());
    opts.sqlx_logging(false)
        .test_before_acquire(false)
        .max_connections(1)
        .min_connections(1)
        .connect_timeout(Duration::from_secs(5));
    if let Some(ns) = namespace.map(str::to_string) {
        match server {
            Server::Postgres => {
                opts.map_sqlx_postgres_opts(move |o| o.options([("search_path", ns.as_str())]));
            }
            Server::Mariadb => {
                opts.map_sqlx_mysql_opts(move |o| o.database(&ns));
            }
        }
    }
    opts
}

/// The URL of a server, or an error saying how to provide one.
pub fn server_url(server: Server, url: Option<&str>) -> Result<String> {
    url.map(str::to_string).ok_or_else(|| {
        anyhow::anyhow!(
            "no URL for {}: set {} or create compose/.env from compose/.env.example (and start the servers: {COMPOSE_UP})",
            server.name(),
            server.env_var()
        )
    })
}

/// Connect, turning a refusal into an error that names the URL and the fix.
pub async fn connect(
    server: Server,
    url: &str,
    namespace: Option<&str>,
) -> Result<DatabaseConnection> {
    Database::connect(server_connect_options(server, url, namespace))
        .await
        .with_context(|| {
            format!(
                "cannot connect to {} at {} (is it running? start it with: {COMPOSE_UP}; wrong password? check compose/.env or {})",
                server.name(),
                redact_url(url),
                server.env_var()
            )
        })
}

/// How PostgreSQL stores the blob column. Values over ~2 kB go out of line into
/// TOAST (~2000-byte chunks) either way; the difference is the compression attempt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PgStorage {
    /// PostgreSQL's default for bytea: try to compress each value, then TOAST it.
    #[default]
    Extended,
    /// TOAST without trying to compress (pointless on random bytes).
    External,
}

/// Namespace of a dataset: only [a-z0-9_], so it can be inlined in SQL safely.
/// A PostgreSQL dataset stored EXTERNAL is a different dataset: its own namespace.
pub fn namespace(server: Server, spec: &DatasetSpec, pg_storage: PgStorage) -> String {
    let suffix = match (server, pg_storage) {
        (Server::Postgres, PgStorage::External) => "_external",
        _ => "",
    };
    format!(
        "blobs_{}_x{}{suffix}",
        spec.size.to_string().to_lowercase(),
        spec.rows
    )
}

pub struct ServerStore {
    server: Server,
    spec: DatasetSpec,
    url: Option<String>,
    namespace: String,
    pg_storage: PgStorage,
    location: PathBuf,
    db: Option<DatabaseConnection>,
}

impl ServerStore {
    pub fn new(
        server: Server,
        url: Option<&str>,
        spec: DatasetSpec,
        pg_storage: PgStorage,
    ) -> Self {
        let namespace = namespace(server, &spec, pg_storage);
        let location = PathBuf::from(format!(
            "{}#{namespace}",
            url.map(redact_url)
                .unwrap_or_else(|| format!("{}://(no URL)", server.name()))
        ));
        Self {
            server,
            spec,
            url: url.map(str::to_string),
            namespace,
            pg_storage,
            location,
            db: None,
        }
    }

    async fn admin(&self) -> Result<DatabaseConnection> {
        let url = server_url(self.server, self.url.as_deref())?;
        connect(self.server, &url, None).await
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
            let url = server_url(self.server, self.url.as_deref())?;
            self.db = Some(connect(self.server, &url, Some(&self.namespace)).await?);
        }
        Ok(self.db.as_ref().expect("just connected"))
    }

    /// A blob must fit one packet (sqlx splits packets over 16 MiB, but the server
    /// refuses anything over max_allowed_packet with error 1153): check before loading.
    async fn check_packet_limit(&self, admin: &DatabaseConnection) -> Result<()> {
        let row = admin
            .query_one_raw(Statement::from_string(
                admin.get_database_backend(),
                "SELECT CAST(@@max_allowed_packet AS SIGNED) AS n",
            ))
            .await?
            .context("max_allowed_packet returned nothing")?;
        let limit = row.try_get::<i64>("", "n")? as u64;
        let needed = self.spec.size.bytes() + (1 << 20);
        if limit < needed {
            return Err(InputError::Value {
                what: "MariaDB max_allowed_packet",
                input: crate::size::format_bytes(limit),
                why: format!(
                    "a {} blob needs at least {}: start mariadbd with --max-allowed-packet=256M (compose/compose.yaml does)",
                    self.spec.size,
                    crate::size::format_bytes(needed)
                ),
            }
            .into());
        }
        Ok(())
    }
}

impl Store for ServerStore {
    fn kind(&self) -> StoreKind {
        match self.server {
            Server::Postgres => StoreKind::Postgres,
            Server::Mariadb => StoreKind::Mariadb,
        }
    }

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
        let db = self.connect_namespace().await?;
        if Self::count(db, sql).await? == 0 {
            return Ok(DatasetState::Partial { rows_done: 0 });
        }
        orm::state(db, &spec, &location).await
    }

    async fn begin(&mut self) -> Result<u64> {
        let admin = self.admin().await?;
        let create = match self.server {
            Server::Postgres => format!("CREATE SCHEMA IF NOT EXISTS {}", self.namespace),
            Server::Mariadb => {
                self.check_packet_limit(&admin).await?;
                format!("CREATE DATABASE IF NOT EXISTS {}", self.namespace)
            }
        };
        admin.execute_unprepared(&create).await?;
        admin.close().await?;
        let spec = self.spec;
        let location = self.location.clone();
        let (server, pg_storage) = (self.server, self.pg_storage);
        let db = self.connect_namespace().await?;
        let rows_done = orm::begin(db, &spec, &location).await?;
        if server == Server::Postgres {
            // Applies to rows inserted from now on, so it runs before the first batch
            // (and again on resume, harmlessly).
            let storage = match pg_storage {
                PgStorage::Extended => "EXTENDED",
                PgStorage::External => "EXTERNAL",
            };
            db.execute_unprepared(&format!(
                "ALTER TABLE blobs ALTER COLUMN data SET STORAGE {storage}"
            ))
            .await?;
        }
        Ok(rows_done)
    }

    fn rows_per_batch(&self) -> usize {
        rows_for_batch(&self.spec, BATCH_BYTES, MAX_ROWS_PER_INSERT)
    }

    async fn append(&mut self, first_id: u64, blobs: &mut Vec<Vec<u8>>) -> Result<()> {
        let db = self.db.as_ref().context("append before begin")?;
        orm::append(db, first_id, blobs).await
    }

    async fn finish(&mut self) -> Result<()> {
        let db = self.db.take().context("finish before begin")?;
        orm::mark_complete(&db).await?;
        db.close().await?;
        Ok(())
    }

    fn estimated_disk_bytes(&self, _rows: u64) -> u64 {
        // The server writes into its own volume, not our data directory: the local
        // free-disk check does not apply.
        0
    }

    async fn evict(&mut self) -> Result<EvictionReport> {
        if self.state().await? != DatasetState::Complete {
            bail!("{} is not loaded", self.location.display());
        }
        if let Some(db) = self.db.take() {
            db.close().await?;
        }
        let started = std::time::Instant::now();
        let docker = crate::docker::connect().await?;
        let Some((id, name, _)) = crate::docker::find_service(&docker, self.server.name()).await?
        else {
            bail!(
                "no running compose container for {}: cannot start it cold (set BLOBRACE_COMPOSE_PROJECT if it runs under another project)",
                self.server.name()
            );
        };
        // 1. A restart empties the server's own cache (shared_buffers / buffer pool;
        //    compose disables MariaDB's buffer-pool dump and reload for this).
        crate::docker::restart_and_wait(&docker, &id, Duration::from_secs(180)).await?;
        // 2. The page cache survives a restart (its pages move to the parent cgroup):
        //    flush, then DONTNEED every data file from inside the container.
        //    `dd iflag=nocache count=0` is coreutils' posix_fadvise(DONTNEED) of a whole file.
        let data_dir = match self.server {
            Server::Postgres => "\"$PGDATA\"",
            Server::Mariadb => "/var/lib/mysql",
        };
        let script = format!(
            "sync && find {data_dir} -type f -exec dd if={{}} iflag=nocache count=0 status=none \\;"
        );
        crate::docker::exec_sh(&docker, &id, &script).await?;
        Ok(EvictionReport {
            method: format!(
                "restart container {name} (empties the server's own cache), then sync + dd iflag=nocache count=0 (posix_fadvise DONTNEED) on every file under {} inside it",
                data_dir.trim_matches('"')
            ),
            seconds: started.elapsed().as_secs_f64(),
            ..Default::default()
        })
    }

    async fn id_range(&mut self) -> Result<IdRange> {
        let db = self.connect_namespace().await?;
        orm::id_range(db).await
    }

    async fn remove(&mut self) -> Result<()> {
        if let Some(db) = self.db.take() {
            db.close().await?;
        }
        let admin = self.admin().await?;
        let drop = match self.server {
            Server::Postgres => format!("DROP SCHEMA IF EXISTS {} CASCADE", self.namespace),
            Server::Mariadb => format!("DROP DATABASE IF EXISTS {}", self.namespace),
        };
        admin.execute_unprepared(&drop).await?;
        admin.close().await?;
        Ok(())
    }
}
