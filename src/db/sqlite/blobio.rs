//! `sqlite-blobio`: the same SQLite file read through SQLite's incremental blob I/O,
//! in this thread: `sqlite3_blob_open` on the row (the table's `id` is its rowid:
//! `INTEGER PRIMARY KEY`), `sqlite3_blob_read` straight into the caller's reused
//! buffer, and `sqlite3_blob_reopen` to move the handle to the next row. No SQL
//! statement per fetch and no copy of the row: SQLite reads a blob's overflow pages
//! straight into the output (its direct overflow read), where a statement reads
//! them into the row's value first.
//!
//! In a keyed dataset (`--key`) the key is not the rowid: a prepared
//! `SELECT rowid FROM blobs WHERE id = ?` finds the row through the key's index
//! first, as an application keyed by UUIDs would have to.
//!
//! An open blob handle keeps its read transaction open (it counts as a running
//! statement), so the handle sees one snapshot: right for a dataset nothing writes.
//! On a dataset being written (`--write-rate`) that snapshot goes stale (a reopened
//! handle returned a row's old version a writer had replaced seconds before, and the
//! open read transaction keeps WAL checkpoints from finishing), so there each fetch
//! opens its handle and closes it after the read: its own snapshot, as an application
//! reading a changing file must.

use std::ffi::c_int;
use std::ptr;
use std::time::Instant;

use anyhow::Result;
use libsqlite3_sys as ffi;

use super::c_api::Connection;
use super::stmt::{bind_id, open_loaded};
use crate::dataset::DatasetSpec;
use crate::db::engine::{Engine, EngineSettings, Streaming};
use crate::db::locations::Locations;

pub struct BlobIoEngine {
    /// Null until the first fetch opens it; then moved from row to row.
    blob: *mut ffi::sqlite3_blob,
    /// A keyed dataset's rowid lookup (null for integer ids: the id is the rowid).
    rowid_of_key: *mut ffi::sqlite3_stmt,
    spec: DatasetSpec,
    conn: Connection,
    settings: EngineSettings,
    /// Close the handle after each fetch (a dataset being written): a fresh snapshot.
    close_after_fetch: bool,
}

pub async fn open(at: &Locations, spec: DatasetSpec) -> Result<BlobIoEngine> {
    let (conn, mut settings) = open_loaded(at, spec)?;
    let (rowid_of_key, lookup) = if spec.key.is_binary() {
        (
            conn.prepare(ROWID_OF_KEY)?,
            format!(" found by `{ROWID_OF_KEY}`"),
        )
    } else {
        (ptr::null_mut(), String::new())
    };
    let close_after_fetch = spec.live;
    settings.insert(
        "access".into(),
        if close_after_fetch {
            format!("sqlite3_blob_open on the rowid{lookup}, sqlite3_blob_read into the reused buffer, sqlite3_blob_close: a snapshot per fetch, the dataset being written")
        } else {
            format!("sqlite3_blob_open / sqlite3_blob_reopen on the rowid{lookup}, sqlite3_blob_read into the reused buffer")
        },
    );
    Ok(BlobIoEngine {
        blob: ptr::null_mut(),
        rowid_of_key,
        spec,
        conn,
        settings,
        close_after_fetch,
    })
}

const ROWID_OF_KEY: &str = "SELECT rowid FROM blobs WHERE id = ?";

impl BlobIoEngine {
    fn fetch_error(&self, rc: c_int, id: u64) -> anyhow::Error {
        anyhow::anyhow!("blob {id}: {}", self.conn.message(rc))
    }

    /// The rowid of row `id`: the id itself, or its key's row in a keyed dataset.
    #[inline]
    fn rowid(&self, id: u64) -> Result<u64> {
        let Some(key) = self.spec.key_of(id) else {
            return Ok(id);
        };
        // SAFETY: the lookup is prepared on the open connection; the key lives on
        // this stack until the reset.
        unsafe {
            bind_id(self.rowid_of_key, id, Some(&key));
            let rc = ffi::sqlite3_step(self.rowid_of_key);
            let rowid = ffi::sqlite3_column_int64(self.rowid_of_key, 0);
            ffi::sqlite3_reset(self.rowid_of_key);
            match rc {
                ffi::SQLITE_ROW => Ok(rowid as u64),
                ffi::SQLITE_DONE => anyhow::bail!("no row with the key of id {id}"),
                _ => Err(self.fetch_error(rc, id)),
            }
        }
    }
}

impl BlobIoEngine {
    /// Open the blob handle on the row and read its value into `out`, `piece` bytes
    /// per `sqlite3_blob_read` (`usize::MAX`: one read); with `MARK_FIRST`, when the
    /// first piece landed (otherwise no clock is read inside `fetch`).
    #[inline]
    fn read_blob<const MARK_FIRST: bool>(
        &mut self,
        id: u64,
        piece: usize,
        out: &mut Vec<u8>,
    ) -> Result<Option<Instant>> {
        let rowid = self.rowid(id)?;
        let mut first = None;
        // SAFETY: the connection is open; the blob handle is null or open on this
        // table and column; `out` has `n` initialised bytes before SQLite writes them,
        // and each piece lies within them.
        unsafe {
            let rc = self.conn.seek_blob(&mut self.blob, rowid, false);
            if rc != ffi::SQLITE_OK {
                return Err(self.fetch_error(rc, id));
            }
            let n = ffi::sqlite3_blob_bytes(self.blob) as usize;
            // The same length every fetch of a size class, and a mix's row's length set
            // before the clock (`before_fetch`): no allocation or fill after the first.
            out.resize(n, 0);
            let mut at = 0;
            while at < n {
                let len = piece.max(1).min(n - at);
                let rc = ffi::sqlite3_blob_read(
                    self.blob,
                    out[at..].as_mut_ptr().cast(),
                    len as c_int,
                    at as c_int,
                );
                if rc != ffi::SQLITE_OK {
                    return Err(self.fetch_error(rc, id));
                }
                at += len;
                if MARK_FIRST && first.is_none() {
                    first = Some(Instant::now());
                }
            }
            if self.close_after_fetch {
                ffi::sqlite3_blob_close(self.blob);
                self.blob = ptr::null_mut();
            }
        }
        Ok(first)
    }
}

impl Engine for BlobIoEngine {
    fn before_fetch(&mut self, id: u64, out: &mut Vec<u8>) {
        crate::db::engine::size_for_row(&self.spec, id, out);
    }

    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        self.read_blob::<false>(id, usize::MAX, out)?;
        Ok(())
    }

    fn settings(&self) -> EngineSettings {
        self.settings.clone()
    }

    fn streaming(&self) -> Streaming {
        Streaming::Chunks(
            "sqlite3_blob_reopen to the rowid, then sqlite3_blob_read of one piece after another",
        )
    }

    async fn fetch_streamed(
        &mut self,
        id: u64,
        chunk: usize,
        out: &mut Vec<u8>,
    ) -> Result<Instant> {
        self.read_blob::<true>(id, chunk, out)?
            .ok_or_else(|| anyhow::anyhow!("blob {id} is empty"))
    }
}

impl Drop for BlobIoEngine {
    fn drop(&mut self) {
        // SAFETY: each closed once, before its connection (a field, dropped after
        // this); finalizing a null statement is a no-op.
        unsafe {
            if !self.blob.is_null() {
                ffi::sqlite3_blob_close(self.blob);
            }
            ffi::sqlite3_finalize(self.rowid_of_key);
        }
    }
}

// SAFETY: an engine belongs to one client and is used by one thread at a time, and
// the bundled SQLite is built thread-safe (SQLITE_THREADSAFE=1): a connection may
// move between threads between calls.
unsafe impl Send for BlobIoEngine {}
