//! MariaDB. InnoDB (>= 10.6) reads its data files with O_DIRECT: its cache under
//! the container cap is the buffer pool, not the page cache. A blob must fit one
//! packet: sqlx splits packets over 16 MiB, but the server refuses anything over
//! `max_allowed_packet` (error 1153), so that limit is checked before loading.

pub mod knobs;

pub use knobs::{MariadbCompression, MariadbKnobs};

use crate::db::knobs::Knobs;
use crate::db::server::mysql_wire;
use crate::db::server::{
    CacheSetting, ComposeEnv, Loading, MemoryModel, PacketLimit, Recording, ServerDb, SqlServer,
};

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

    fn other_variables(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "BLOBRACE_MARIADB_BUFFER_POOL",
            "compose: MariaDB's own buffer pool",
        )]
    }

    fn url_from_compose(&self, env: &ComposeEnv) -> Option<String> {
        mysql_wire::compose_url(env, "MARIADB_ROOT_PASSWORD", &self.port_env(), "13306")
    }

    fn container_data_dir(&self) -> &'static str {
        "/var/lib/mysql"
    }

    fn sql(&self) -> Option<&dyn SqlServer> {
        Some(self)
    }
}

/// How it is spoken to: SQL over its wire protocol.
impl SqlServer for Mariadb {
    mysql_wire::mysql_wire_sql!(set_names: true);

    fn engine_help(&self) -> [&'static str; 2] {
        [
            "MariaDB (capped container) through SeaORM",
            "the same MariaDB table and query through sqlx, server-side prepared statement",
        ]
    }

    fn prefill_settings(&self) -> &'static [(&'static str, &'static str)] {
        &mysql_wire::INNODB_PREFILL
    }

    /// A compressed column is a different dataset: its own database.
    fn namespace_suffix(&self, options: &Knobs) -> &'static str {
        match options.get::<MariadbKnobs>().compression {
            MariadbCompression::None => "",
            MariadbCompression::Zlib => "_zlib",
        }
    }

    fn layout_words(&self, options: &Knobs) -> Option<String> {
        (!self.namespace_suffix(options).is_empty()).then(|| "compression zlib".into())
    }
}

/// What Mariadb records with each result, and how its bytes on disk are read.
impl Recording for Mariadb {
    fn compression(&self, options: &Knobs) -> String {
        match options.get::<MariadbKnobs>().compression {
            MariadbCompression::None => {
                "none: a plain LONGBLOB (COMPRESSED columns with --mariadb-compression zlib)".into()
            }
            MariadbCompression::Zlib => "zlib: the column declared COMPRESSED".into(),
        }
    }

    /// The table's own tablespace file (innodb_file_per_table, the default): its
    /// clustered index with the rows, off-page blob pages and any secondary index.
    /// ALLOCATED_SIZE is the file's blocks on disk.
    /// The tablespaces' files (information_schema.TABLES' figure is InnoDB's stale
    /// statistics: 288 KiB for 97 MiB of 64 KiB blobs just loaded). Listed only once
    /// opened since the server started: `inventory` opens each table first.
    fn namespace_bytes_sql(&self, namespace: &str) -> Option<String> {
        Some(format!(
            "SELECT CAST(SUM(ALLOCATED_SIZE) AS SIGNED) AS n FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME LIKE '{namespace}/%'"
        ))
    }

    fn disk_bytes_sql(&self, namespace: &str, _options: &Knobs) -> Option<String> {
        Some(format!(
            "SELECT CAST(ALLOCATED_SIZE AS SIGNED) AS n FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME = '{namespace}/blobs'"
        ))
    }

    fn settings_queries(&self) -> &'static [(&'static str, &'static str)] {
        &SETTINGS
    }
}

/// How a dataset is written into Mariadb and dropped from it.
impl Loading for Mariadb {
    fn packet_limit(&self) -> Option<PacketLimit> {
        Some(mysql_wire::packet_limit(
            "MariaDB max_allowed_packet",
            "start mariadbd with --max-allowed-packet=256M (compose/compose.yaml does)",
        ))
    }

    fn cleanup_off_sql(&self) -> Result<Vec<String>, &'static str> {
        Err(mysql_wire::INNODB_CLEANUP_ALWAYS_ON)
    }

    /// The column declared COMPRESSED before the first row (an ALTER of a column
    /// already so declared changes nothing, so a resumed load is not rebuilt).
    fn table_setup_sql(
        &self,
        options: &Knobs,
        _content: crate::dataset::documents::Content,
    ) -> Vec<String> {
        match options.get::<MariadbKnobs>().compression {
            MariadbCompression::None => Vec::new(),
            MariadbCompression::Zlib => {
                vec!["ALTER TABLE blobs MODIFY data LONGBLOB COMPRESSED NOT NULL".into()]
            }
        }
    }

    fn compaction_sql(&self) -> Result<Vec<String>, &'static str> {
        Ok(mysql_wire::compaction_sql())
    }

    fn cleanup_facts_sql(&self) -> Vec<String> {
        mysql_wire::cleanup_facts_sql()
    }
}

/// What Mariadb holds in memory, for fitting it under a cap.
impl MemoryModel for Mariadb {
    /// InnoDB reads with O_DIRECT (>= 10.6): its buffer pool is its cache. Resized
    /// online (in chunks, rounded to them: the value read back is recorded).
    fn cache(&self) -> Option<CacheSetting> {
        Some(mysql_wire::innodb_buffer_pool())
    }

    /// 5/8 of the cap (640M of 1 GiB, the usual ~60% of a dedicated server), but no
    /// more than what its own memory leaves (`own_memory_bytes`).
    fn cache_bytes_for_cap(&self, cap_bytes: u64, largest_blob: u64) -> u64 {
        mysql_wire::buffer_pool_for_cap(cap_bytes, own_memory_bytes(largest_blob))
    }

    /// Its own memory plus the smallest pool it was measured with: under 96 MiB and
    /// 128 MiB caps it was OOM-killed while loading 64 KiB blobs, and a 256 MiB cap
    /// with a 96M pool killed it loading 32 MiB blobs.
    fn min_cap_bytes(&self, largest_blob: u64) -> u64 {
        own_memory_bytes(largest_blob) + MIN_POOL_BYTES
    }

    /// Reading, its memory besides a full pool is about half of what loading needs:
    /// 173 MiB anonymous memory with a 96 MiB pool serving one client 4 MiB blobs.
    fn serving_memory_bytes(&self) -> u64 {
        80 << 20
    }

    /// The row buffer and the packet buffer: 56 MiB more per client of 32 MiB blobs
    /// (665 MiB at 1 client, 833 MiB at 4, 1 GiB cap).
    fn fetch_copies(&self) -> u64 {
        2
    }

    /// The buffer pool is the process's own memory, not page cache (and InnoDB reads
    /// with O_DIRECT, so the page cache holds little of the data).
    fn private_cache_sql(&self) -> Option<&'static str> {
        Some(
            "SELECT CAST(VARIABLE_VALUE AS SIGNED) AS n FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_BUFFER_POOL_BYTES_DATA'",
        )
    }
}

/// InnoDB's settings, and the blob column's type (`longblob /*M!100301 COMPRESSED*/`
/// where compressed) with the compression level.
const SETTINGS: [(&str, &str); 6] = [
    mysql_wire::INNODB_SETTINGS[0],
    mysql_wire::INNODB_SETTINGS[1],
    mysql_wire::INNODB_SETTINGS[2],
    mysql_wire::INNODB_SETTINGS[3],
    (
        "data_column",
        "SELECT CAST(COLUMN_TYPE AS CHAR) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'blobs' AND COLUMN_NAME = 'data'",
    ),
    (
        "column_compression_zlib_level",
        "SELECT CAST(@@column_compression_zlib_level AS CHAR)",
    ),
];

/// The smallest buffer pool the suite gives MariaDB (its pool at a 256 MiB cap).
const MIN_POOL_BYTES: u64 = 96 << 20;

/// MariaDB's memory besides its buffer pool, with blobs up to `largest_blob`: 160 MiB
/// for blobs up to 4 MiB (with a 40M pool it peaked at 150 MiB anonymous memory while
/// loading 64 KiB blobs), and about 4x each blob beyond that: one row goes through the
/// packet buffer, the bound parameter and InnoDB's copy of the record, and back out
/// through the row buffer and the packet buffer (loading and reading 96 MiB of 32 MiB
/// blobs peaked 96 MiB above the same run with 4 MiB blobs, pool alike).
fn own_memory_bytes(largest_blob: u64) -> u64 {
    (144 << 20) + 4 * largest_blob.max(4 << 20)
}
