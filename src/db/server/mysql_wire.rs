//! What MariaDB, MySQL and Dolt share: they speak MySQL's wire protocol, a dataset's
//! namespace is a database, and a blob must fit one packet. Each descriptor calls
//! these, so the servers' tests on MariaDB and Dolt exercise the code MySQL runs too.

use sea_orm::ConnectOptions;

use super::{CacheSetting, ComposeEnv, PacketLimit, compose_port};

/// The `SqlServer` methods every MySQL-wire server writes alike, inside its `impl
/// SqlServer` block: SeaORM's MySQL backend, a database per dataset (connected into,
/// created, dropped), and the range read of `verify` and the prefill. `set_names`: as
/// `connection_setup` takes it.
macro_rules! mysql_wire_sql {
    (set_names: $set_names:expr) => {
        fn backend(&self) -> sea_orm::DbBackend {
            sea_orm::DbBackend::MySql
        }

        fn connection_setup(&self, options: &mut sea_orm::ConnectOptions, namespace: Option<&str>) {
            $crate::db::server::mysql_wire::connection_setup(options, namespace, $set_names)
        }

        fn namespace_word(&self) -> &'static str {
            "database"
        }

        fn create_namespace_sql(&self, namespace: &str) -> String {
            $crate::db::server::mysql_wire::create_database_sql(namespace)
        }

        fn drop_namespace_sql(&self, namespace: &str) -> String {
            $crate::db::server::mysql_wire::drop_database_sql(namespace)
        }

        fn read_range_sql(
            &self,
            first: &str,
            last: &str,
            _options: &$crate::db::knobs::Knobs,
        ) -> String {
            $crate::db::server::mysql_wire::read_range_sql(first, last)
        }
    };
}
pub(crate) use mysql_wire_sql;

/// `mysql://root:<password>@127.0.0.1:<port>` from compose/.env, where it has the password.
pub fn compose_url(
    env: &ComposeEnv,
    password_key: &str,
    port_key: &str,
    default_port: &str,
) -> Option<String> {
    let port = compose_port(env, port_key, default_port);
    env.get(password_key)
        .map(|pw| format!("mysql://root:{pw}@127.0.0.1:{port}"))
}

/// A dataset's namespace is a database: connect into it. `set_names`: sqlx's
/// `SET NAMES utf8mb4` after connecting; Dolt 0.40 refuses it inside the one `SET`
/// sqlx sends ("Unknown system variable 'NAMES'") and talks utf8mb4 anyway. (One
/// closure: sea-orm keeps only the last one given.)
pub fn connection_setup(options: &mut ConnectOptions, namespace: Option<&str>, set_names: bool) {
    let ns = namespace.map(str::to_string);
    options.map_sqlx_mysql_opts(move |o| {
        let o = o.set_names(set_names);
        match &ns {
            Some(ns) => o.database(ns),
            None => o,
        }
    });
}

pub fn create_database_sql(namespace: &str) -> String {
    format!("CREATE DATABASE IF NOT EXISTS {namespace}")
}

pub fn drop_database_sql(namespace: &str) -> String {
    format!("DROP DATABASE IF EXISTS {namespace}")
}

/// sqlx splits packets over 16 MiB, but the server refuses any over
/// `max_allowed_packet` (error 1153): checked against the largest blob before loading.
pub fn packet_limit(what: &'static str, fix: &'static str) -> PacketLimit {
    PacketLimit {
        query: "SELECT CAST(@@max_allowed_packet AS SIGNED) AS n",
        what,
        fix,
    }
}

/// The steady-state prefill: every blob of the range read whole (LENGTH() of an
/// off-page BLOB copies it in InnoDB; Dolt reads each blob's chunks).
pub fn read_range_sql(first: &str, last: &str) -> String {
    format!(
        "SELECT CAST(COALESCE(SUM(LENGTH(data)), 0) AS SIGNED) AS n FROM blobs WHERE id BETWEEN {first} AND {last}"
    )
}

/// InnoDB's prefill setting. Its buffer pool inserts a page read for the first time at
/// the midpoint of its LRU list, the head of the old sublist (`innodb_old_blocks_pct`,
/// 37%), and while the pool fills from empty (before its first eviction) it moves no
/// page on a later read: the midpoint alone moves, one page at a time, to keep old at
/// 37%. So about 3 of each 64 KiB blob's 5 pages became young and 2 stayed old, and once
/// the pool overflowed the old parts were evicted first. Measured at 64 KiB (3 GiB, 640
/// MiB pool, 2026-12-05): the young sublist held 7,674 runs of 2 pages and 3,594 of 1
/// page against 2,732 whole blobs, and fetches hit 7.0% where the pool held 16% of the
/// dataset's pages. With old at 95% for the prefill, its pages stay in insertion order
/// (whole blobs, evicted whole from the tail), and putting 37% back moves the midpoint
/// over whole blobs. `innodb_old_blocks_time` 0 with every chunk read twice did not help:
/// before the first eviction a second read moves nothing.
pub const INNODB_PREFILL: [(&str, &str); 1] = [("innodb_old_blocks_pct", "95")];

/// The version query every MySQL-wire server answers.
pub const VERSION: (&str, &str) = ("server_version", "SELECT CAST(VERSION() AS CHAR)");
/// ... and its packet limit, recorded with each result.
pub const MAX_ALLOWED_PACKET: (&str, &str) = (
    "max_allowed_packet",
    "SELECT CAST(@@max_allowed_packet AS CHAR)",
);

/// InnoDB's buffer pool (MariaDB, MySQL): resized online in chunks (the value read
/// back is recorded), lost on restart, so set again after every cold restart.
pub fn innodb_buffer_pool() -> CacheSetting {
    CacheSetting {
        name: "innodb_buffer_pool_size",
        read_sql: "SELECT CAST(@@innodb_buffer_pool_size AS SIGNED) AS n",
        set_sql: |bytes| format!("SET GLOBAL innodb_buffer_pool_size = {bytes}"),
        applied_by_restart: false,
    }
}

/// The buffer pool for a cap: 5/8 of it (640M of 1 GiB, the usual ~60% of a dedicated
/// server), but no more than what the server's own memory (`own_bytes`) leaves.
pub fn buffer_pool_for_cap(cap_bytes: u64, own_bytes: u64) -> u64 {
    (cap_bytes * 5 / 8).min(cap_bytes.saturating_sub(own_bytes)) >> 20 << 20
}

/// What InnoDB servers record with each result: version, pool, flush method (O_DIRECT
/// or not decides what the page cache holds) and packet limit.
pub const INNODB_SETTINGS: [(&str, &str); 4] = [
    VERSION,
    (
        "innodb_buffer_pool_size",
        "SELECT CAST(@@innodb_buffer_pool_size AS CHAR)",
    ),
    (
        "innodb_flush_method",
        "SELECT CAST(@@innodb_flush_method AS CHAR)",
    ),
    MAX_ALLOWED_PACKET,
];

/// InnoDB (MariaDB, MySQL) purges old row versions by itself: it cannot be stopped for
/// one table.
pub const INNODB_CLEANUP_ALWAYS_ON: &str = "InnoDB purges old row versions by itself and cannot be stopped for one table: it ran as by default";

/// OPTIMIZE TABLE rebuilds an InnoDB table (and analyzes it).
pub fn compaction_sql() -> Vec<String> {
    vec!["OPTIMIZE TABLE blobs".into()]
}

/// InnoDB's history list (undo not yet purged) and the table's free space.
pub fn cleanup_facts_sql() -> Vec<String> {
    vec![
        "SELECT 'InnoDB history length' AS name, CAST(COUNT AS SIGNED) AS value FROM information_schema.INNODB_METRICS \
         WHERE NAME = 'trx_rseg_history_len' \
         UNION ALL SELECT 'table free bytes (DATA_FREE)', CAST(DATA_FREE AS SIGNED) FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'blobs'"
            .into(),
    ]
}
