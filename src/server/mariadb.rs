//! MariaDB. InnoDB (>= 10.6) reads its data files with O_DIRECT: its cache under
//! the container cap is the buffer pool, not the page cache. A blob must fit one
//! packet: sqlx splits packets over 16 MiB, but the server refuses anything over
//! `max_allowed_packet` (error 1153), so that limit is checked before loading.

use sea_orm::{ConnectOptions, DbBackend};

use super::{CacheSetting, ComposeEnv, PacketLimit, ServerDb, compose_port};

pub struct Mariadb;

impl ServerDb for Mariadb {
    fn name(&self) -> &'static str {
        "mariadb"
    }

    fn url_flag(&self) -> &'static str {
        "mariadb-url"
    }

    fn url_env(&self) -> &'static str {
        "BLOBRACE_MARIADB_URL"
    }

    fn url_help(&self) -> &'static str {
        "MariaDB URL (a user that may create databases) for the mariadb engines. Default: root, from compose/.env."
    }

    fn url_from_compose(&self, env: &ComposeEnv) -> Option<String> {
        let port = compose_port(env, "BLOBRACE_MARIADB_PORT", "13306");
        env.get("MARIADB_ROOT_PASSWORD")
            .map(|pw| format!("mysql://root:{pw}@127.0.0.1:{port}"))
    }

    fn backend(&self) -> DbBackend {
        DbBackend::MySql
    }

    fn engine_help(&self) -> [&'static str; 2] {
        [
            "MariaDB (capped container) through SeaORM",
            "the same MariaDB table and query through sqlx, server-side prepared statement",
        ]
    }

    fn use_namespace(&self, options: &mut ConnectOptions, namespace: &str) {
        let ns = namespace.to_string();
        options.map_sqlx_mysql_opts(move |o| o.database(&ns));
    }

    fn namespace_word(&self) -> &'static str {
        "database"
    }

    fn create_namespace_sql(&self, namespace: &str) -> String {
        format!("CREATE DATABASE IF NOT EXISTS {namespace}")
    }

    fn drop_namespace_sql(&self, namespace: &str) -> String {
        format!("DROP DATABASE IF EXISTS {namespace}")
    }

    fn packet_limit(&self) -> Option<PacketLimit> {
        Some(PacketLimit {
            query: "SELECT CAST(@@max_allowed_packet AS SIGNED) AS n",
            what: "MariaDB max_allowed_packet",
            fix: "start mariadbd with --max-allowed-packet=256M (compose/compose.yaml does)",
        })
    }

    /// InnoDB reads with O_DIRECT (>= 10.6): its buffer pool is its cache. Resized
    /// online (in chunks, rounded to them: the value read back is recorded).
    fn cache(&self) -> CacheSetting {
        CacheSetting {
            name: "innodb_buffer_pool_size",
            read_sql: "SELECT CAST(@@innodb_buffer_pool_size AS SIGNED) AS n",
            set_sql: |bytes| format!("SET GLOBAL innodb_buffer_pool_size = {bytes}"),
            applied_by_restart: false,
        }
    }

    /// 5/8 of the cap (640M of 1 GiB, the usual ~60% of a dedicated server), but at
    /// least 160 MiB left for the rest of it: with a 40M pool it peaked at 150 MiB
    /// anonymous memory while loading (96M of a 256 MiB cap).
    fn cache_bytes_for_cap(&self, cap_bytes: u64) -> u64 {
        (cap_bytes * 5 / 8).min(cap_bytes.saturating_sub(160 << 20)) >> 20 << 20
    }

    /// Under 96 MiB and 128 MiB caps it was OOM-killed while loading.
    fn min_cap_bytes(&self) -> u64 {
        256 << 20
    }

    fn settings_queries(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("server_version", "SELECT CAST(VERSION() AS CHAR)"),
            (
                "innodb_buffer_pool_size",
                "SELECT CAST(@@innodb_buffer_pool_size AS CHAR)",
            ),
            (
                "innodb_flush_method",
                "SELECT CAST(@@innodb_flush_method AS CHAR)",
            ),
            (
                "max_allowed_packet",
                "SELECT CAST(@@max_allowed_packet AS CHAR)",
            ),
        ]
    }

    fn container_data_dir(&self) -> &'static str {
        "/var/lib/mysql"
    }

    fn colours(&self) -> [(u8, u8, u8); 2] {
        [(230, 120, 20), (245, 185, 110)]
    }
}
