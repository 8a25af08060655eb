//! Dolt: a versioned SQL database speaking MySQL's wire protocol (its storage is a
//! content-addressed chunk store: a blob is a tree of chunks, read and hashed on the
//! way). It has no buffer pool setting: it caches in Go's heap and the page cache,
//! both inside its container's cap, and Go's garbage collector does not see that cap:
//! GOMEMLIMIT (recorded with each result) keeps the heap under it. A load ends with a
//! Dolt commit, so the data is an ordinary committed Dolt database.

use crate::db::knobs::Knobs;
use crate::db::server::mysql_wire;
use crate::db::server::{
    BulkLoad, CacheSetting, ComposeEnv, Loading, MemoryModel, PacketLimit, PieceSql, Recording,
    ServerDb, ServerPprof, SqlServer,
};

pub struct Dolt;

impl ServerDb for Dolt {
    fn name(&self) -> &'static str {
        "dolt"
    }

    fn url_flag(&self) -> &'static str {
        "dolt-url"
    }

    fn url_env(&self) -> &'static str {
        "BLOBRACE_DOLT_URL"
    }

    fn url_help(&self) -> &'static str {
        "Dolt sql-server URL (a user that may create databases) for the dolt engines. Default: root, from compose/.env."
    }

    fn other_variables(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "BLOBRACE_DOLT_VERSION",
                "scripts: the Dolt stand-in's version",
            ),
            ("BLOBRACE_DOLT_GOMEMLIMIT", "compose: Dolt's GOMEMLIMIT"),
        ]
    }

    fn url_from_compose(&self, env: &ComposeEnv) -> Option<String> {
        mysql_wire::compose_url(env, "DOLT_ROOT_PASSWORD", &self.port_env(), "13307")
    }

    /// `dolt --pprof-server sql-server` serves Go's pprof on the container's
    /// 127.0.0.1:6060 (the offline stand-in starts so; the official image's entrypoint
    /// takes no global flag).
    fn pprof(&self) -> Option<ServerPprof> {
        Some(ServerPprof {
            port: 6060,
            parts: DOLT_PARTS,
            how_to_enable: "start it as `dolt --pprof-server sql-server …` (the offline stand-in does; the official image's entrypoint does not)",
        })
    }

    fn container_data_dir(&self) -> &'static str {
        "/var/lib/dolt"
    }

    fn sql(&self) -> Option<&dyn SqlServer> {
        Some(self)
    }
}

/// How it is spoken to: SQL over its wire protocol.
impl SqlServer for Dolt {
    mysql_wire::mysql_wire_sql!(set_names: false);

    /// Dolt 0.40's SUBSTRING counts characters of a LONGBLOB, not bytes: a 4 MiB
    /// value read in 64 KiB pieces ended at 4,050,378 bytes (measured 2026-11-26).
    fn piece_sql(&self, _options: &Knobs) -> Result<PieceSql, &'static str> {
        Err(
            "whole value only: Dolt 0.40's SUBSTRING() counts characters of a blob, not bytes (pieces of a 4 MiB value ended 143,926 bytes short)",
        )
    }

    /// Four chunks at once: its prefill of 3 GiB of 64 KiB rows under the 1 GiB cap took
    /// 50.0 and 50.1 s one chunk at a time, 16.0 and 17.0 s on four connections, with
    /// the same steady state after it (hit ratio 22.1-23.6% either way; p50 1.86 ms
    /// (1.81-1.92) against 1.90 (1.82-1.97), 2.59 (2.54-2.65) against 2.68 (2.55-2.81):
    /// A, B, A, B, 2026-12-07). MariaDB's prefill was 2.7x sooner the same way, but its
    /// steady p50 came out 1.10-1.14x slower in both pairs, and PostgreSQL's took 11 s
    /// against 12: both stay at one.
    fn prefill_connections(&self) -> usize {
        4
    }

    fn engine_help(&self) -> [&'static str; 2] {
        [
            "Dolt sql-server (capped container) through SeaORM's MySQL backend",
            "the same Dolt table and query through sqlx, prepared statement",
        ]
    }
}

/// What Dolt records with each result, and how its bytes on disk are read.
impl Recording for Dolt {
    /// Its storage format compresses every chunk with Snappy: no setting turns it off.
    /// Measured here: 3 GiB of text (2.4:1 under deflate) kept in 1.53 bytes per blob
    /// byte against random bytes' 2.38 (64 KiB blobs, 2026-12-07).
    fn compression(&self, _options: &crate::db::knobs::Knobs) -> String {
        "Snappy on every chunk (its storage format)".into()
    }

    /// Dolt keeps each database in its own directory under its data dir, and
    /// information_schema.TABLES has no sizes for it.
    fn namespace_dir(&self, namespace: &str) -> Option<String> {
        Some(format!("{}/{namespace}", self.container_data_dir()))
    }

    fn namespace_bytes_sql(&self, _namespace: &str) -> Option<String> {
        None
    }

    fn settings_queries(&self) -> &'static [(&'static str, &'static str)] {
        &[
            mysql_wire::VERSION,
            ("dolt_version", "SELECT CAST(dolt_version() AS CHAR)"),
            mysql_wire::MAX_ALLOWED_PACKET,
        ]
    }

    /// Go's memory limit and GC target as the server process got them.
    fn process_env(&self) -> &'static [&'static str] {
        &["GOMEMLIMIT", "GOGC"]
    }
}

/// How a dataset is written into Dolt and dropped from it.
impl Loading for Dolt {
    /// Its chunk store keeps much more than the blobs up to 4 MiB: 3 GiB of blobs took
    /// 12.21 GiB at 1 KiB, 8.22 at 8 KiB, 7.14 at 64 KiB, 6.62 GiB for 6,120 of 6,144
    /// rows at 512 KiB, 7.12 at 4 MiB, and 3.05 GiB at 32 MiB (full profile,
    /// 2026-11-27/28, the loads' own figures). Its load at 512 KiB filled the disk
    /// where the plan had allowed the other servers' 1.2.
    fn disk_bytes_per_blob_byte(&self, blob_bytes: u64) -> f64 {
        match blob_bytes {
            0..=1024 => 4.1,
            1025..=8192 => 2.8,
            8193..=4194304 => 2.4,
            _ => 1.1,
        }
    }

    /// 3 GiB of 1 KiB rows in 876 s (4 MB/s): its per-row work.
    fn load_cost(&self) -> crate::db::database::LoadCost {
        crate::db::database::LoadCost {
            micros_per_row: 275.0,
            mb_per_s: 100.0,
        }
    }

    fn packet_limit(&self) -> Option<PacketLimit> {
        Some(mysql_wire::packet_limit(
            "Dolt max_allowed_packet",
            "set max_allowed_packet in the server's config (or SET GLOBAL max_allowed_packet)",
        ))
    }

    /// A bound blob parameter is typed BLOB, and 0.40 refuses one over 65535 bytes
    /// ("length is 4194304 but max allowed is 65535") whatever the column is.
    /// Dolt's process does not give back what a load grew: under the quick 256 MiB cap
    /// its resident memory went from 77 MiB after a start to 190-225 MiB over a 768 MiB
    /// load of 1 KiB blobs (GOMEMLIMIT 192 MiB), and the next load (64 KiB, and in
    /// another run 4 MiB after three smaller ones) was OOM-killed within seconds. Alone
    /// after a start, the same 4 MiB load peaked at 182 MiB and finished.
    fn restart_after_load(&self) -> bool {
        true
    }

    fn bulk_load(&self) -> BulkLoad {
        BulkLoad::InsertInPieces(65535)
    }

    /// Dolt holds every row of a transaction as its own chunked blob until the
    /// commit: 16 MiB of 1 KiB rows on two connections (32,768 rows) OOM-killed it
    /// under the quick 256 MiB cap. One connection (the default): two at once put
    /// another batch's blob under a row's id (`verify`: id 499723 held id 501771's,
    /// the same place in the batch loading beside it), so Dolt 0.40 is loaded by one.
    fn max_batch_rows(&self) -> u64 {
        2048
    }

    /// Commit the loaded rows: a dataset is a committed Dolt database, as an
    /// application's would be, not an uncommitted working set. (0.40 has no
    /// `DOLT_COMMIT('-A')`: stage everything first.)
    fn after_load_sql(&self, _options: &Knobs) -> Vec<String> {
        vec![
            "CALL DOLT_ADD('.')".into(),
            "CALL DOLT_COMMIT('-m', 'blobrace: load the dataset')".into(),
        ]
    }

    /// A load stopped between marking its dataset complete and committing leaves both
    /// in the working set: complete to every reader, but not in Dolt's history.
    fn after_load_owed_sql(&self) -> Option<String> {
        Some("SELECT COUNT(*) AS n FROM dolt_status".into())
    }

    /// Dolt keeps every committed version of a row in its history.
    fn cleanup_off_sql(&self) -> Result<Vec<String>, &'static str> {
        Err("Dolt runs no cleanup by itself: every committed version stays in its history")
    }

    /// Its garbage collection would be the compaction, but the stand-in's Dolt 0.40
    /// has no DOLT_GC procedure ("stored procedure "DOLT_GC" does not exist").
    fn compaction_sql(&self) -> Result<Vec<String>, &'static str> {
        Err(
            "blobrace runs no compaction on Dolt: 0.40, the stand-in's version, has no DOLT_GC procedure",
        )
    }
}

/// What Dolt holds in memory, for fitting it under a cap.
impl MemoryModel for Dolt {
    /// None to size: its caches are Go's heap (under GOMEMLIMIT) and the page cache.
    fn cache(&self) -> Option<CacheSetting> {
        None
    }

    fn cache_bytes_for_cap(&self, _cap_bytes: u64, _largest_blob: u64) -> u64 {
        0
    }

    /// Loading holds about 24 copies of the blob being inserted (it goes in 64 KiB
    /// pieces, each appended piece rewriting the value; the GC takes the garbage
    /// only as GOMEMLIMIT nears): anonymous memory peaked at 858 MiB loading 32 MiB
    /// blobs under a 1 GiB cap (8 and 32 rows alike) and at 198 MiB loading 4 MiB
    /// blobs under 256 MiB (GOMEMLIMIT 192 MiB); under 512 MiB it was OOM-killed on
    /// the first 32 MiB row. 2026-11-25, this project's machine.
    fn min_cap_bytes(&self, largest_blob: u64) -> u64 {
        DOLT_BASE_BYTES + DOLT_LOAD_COPIES * largest_blob.max(1 << 20)
    }

    fn serving_memory_bytes(&self) -> u64 {
        DOLT_SERVING_BYTES
    }

    fn fetch_copies(&self) -> u64 {
        DOLT_FETCH_COPIES
    }
}

/// Dolt's anonymous memory with nothing in flight, after a start: 87-98 MiB.
const DOLT_BASE_BYTES: u64 = 96 << 20;
/// Blob-sized copies Dolt holds while inserting one (`min_cap_bytes`).
const DOLT_LOAD_COPIES: u64 = 24;
/// Dolt's memory besides blobs in flight while it serves: its anonymous memory peaked
/// at 170 MiB serving one client 4 MiB blobs (1 GiB cap, GOMEMLIMIT 768 MiB), about one
/// fetch's 20 MiB above this.
const DOLT_SERVING_BYTES: u64 = 150 << 20;
/// Blob-sized buffers per fetch in flight inside Dolt: 170, 253, 314 MiB at 1, 4, 8
/// clients of 4 MiB blobs, ~20 MiB (5 blobs) more per client (the chunks, the
/// assembled value, the row and the packet, and garbage the GC has not yet taken).
const DOLT_FETCH_COPIES: u64 = 5;

/// Where Dolt's CPU time goes, by package (the innermost frame of one decides, so a
/// system call counts as one whoever made it, and an allocation as the allocator's).
const DOLT_PARTS: crate::cpu_profile::go_pprof::Parts = &[
    (
        "Go GC and allocation",
        &[
            "runtime.gc",
            "runtime.mallocgc",
            "runtime.scanobject",
            "runtime.markroot",
            "runtime.greyobject",
            "runtime.bgsweep",
            "runtime.sweepone",
            "runtime.(*mheap)",
            "runtime.(*mspan)",
            "runtime.(*mcache)",
            "runtime.(*gcWork)",
            "runtime.wbBuf",
            "runtime.bulkBarrier",
        ],
    ),
    (
        "system calls",
        &[
            "syscall.",
            "internal/poll.",
            "internal/runtime/syscall.",
            "runtime/internal/syscall.",
        ],
    ),
    (
        "storage (chunks, prolly trees)",
        &["github.com/dolthub/dolt/go/store/"],
    ),
    (
        "Dolt's SQL tables",
        &["github.com/dolthub/dolt/go/libraries/"],
    ),
    ("SQL engine", &["github.com/dolthub/go-mysql-server/"]),
    ("wire protocol", &["github.com/dolthub/vitess/"]),
];
