//! SeaweedFS, an S3-compatible object store built for many small files: master,
//! volume server, filer and S3 gateway in one `weed server` process in its own
//! capped container (compose service `seaweedfs`). A blob is an object, a dataset a
//! bucket (`store.rs`); a fetch is one GET through an S3 client (`engine.rs`,
//! `s3.rs`); buckets are made, dropped and measured with its own shell inside the
//! container (`admin.rs`). Objects live in 1 GiB volume files: the volume server
//! keeps each object's offset in memory and reads it with one `pread`, through the
//! page cache, inside the container's cap.

pub mod admin;
pub mod engine;
pub mod s3;
mod s3_admin;
pub mod store;

use super::any_engine::AnyEngine;
use super::database::{Database, EngineDef, Open};
use super::engine::Client;
use super::server::{
    CacheSetting, ComposeEnv, Listing, MemoryModel, Recording, Server, ServerDb, SqlServer,
    compose_port,
};
use super::store::{BoxedStore, boxed};
use crate::dataset::DatasetSpec;
use crate::db::locations::Locations;
use crate::db::server::place::Places;

pub struct Seaweedfs;

impl ServerDb for Seaweedfs {
    fn name(&self) -> &'static str {
        "seaweedfs"
    }

    fn url_flag(&self) -> &'static str {
        "seaweedfs-url"
    }

    fn url_env(&self) -> &'static str {
        "BLOBRACE_SEAWEEDFS_URL"
    }

    fn url_help(&self) -> &'static str {
        "SeaweedFS S3 URL, s3://ACCESS_KEY:SECRET@host:port (s3+https:// for TLS), for the seaweedfs engine. Default: compose/.env's SEAWEEDFS_ACCESS_KEY / SEAWEEDFS_SECRET_KEY on 127.0.0.1:BLOBRACE_SEAWEEDFS_PORT."
    }

    fn other_variables(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "BLOBRACE_SEAWEEDFS_VERSION",
                "scripts: the SeaweedFS stand-in's version",
            ),
            (
                "BLOBRACE_SEAWEEDFS_GOMEMLIMIT",
                "compose: SeaweedFS's GOMEMLIMIT",
            ),
        ]
    }

    fn url_from_compose(&self, env: &ComposeEnv) -> Option<String> {
        let key = env.get("SEAWEEDFS_ACCESS_KEY")?;
        let secret = env.get("SEAWEEDFS_SECRET_KEY")?;
        let port = compose_port(env, &self.port_env(), "18333");
        Some(format!("s3://{key}:{secret}@127.0.0.1:{port}"))
    }

    fn container_data_dir(&self) -> &'static str {
        "/data"
    }

    fn sql(&self) -> Option<&dyn SqlServer> {
        None
    }

    /// Its buckets named like a dataset's (`store::bucket_name`), with their volume
    /// files' bytes.
    fn list_datasets(&self) -> Option<Listing> {
        let (service, data_dir) = (ServerDb::name(self), self.container_data_dir());
        Some(Box::pin(async move {
            let mut found = Vec::new();
            // The compose container's own buckets: no run located it elsewhere.
            let compose = Places::default();
            for bucket in admin::buckets(&compose, service).await? {
                if bucket.starts_with("blobs-") {
                    let bytes =
                        admin::bucket_disk_bytes(&compose, service, None, data_dir, &bucket)
                            .await
                            .ok()
                            .flatten();
                    found.push((bucket, bytes));
                }
            }
            Ok(found)
        }))
    }
}

/// What it records: no SQL to ask; its version comes from `weed version` in its
/// container (the engine's settings), GOMEMLIMIT and the filer index's cache sizes
/// (set from the cap by its entrypoint) from its process.
impl Recording for Seaweedfs {
    /// Its volume server gzips an upload whose content type says text, JSON or HTML
    /// where that saves 10% or more; the type is the content's (`Content::mime`).
    fn compression(&self, _options: &crate::db::knobs::Knobs) -> String {
        "gzip where the upload's content type says text, JSON or HTML and it saves 10%".into()
    }

    fn namespace_bytes_sql(&self, _namespace: &str) -> Option<String> {
        None
    }

    fn settings_queries(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    fn process_env(&self) -> &'static [&'static str] {
        &[
            "GOMEMLIMIT",
            "WEED_LEVELDB2_BLOCK_CACHE_SIZE_MB",
            "WEED_LEVELDB2_WRITE_BUFFER_SIZE_MB",
        ]
    }
}

/// No cache of its own to size: it reads objects through the page cache, which the
/// container's cap bounds.
impl MemoryModel for Seaweedfs {
    fn cache(&self) -> Option<CacheSetting> {
        None
    }

    fn cache_bytes_for_cap(&self, _cap_bytes: u64, _largest_blob: u64) -> u64 {
        0
    }

    /// Measured loading 1 KiB objects (the most metadata a byte): under a 256 MiB cap
    /// it was OOM-killed twice (anonymous memory 260 MB at the kill, GOMEMLIMIT 192
    /// MiB notwithstanding: the filer's two 40 MiB metadata-log rings, its index's
    /// LevelDB memtables, the log it reads back after a restart); under 512 MiB its RSS
    /// peaked at 330 MB. The loader keeps at most 64 MiB of objects in flight
    /// (`store::requests_in_flight`), so larger blobs need no more.
    fn min_cap_bytes(&self, _largest_blob: u64) -> u64 {
        512 << 20
    }

    /// Measured: the `weed server` process's RSS 189 MB idle after a restart under a
    /// 1 GiB cap (master, volume server, filer and S3 gateway in one Go process).
    fn serving_memory_bytes(&self) -> u64 {
        190 << 20
    }

    /// Measured: its RSS peaked at 416 MB with 16 clients fetching 4 MiB objects (1 GiB
    /// cap, cold), (416 - 190) MB / 16 / 4 MiB = 3.5 blob-sized buffers a fetch: the
    /// volume server's read, the gateway's copy, their HTTP buffers.
    fn fetch_copies(&self) -> u64 {
        4
    }
}

impl Database for Seaweedfs {
    /// About 950 PUTs a second of 1 KiB objects: an hour for 3 GiB.
    fn load_cost(&self) -> crate::db::database::LoadCost {
        crate::db::database::LoadCost {
            micros_per_row: 1050.0,
            mb_per_s: 100.0,
        }
    }

    fn name(&self) -> &'static str {
        "seaweedfs"
    }

    fn engines(&self) -> Vec<EngineDef> {
        vec![EngineDef {
            name: "seaweedfs",
            help: "GET the blob's object from a SeaweedFS bucket through an S3 client (object_store), body streamed into a reused buffer: the object store",
            client: Client::S3,
            client_copies: 3,
            open: Open::Server(|server, at, spec| {
                Box::pin(async move {
                    Ok(AnyEngine::S3(
                        engine::S3Engine::open(server, at, spec).await?,
                    ))
                })
            }),
        }]
    }

    fn open_store(&self, at: &Locations, spec: DatasetSpec) -> BoxedStore {
        let server = Server::named(Database::name(self)).expect("every server is registered");
        boxed(store::S3Store::new(
            server,
            at.server_url(server),
            spec,
            at.places.clone(),
        ))
    }

    fn server(&self) -> Option<&dyn ServerDb> {
        Some(self)
    }
}
