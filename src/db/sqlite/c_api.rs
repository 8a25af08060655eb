//! A connection through SQLite's C API (libsqlite3-sys, the SQLite sqlx links), used
//! in the caller's thread by the loader (`SqliteStore::append`), `sqlite-raw` (a
//! prepared statement) and `sqlite-blobio` (incremental blob I/O). Opened as sqlx
//! opens the SeaORM engine's connection (read-write, no create), with SQLite's default
//! page cache; the engines read its settings back from the connection.

use std::ffi::{CStr, CString, c_int};
use std::ptr;

use anyhow::{Context, Result, bail};
use libsqlite3_sys as ffi;

use std::path::Path;

/// Version and the pragmas that shape reads: every SQLite engine records these.
pub const SETTINGS: &[(&str, &str)] = &[
    ("sqlite_version", "SELECT sqlite_version()"),
    ("page_size", "PRAGMA page_size"),
    ("journal_mode", "PRAGMA journal_mode"),
    ("synchronous", "PRAGMA synchronous"),
    ("cache_size", "PRAGMA cache_size"),
    ("mmap_size", "PRAGMA mmap_size"),
];

pub struct Connection {
    pub db: *mut ffi::sqlite3,
}

// SAFETY: a connection is used by one thread at a time (an engine belongs to one
// client, the loader is one task), and the bundled SQLite is built thread-safe
// (SQLITE_THREADSAFE=1): a connection may move between threads between calls.
unsafe impl Send for Connection {}

impl Connection {
    /// An existing SQLite file, read-write.
    pub fn open_path(path: &Path) -> Result<Self> {
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())
            .with_context(|| format!("{} has a NUL byte in its name", path.display()))?;
        let mut db = ptr::null_mut();
        // SAFETY: a valid C string and out-pointer; the handle is closed on drop
        // (sqlite3_open_v2 asks for that even when it fails).
        let rc = unsafe {
            ffi::sqlite3_open_v2(
                c_path.as_ptr(),
                &mut db,
                ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_NOMUTEX,
                ptr::null(),
            )
        };
        let conn = Self { db };
        if rc != ffi::SQLITE_OK {
            // SQLite says only "unable to open database file": the folder says why.
            bail!("{}: {}", super::cannot_open(path), conn.message(rc));
        }
        Ok(conn)
    }

    /// Run statements that return no rows (pragmas, BEGIN, COMMIT).
    pub fn execute(&self, sql: &str) -> Result<()> {
        let c_sql = CString::new(sql)?;
        // SAFETY: valid connection and SQL; no callback; SQLite's message is read
        // through the connection instead of the out-pointer.
        let rc = unsafe {
            ffi::sqlite3_exec(
                self.db,
                c_sql.as_ptr(),
                None,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            bail!("`{sql}`: {}", self.message(rc));
        }
        Ok(())
    }

    /// SQLite's message for the last error on this connection.
    pub fn message(&self, rc: c_int) -> String {
        if self.db.is_null() {
            return format!("SQLite error {rc}");
        }
        // SAFETY: the connection is open; errmsg returns a NUL-terminated string it owns.
        let msg = unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(self.db)) };
        format!("{} (SQLite error {rc})", msg.to_string_lossy())
    }

    /// Point `blob` at row `id` of `blobs.data`: open it the first time (null), move it
    /// after (`sqlite3_blob_reopen`, cheaper than a new handle). SQLite's result code.
    ///
    /// # Safety
    /// `blob` is null or a handle opened on this connection by this function.
    #[inline]
    pub unsafe fn seek_blob(
        &self,
        blob: &mut *mut ffi::sqlite3_blob,
        id: u64,
        write: bool,
    ) -> c_int {
        // SAFETY: per the contract above; the names are NUL-terminated literals.
        unsafe {
            if blob.is_null() {
                ffi::sqlite3_blob_open(
                    self.db,
                    c"main".as_ptr(),
                    c"blobs".as_ptr(),
                    c"data".as_ptr(),
                    id as i64,
                    c_int::from(write),
                    blob,
                )
            } else {
                ffi::sqlite3_blob_reopen(*blob, id as i64)
            }
        }
    }

    /// A statement prepared once and kept (`SQLITE_PREPARE_PERSISTENT`).
    pub fn prepare(&self, sql: &str) -> Result<*mut ffi::sqlite3_stmt> {
        let c_sql = CString::new(sql)?;
        let mut stmt = ptr::null_mut();
        // SAFETY: valid connection, SQL and out-pointer; the caller finalizes it.
        let rc = unsafe {
            ffi::sqlite3_prepare_v3(
                self.db,
                c_sql.as_ptr(),
                -1,
                ffi::SQLITE_PREPARE_PERSISTENT as _,
                &mut stmt,
                ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            bail!("`{sql}`: {}", self.message(rc));
        }
        Ok(stmt)
    }

    /// The first column of the first row of `sql`, as text (settings, at open).
    pub fn query_text(&self, sql: &str) -> Result<String> {
        let stmt = self.prepare(sql)?;
        // SAFETY: stmt is a prepared statement; column_text's pointer lives until the
        // next step or finalize, and is copied before either.
        let value = unsafe {
            let text = if ffi::sqlite3_step(stmt) == ffi::SQLITE_ROW {
                let p = ffi::sqlite3_column_text(stmt, 0);
                (!p.is_null()).then(|| CStr::from_ptr(p.cast()).to_string_lossy().into_owned())
            } else {
                None
            };
            ffi::sqlite3_finalize(stmt);
            text
        };
        Ok(value.unwrap_or_default())
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if !self.db.is_null() {
            // SAFETY: closed once; the engines finalize their statements and blob
            // handles first (their Drop runs before their fields').
            unsafe { ffi::sqlite3_close(self.db) };
        }
    }
}
