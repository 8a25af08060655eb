//! Where datasets live: the data directory for the embedded stores, servers by
//! URL, and the run options that make a server dataset a different one. Built by
//! `config` (the top layer); read by stores and engines.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::server::{Server, ServerOptions};

#[derive(Debug, Clone, Default)]
pub struct Locations {
    pub data_dir: PathBuf,
    /// Server URLs carry passwords: never written to results (see `server::redact_url`).
    pub server_urls: BTreeMap<Server, String>,
    pub server_options: ServerOptions,
}

impl Locations {
    /// The configured URL of a server, if any.
    pub fn server_url(&self, server: Server) -> Option<&str> {
        self.server_urls.get(&server).map(String::as_str)
    }
}
