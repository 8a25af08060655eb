//! `sqlite-raw`: the SeaORM engine's query as a prepared statement through SQLite's C
//! API, in this thread, as Python's sqlite3 module or rusqlite run it: bind, step,
//! copy the column into the reused buffer, reset.
//!
//! Not through sqlx, as the servers' raw engines are: sqlx's SQLite driver runs every
//! statement on its own worker thread and duplicates each row value
//! (`sqlite3_value_dup`) to hand it back, one more allocation and copy of the blob
//! per fetch. At 4 MiB that made it 1.1 ms (20%) slower than Python's client on the
//! same file (profiled with --profile-fetches). So `sqlite` vs `sqlite-raw` is what
//! SeaORM and its driver cost together; the profile splits the two.

use anyhow::{Result, bail};
use libsqlite3_sys as ffi;

use super::c_api::{Connection, SETTINGS};
use super::store::SqliteStore;
use crate::dataset::DatasetSpec;
use crate::dataset::key::KEY_BYTES;
use crate::db::engine::{Engine, EngineSettings};
use crate::db::locations::Locations;

const SQL: &str = "SELECT data FROM blobs WHERE id = ?";

pub struct StmtEngine {
    stmt: *mut ffi::sqlite3_stmt,
    spec: DatasetSpec,
    conn: Connection,
    settings: EngineSettings,
}

/// The size class's loaded file, and what it runs with (the engines' settings).
pub fn open_loaded(at: &Locations, spec: DatasetSpec) -> Result<(Connection, EngineSettings)> {
    let store = SqliteStore::new(
        &at.data_dir,
        spec,
        at.knobs.get::<super::SqliteKnobs>().page_size,
    );
    let path = store.path();
    if !path.exists() {
        let path = path.to_path_buf();
        // Its text, not the input error: one engine not loaded fails that engine alone.
        return Err(anyhow::anyhow!(
            "{}",
            crate::error::InputError::NotLoaded { path }
        ));
    }
    let conn = Connection::open_path(path)?;
    conn.execute(&format!(
        "PRAGMA mmap_size = {}",
        at.knobs.get::<super::SqliteKnobs>().mmap_size
    ))?;
    let mut settings = EngineSettings::new();
    for (name, sql) in SETTINGS {
        settings.insert(name.to_string(), conn.query_text(sql)?);
    }
    settings.insert("file".into(), path.display().to_string());
    Ok((conn, settings))
}

pub async fn open(at: &Locations, spec: DatasetSpec) -> Result<StmtEngine> {
    let (conn, mut settings) = open_loaded(at, spec)?;
    let stmt = conn.prepare(SQL)?;
    settings.insert(
        "access".into(),
        format!("SQLite C API prepared statement in this thread: {SQL}"),
    );
    Ok(StmtEngine {
        stmt,
        spec,
        conn,
        settings,
    })
}

impl Engine for StmtEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        let key = self.spec.key_of(id);
        // SAFETY: the statement is prepared on the open connection; a key bound
        // SQLITE_STATIC lives on this stack until the reset; the column's pointer is
        // valid until the reset, and copied before it.
        unsafe {
            bind_id(self.stmt, id, key.as_ref());
            let rc = ffi::sqlite3_step(self.stmt);
            if rc != ffi::SQLITE_ROW {
                ffi::sqlite3_reset(self.stmt);
                if rc == ffi::SQLITE_DONE {
                    bail!("no row with id {id}");
                }
                bail!("blob {id}: {}", self.conn.message(rc));
            }
            let data = ffi::sqlite3_column_blob(self.stmt, 0);
            let n = ffi::sqlite3_column_bytes(self.stmt, 0) as usize;
            out.clear();
            if n > 0 {
                out.extend_from_slice(std::slice::from_raw_parts(data.cast::<u8>(), n));
            }
            ffi::sqlite3_reset(self.stmt);
        }
        Ok(())
    }

    fn settings(&self) -> EngineSettings {
        self.settings.clone()
    }
}

/// Bind parameter 1 to the row's id, or to its key in a keyed dataset.
///
/// # Safety
/// `stmt` is a prepared statement with a parameter 1; `key` outlives its next reset
/// (it is bound without a copy).
#[inline]
pub(super) unsafe fn bind_id(stmt: *mut ffi::sqlite3_stmt, id: u64, key: Option<&[u8; KEY_BYTES]>) {
    // SAFETY: per the contract above.
    unsafe {
        match key {
            Some(key) => ffi::sqlite3_bind_blob(
                stmt,
                1,
                key.as_ptr().cast(),
                KEY_BYTES as std::ffi::c_int,
                ffi::SQLITE_STATIC(),
            ),
            None => ffi::sqlite3_bind_int64(stmt, 1, id as i64),
        };
    }
}

impl Drop for StmtEngine {
    fn drop(&mut self) {
        // SAFETY: finalized once, before its connection (a field, dropped after this).
        unsafe { ffi::sqlite3_finalize(self.stmt) };
    }
}

// SAFETY: as for BlobIoEngine: one client, one thread at a time, thread-safe SQLite.
unsafe impl Send for StmtEngine {}
