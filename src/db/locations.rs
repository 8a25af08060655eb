//! Where datasets live: the data directory for the embedded stores, servers by
//! URL, and each database's knobs (a layout makes a dataset a different one). Built by
//! `config`; read by the stores and engines of every database.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::dataset::lock::Waiting;
use crate::db::knobs::Knobs;
use crate::db::server::Server;
use crate::db::server::place::Places;

#[derive(Debug, Clone)]
pub struct Locations {
    pub data_dir: PathBuf,
    /// Server URLs carry passwords: never written to results (see `server::redact_url`).
    pub server_urls: BTreeMap<Server, String>,
    /// Where the engines fetch from, where it is not the server's URL: through the
    /// latency proxy of `--network-rtt` (loads, caps and placement use `server_urls`).
    pub fetch_urls: BTreeMap<Server, String>,
    /// Where the run found each server (`place`): what acts on a server beyond its URL
    /// (its container's cap, restarts, files) acts only on one found in its compose
    /// container.
    pub places: Places,
    /// Each database's own knobs (a layout such as SQLite's page size, a read setting
    /// such as its mmap_size, PostgreSQL's storage), each read by its own database.
    pub knobs: Knobs,
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
            places: Places::default(),
            knobs: Knobs::default(),
            memory_cap_bytes: None,
            lock_waiting: Waiting::Wait,
        }
    }
}
