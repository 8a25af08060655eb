//! Where datasets live: the data directory for the embedded stores, servers by
//! URL, and the run options that make a server dataset a different one. Built by
//! `config`; read by the stores and engines of every database.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::dataset::lock::Waiting;
use crate::db::rocksdb::blob_files::BlobFiles;
use crate::db::server::{Server, ServerOptions};

/// SQLite's default page size, the SQLite datasets' default layout.
pub const DEFAULT_SQLITE_PAGE_SIZE: u32 = 4096;

#[derive(Debug, Clone)]
pub struct Locations {
    pub data_dir: PathBuf,
    /// Server URLs carry passwords: never written to results (see `server::redact_url`).
    pub server_urls: BTreeMap<Server, String>,
    /// Where the engines fetch from, where it is not the server's URL: through the
    /// latency proxy of `--network-rtt` (loads, caps and placement use `server_urls`).
    pub fetch_urls: BTreeMap<Server, String>,
    pub server_options: ServerOptions,
    /// SQLite's page size for its dataset files (a layout: each its own file).
    pub sqlite_page_size: u32,
    /// SQLite's mmap_size on the engines' connections (a read setting: same file).
    pub sqlite_mmap_size: u64,
    /// RocksDB's values in blob files or not, and from what size (a layout: each its
    /// own directory).
    pub rocksdb_blob_files: BlobFiles,
    /// The measuring process's memory cap, where one is set: what an embedded store
    /// sizes a cache of its own from (redb's).
    pub memory_cap_bytes: Option<u64>,
    /// A dataset another process holds: wait for it, or refuse (`--no-wait`).
    pub lock_waiting: Waiting,
}

impl Locations {
    /// The configured URL of a server, if any.
    pub fn server_url(&self, server: Server) -> Option<&str> {
        self.server_urls.get(&server).map(String::as_str)
    }

    /// The URL a server's engines fetch through: the proxy's where the run put a
    /// network in the path, else the server's own.
    pub fn fetch_url(&self, server: Server) -> Option<&str> {
        self.fetch_urls
            .get(&server)
            .map(String::as_str)
            .or_else(|| self.server_url(server))
    }
}

impl Default for Locations {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::new(),
            server_urls: BTreeMap::new(),
            fetch_urls: BTreeMap::new(),
            server_options: ServerOptions::default(),
            sqlite_page_size: DEFAULT_SQLITE_PAGE_SIZE,
            sqlite_mmap_size: 0,
            rocksdb_blob_files: BlobFiles::default(),
            memory_cap_bytes: None,
            lock_waiting: Waiting::Wait,
        }
    }
}
