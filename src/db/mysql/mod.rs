//! MySQL (8.4, the official image): InnoDB like MariaDB, set up the same way (buffer
//! pool 5/8 of the cap, `max_allowed_packet` 256M, no buffer-pool dump and reload, so
//! a restart is a cold start). InnoDB's default flush method on Linux is O_DIRECT
//! since 8.4 (`innodb_flush_method`, recorded with each result): its cache under the
//! cap is the buffer pool. Debian has no MySQL package to build a stand-in from: where
//! the image cannot be pulled the engines are skipped, saying so.

use crate::db::server::mysql_wire;
use crate::db::server::{
    CacheSetting, ComposeEnv, Loading, MemoryModel, PacketLimit, Recording, ServerDb, SqlServer,
};

pub struct Mysql;

impl ServerDb for Mysql {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn url_flag(&self) -> &'static str {
        "mysql-url"
    }

    fn url_env(&self) -> &'static str {
        "BLOBRACE_MYSQL_URL"
    }

    fn url_help(&self) -> &'static str {
        "MySQL URL (a user that may create databases) for the mysql engines. Default: root, from compose/.env."
    }

    fn url_from_compose(&self, env: &ComposeEnv) -> Option<String> {
        mysql_wire::compose_url(env, "MYSQL_ROOT_PASSWORD", &self.port_env(), "13308")
    }

    fn unreachable_hint(&self) -> String {
        "MySQL runs from its official image only (Debian has no MySQL package to build a stand-in from): `docker pull mysql:8.4`, then scripts/servers.sh up".into()
    }

    fn container_data_dir(&self) -> &'static str {
        "/var/lib/mysql"
    }

    fn sql(&self) -> Option<&dyn SqlServer> {
        Some(self)
    }
}

/// How it is spoken to: SQL over its wire protocol.
impl SqlServer for Mysql {
    mysql_wire::mysql_wire_sql!(set_names: true);

    fn engine_help(&self) -> [&'static str; 2] {
        [
            "MySQL 8.4 (capped container, official image only) through SeaORM",
            "the same MySQL table and query through sqlx, server-side prepared statement",
        ]
    }

    fn prefill_settings(&self) -> &'static [(&'static str, &'static str)] {
        &mysql_wire::INNODB_PREFILL
    }
}

/// What Mysql records with each result, and how its bytes on disk are read.
impl Recording for Mysql {
    fn settings_queries(&self) -> &'static [(&'static str, &'static str)] {
        &mysql_wire::INNODB_SETTINGS
    }
}

/// How a dataset is written into Mysql and dropped from it.
impl Loading for Mysql {
    fn packet_limit(&self) -> Option<PacketLimit> {
        Some(mysql_wire::packet_limit(
            "MySQL max_allowed_packet",
            "start mysqld with --max-allowed-packet=256M (compose/compose.yaml does)",
        ))
    }

    fn cleanup_off_sql(&self) -> Result<Vec<String>, &'static str> {
        Err(mysql_wire::INNODB_CLEANUP_ALWAYS_ON)
    }

    fn compaction_sql(&self) -> Result<Vec<String>, &'static str> {
        Ok(mysql_wire::compaction_sql())
    }

    fn cleanup_facts_sql(&self) -> Vec<String> {
        mysql_wire::cleanup_facts_sql()
    }
}

/// What Mysql holds in memory, for fitting it under a cap.
impl MemoryModel for Mysql {
    /// Resized online like MariaDB's, and like it lost on restart (set again then).
    fn cache(&self) -> Option<CacheSetting> {
        Some(mysql_wire::innodb_buffer_pool())
    }

    /// As MariaDB's: 5/8 of the cap, leaving its own memory room.
    fn cache_bytes_for_cap(&self, cap_bytes: u64, largest_blob: u64) -> u64 {
        mysql_wire::buffer_pool_for_cap(cap_bytes, own_memory_bytes(largest_blob))
    }

    fn min_cap_bytes(&self, largest_blob: u64) -> u64 {
        own_memory_bytes(largest_blob) + (96 << 20)
    }

    fn serving_memory_bytes(&self) -> u64 {
        96 << 20
    }

    fn private_cache_sql(&self) -> Option<&'static str> {
        Some(
            "SELECT CAST(VARIABLE_VALUE AS SIGNED) AS n FROM performance_schema.global_status WHERE VARIABLE_NAME = 'Innodb_buffer_pool_bytes_data'",
        )
    }
}

/// Not measured here (no image): MariaDB's figure, a larger base for MySQL 8's
/// performance schema.
fn own_memory_bytes(largest_blob: u64) -> u64 {
    (192 << 20) + 4 * largest_blob.max(4 << 20)
}
