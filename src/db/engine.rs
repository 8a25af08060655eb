//! What one fetch is: the `Engine` trait every way of fetching implements, one file
//! each in its database's folder (`db/<name>/`). The engines themselves are
//! registered by their databases (`Database::engines`, `db/registry.rs`).
//!
//! `Engine::fetch` is the only code inside the timed span: it gets a row id and
//! must leave that row's bytes in `out`. Everything around it (choosing ids,
//! checking bytes, reading I/O counters, recording) happens outside the clock.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{Result, bail};

/// Settings an engine ran with, read back from the engine where it can tell.
pub type EngineSettings = BTreeMap<String, String>;

#[allow(async_fn_in_trait)]
pub trait Engine {
    /// Fetch row `id` into `out`. Timed: keep it to what an application does.
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()>;

    /// Called before each fetch of `id`, outside the timed span. Engines that hand back
    /// a freshly allocated buffer release the previous one here, so freeing the last
    /// result is not timed as part of the next fetch; engines that read into `out` in
    /// place size it here for a size mix's row (`size_for_row`), so zeroing its growth
    /// is not timed either.
    fn before_fetch(&mut self, _id: u64, _out: &mut Vec<u8>) {}

    /// Versions and settings to record with the result.
    fn settings(&self) -> EngineSettings;

    /// How this engine reads a blob piece by piece, as a page that streams a large
    /// blob does (the time to its first bytes); by default it cannot.
    fn streaming(&self) -> Streaming {
        Streaming::No("whole value only: its fetch returns the row whole")
    }

    /// Fetch row `id` into `out` in pieces of about `chunk` bytes, the way `streaming`
    /// says; returns when the first piece was in `out`. Timed whole, like `fetch`.
    async fn fetch_streamed(
        &mut self,
        _id: u64,
        _chunk: usize,
        _out: &mut Vec<u8>,
    ) -> Result<Instant> {
        bail!("this engine reads whole values only")
    }

    /// Release connections and files now, not in the background, so the next
    /// engine's cold start does not overlap this one's shutdown.
    async fn close(self) -> Result<()>
    where
        Self: Sized,
    {
        Ok(())
    }
}

/// Whether an engine can read a blob piece by piece, and how (or why not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streaming {
    /// It can: how its pieces are read.
    Chunks(&'static str),
    /// It cannot, or blobrace does not read it that way yet: why.
    No(&'static str),
}

/// How an engine reaches its store: the report pairs an ORM engine with the raw
/// one on the same store (what the ORM costs), and `verify` reads with the rawest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// SeaORM, as an application writes it.
    Orm,
    /// The driver under SeaORM (sqlx), prepared statement.
    Raw,
    /// No query language: system calls on files, or an embedded store's own read call
    /// (SQLite's incremental blob I/O, a key-value store's get).
    Direct,
    /// An object store's S3 client: one HTTP GET per blob.
    S3,
}

/// `out` sized for row `id` of `spec` where its rows differ in size (a size mix), outside
/// the clock: the engines that read a blob into `out` in place (the floor, fs, SQLite's
/// blob I/O) then find it the right length, and fill none of it inside the clock. A
/// size class's buffer keeps its one length.
#[inline]
pub fn size_for_row(spec: &crate::dataset::DatasetSpec, id: u64, out: &mut Vec<u8>) {
    if spec.mix.is_some() {
        out.resize(spec.blob_bytes(id) as usize, 0);
    }
}
