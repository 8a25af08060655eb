//! The SQLite loader's writer: rows go in through SQLite's C API, one prepared
//! insert per row, large blobs by incremental blob I/O, one transaction per batch
//! (`SqliteStore::append` hands it each batch).

use std::path::Path;

use anyhow::Result;

use super::pragmas::LOAD_PRAGMAS;
use crate::dataset::DatasetSpec;

/// Above this size a blob is written through incremental blob I/O: the row goes in
/// with a zeroblob of its length, then `sqlite3_blob_write` fills it page by page, so
/// SQLite never builds the whole record in memory (a bound 32 MiB blob costs another
/// 32 MiB record buffer; through sqlx a third and fourth copy: 147 MB peak RSS).
const BLOB_IO_ABOVE: usize = 1 << 20;

/// The loader's connection through SQLite's C API: the bound blob goes into SQLite's
/// record as it is (`SQLITE_STATIC`), where sqlx copies every argument and hands it
/// to its worker thread.
pub(super) struct Writer {
    spec: DatasetSpec,
    insert: *mut libsqlite3_sys::sqlite3_stmt,
    /// Null until a large blob is written; closed before each commit.
    blob: *mut libsqlite3_sys::sqlite3_blob,
    conn: super::c_api::Connection,
}

// SAFETY: used by the one loading task at a time; see `c_api::Connection`.
unsafe impl Send for Writer {}

impl Writer {
    pub(super) fn open(path: &Path, spec: DatasetSpec) -> Result<Self> {
        let conn = super::c_api::Connection::open_path(path)?;
        for pragma in LOAD_PRAGMAS {
            conn.execute(pragma)?;
        }
        let insert = conn.prepare("INSERT INTO blobs (id, data) VALUES (?1, ?2)")?;
        Ok(Self {
            spec,
            insert,
            blob: std::ptr::null_mut(),
            conn,
        })
    }

    /// One batch in one transaction: all of it or none of it.
    pub(super) fn append(&mut self, first_id: u64, blobs: &[Vec<u8>]) -> Result<()> {
        self.conn.execute("BEGIN")?;
        let written = blobs
            .iter()
            .enumerate()
            .try_for_each(|(i, blob)| self.insert(first_id + i as u64, blob));
        self.close_blob();
        match written {
            Ok(()) => self.conn.execute("COMMIT"),
            Err(e) => {
                let _ = self.conn.execute("ROLLBACK");
                Err(e)
            }
        }
    }

    fn insert(&mut self, id: u64, blob: &[u8]) -> Result<()> {
        use libsqlite3_sys as ffi;
        let large = blob.len() > BLOB_IO_ABOVE;
        let key = self.spec.key_of(id);
        // SAFETY: the statement is prepared on the open connection; a blob or key bound
        // SQLITE_STATIC stays alive and unchanged until the reset below.
        unsafe {
            match &key {
                Some(key) => ffi::sqlite3_bind_blob(
                    self.insert,
                    1,
                    key.as_ptr().cast(),
                    key.len() as std::ffi::c_int,
                    ffi::SQLITE_STATIC(),
                ),
                None => ffi::sqlite3_bind_int64(self.insert, 1, id as i64),
            };
            if large {
                ffi::sqlite3_bind_zeroblob64(self.insert, 2, blob.len() as u64);
            } else {
                ffi::sqlite3_bind_blob64(
                    self.insert,
                    2,
                    blob.as_ptr().cast(),
                    blob.len() as u64,
                    ffi::SQLITE_STATIC(),
                );
            }
            let rc = ffi::sqlite3_step(self.insert);
            ffi::sqlite3_reset(self.insert);
            ffi::sqlite3_clear_bindings(self.insert);
            if rc != ffi::SQLITE_DONE {
                anyhow::bail!("inserting id {id}: {}", self.conn.message(rc));
            }
            if large {
                // The row's rowid: the id itself, or the one SQLite gave a keyed row.
                let rowid = ffi::sqlite3_last_insert_rowid(self.conn.db) as u64;
                let rc = self.conn.seek_blob(&mut self.blob, rowid, true);
                if rc != ffi::SQLITE_OK {
                    anyhow::bail!("opening blob {id} to write: {}", self.conn.message(rc));
                }
                let rc = ffi::sqlite3_blob_write(
                    self.blob,
                    blob.as_ptr().cast(),
                    blob.len() as std::ffi::c_int,
                    0,
                );
                if rc != ffi::SQLITE_OK {
                    anyhow::bail!("writing blob {id}: {}", self.conn.message(rc));
                }
            }
        }
        Ok(())
    }

    fn close_blob(&mut self) {
        if !self.blob.is_null() {
            // SAFETY: an open blob handle, closed once.
            unsafe { libsqlite3_sys::sqlite3_blob_close(self.blob) };
            self.blob = std::ptr::null_mut();
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.close_blob();
        // SAFETY: finalized once, before its connection (a field, dropped after this).
        unsafe { libsqlite3_sys::sqlite3_finalize(self.insert) };
    }
}
