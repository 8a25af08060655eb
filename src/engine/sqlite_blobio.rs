//! `sqlite-blobio`: the same SQLite file read through SQLite's incremental blob I/O,
//! in this thread: `sqlite3_blob_open` on the row (the table's `id` is its rowid:
//! `INTEGER PRIMARY KEY`), `sqlite3_blob_read` straight into the caller's reused
//! buffer, and `sqlite3_blob_reopen` to move the handle to the next row. No SQL
//! statement per fetch and no copy of the row: SQLite reads a blob's overflow pages
//! straight into the output (its direct overflow read), where a statement reads
//! them into the row's value first.
//!
//! An open blob handle keeps its read transaction open (it counts as a running
//! statement), so the handle sees one snapshot: right for a dataset nothing writes.

use std::ffi::c_int;
use std::ptr;

use anyhow::Result;
use libsqlite3_sys as ffi;

use super::{AnyEngine, Engine, EngineSettings};
use crate::dataset::DatasetSpec;
use crate::locations::Locations;
use crate::store::sqlite_c::Connection;

pub struct BlobIoEngine {
    /// Null until the first fetch opens it; then moved from row to row.
    blob: *mut ffi::sqlite3_blob,
    conn: Connection,
    settings: EngineSettings,
}

pub async fn open(at: &Locations, spec: DatasetSpec) -> Result<AnyEngine> {
    let (conn, mut settings) = Connection::open(at, spec)?;
    settings.insert(
        "access".into(),
        "sqlite3_blob_open / sqlite3_blob_reopen on the rowid, sqlite3_blob_read into the reused buffer".into(),
    );
    Ok(AnyEngine::SqliteBlobIo(BlobIoEngine {
        blob: ptr::null_mut(),
        conn,
        settings,
    }))
}

impl BlobIoEngine {
    fn fetch_error(&self, rc: c_int, id: u64) -> anyhow::Error {
        anyhow::anyhow!("blob {id}: {}", self.conn.message(rc))
    }
}

impl Engine for BlobIoEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        // SAFETY: the connection is open; the blob handle is null or open on this
        // table and column; `out` has `n` initialised bytes before SQLite writes them.
        unsafe {
            let rc = self.conn.seek_blob(&mut self.blob, id, false);
            if rc != ffi::SQLITE_OK {
                return Err(self.fetch_error(rc, id));
            }
            let n = ffi::sqlite3_blob_bytes(self.blob) as usize;
            // The same length every fetch of a size class: no allocation or fill
            // after the first.
            out.resize(n, 0);
            let rc = ffi::sqlite3_blob_read(self.blob, out.as_mut_ptr().cast(), n as c_int, 0);
            if rc != ffi::SQLITE_OK {
                return Err(self.fetch_error(rc, id));
            }
        }
        Ok(())
    }

    fn settings(&self) -> EngineSettings {
        self.settings.clone()
    }
}

impl Drop for BlobIoEngine {
    fn drop(&mut self) {
        if !self.blob.is_null() {
            // SAFETY: closed once, before its connection (a field, dropped after this).
            unsafe { ffi::sqlite3_blob_close(self.blob) };
        }
    }
}

// SAFETY: an engine belongs to one client and is used by one thread at a time, and
// the bundled SQLite is built thread-safe (SQLITE_THREADSAFE=1): a connection may
// move between threads between calls.
unsafe impl Send for BlobIoEngine {}
