//! Opening a RocksDB directory. A directory is open for writing in one process at a
//! time (RocksDB's LOCK file): the loader's handle while it writes, then the one a run's
//! engines share (N clients, one block cache, as an application's threads share their
//! database). The engines' handle is opened read-write with automatic compactions off,
//! and fetches with `Get`: the system's RocksDB 7.8 opened read-only found none of the
//! keys of a database closed right after its first flush with `Get` (its iterator found
//! them all; `ldb get` and a read-write open found them too). A load ends with a full
//! compaction, so there is nothing for the engines' handle to compact while measured.
//! The store only looks (its state, its ids) through a read-only handle and an
//! iterator, which creates no file in the directory: each read-write open leaves a
//! new WAL file and rotates the LOG.
//!
//! The writer's handle puts values in blob files or not as the dataset's layout says
//! (`BlobFiles`: by default every value, `min_blob_size` 0); readers follow the blob
//! references whatever their own options say, and decompress what the writer
//! compressed (`--rocksdb-compression`; nothing by default).

use std::ffi::{CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, anyhow};

use super::blob_files::BlobFiles;
use super::ffi::{Library, Ptr, library};
use super::knobs::RocksdbKnobs;
use crate::db::locations::Locations;
use crate::db::shared_handles::SharedHandles;
use crate::size::format_bytes;

/// RocksDB's default size of a blob file, said in the settings.
pub const BLOB_FILE_SIZE: u64 = 256 << 20;
/// RocksDB's default cache, used where the process has no memory cap to size it from.
const DEFAULT_CACHE_BYTES: u64 = 32 << 20;
/// The share of the cap its cache gets, blocks and blobs together: what redb gets, and
/// this project's PostgreSQL for shared_buffers under its 1 GiB cap (128 MB). The rest
/// is the page cache's, which RocksDB reads through (pread, no mmap).
const CACHE_SHARE_OF_CAP: u64 = 8;
/// The writer's block cache: the loader writes and never reads back. The store's
/// read-only looks get the same.
const SMALL_CACHE_BYTES: usize = 8 << 20;
/// RocksDB's default memtable (`write_buffer_size`), and the most the writer gets.
const DEFAULT_MEMTABLE_BYTES: u64 = 64 << 20;
/// The writer's memtable under a cap: 1/16 of it (64 MiB, RocksDB's default, under the
/// 1 GiB default cap). The loader shares the cap with RocksDB: two memtables (the one
/// filling, the one flushing), the write batch's copy of each batch and the batch the
/// loader built; with the default 64 MiB under the quick profile's 256 MiB cap, loading
/// 4 MiB blobs took the measuring process past its cap and the kernel killed it.
const MEMTABLE_SHARE_OF_CAP: u64 = 16;
/// Never less: a memtable this small flushes every few batches.
const MIN_MEMTABLE_BYTES: u64 = 4 << 20;
/// `rocksdb_options_set_info_log_level`: FATAL (and the header each open writes). Not
/// WARN: Debian's librocksdb keeps its assertions, and once a line to the LOG failed
/// for want of disk, its next line (the error handler's, from a background thread)
/// aborts the whole process in `WritableFileWriter`: a load that met a full disk killed
/// every engine's run instead of failing its own dataset. The errors a LOG would hold
/// come back to us through each call's status.
const LOG_FATAL: i32 = 4;

/// The cache readers get under the run's cap, and how that was chosen (recorded).
pub fn reader_cache(at: &Locations) -> (u64, String) {
    match at.memory_cap_bytes {
        Some(cap) => (
            cap / CACHE_SHARE_OF_CAP,
            format!(
                "{} LRU for blocks and blobs together (1/{CACHE_SHARE_OF_CAP} of the {} cap)",
                format_bytes(cap / CACHE_SHARE_OF_CAP),
                format_bytes(cap)
            ),
        ),
        None => (
            DEFAULT_CACHE_BYTES,
            format!(
                "{} LRU for blocks and blobs together (RocksDB's default block cache: no cap to size it from)",
                format_bytes(DEFAULT_CACHE_BYTES)
            ),
        ),
    }
}

/// The writer's memtable under the run's cap: RocksDB's default where that fits in
/// 1/16 of the cap, less where it does not. Values go to blob files when the memtable
/// is flushed, so this sizes how much of a load is in memory at once, not the files.
pub fn writer_memtable(at: &Locations) -> u64 {
    match at.memory_cap_bytes {
        Some(cap) => {
            (cap / MEMTABLE_SHARE_OF_CAP).clamp(MIN_MEMTABLE_BYTES, DEFAULT_MEMTABLE_BYTES)
        }
        None => DEFAULT_MEMTABLE_BYTES,
    }
}

/// An open RocksDB: the database and the options, table options and cache it was opened
/// with (RocksDB keeps pointers to them), closed and freed together.
pub struct Db {
    pub lib: &'static Library,
    db: Ptr,
    options: Ptr,
    table: Ptr,
    cache: Ptr,
    path: PathBuf,
    read_only: bool,
}

// SAFETY: a RocksDB handle is safe to use from many threads (RocksDB's own contract).
unsafe impl Send for Db {}
unsafe impl Sync for Db {}

impl Drop for Db {
    fn drop(&mut self) {
        let api = &self.lib.api;
        // SAFETY: each was created by us and is freed once, the database first.
        unsafe {
            (api.rocksdb_close)(self.db);
            (api.rocksdb_options_destroy)(self.options);
            (api.rocksdb_block_based_options_destroy)(self.table);
            (api.rocksdb_cache_destroy)(self.cache);
        }
    }
}

/// How to open a directory.
#[derive(Clone, Copy)]
pub enum Mode {
    /// Read-write, created if missing, its values put as the layout says, with a
    /// memtable of this many bytes: the loader's.
    Write(RocksdbKnobs, u64),
    /// To read, with a cache of this many bytes for blocks and blobs: never created,
    /// never compacted (the engines').
    Read(u64),
    /// Read-only, to look without changing a file (the store's `state`, `id_range`):
    /// read through an iterator (`lookup`).
    Inspect,
}

impl Db {
    pub fn open(path: &Path, mode: Mode) -> Result<Db> {
        let lib = library().map_err(|e| anyhow!(e))?;
        let api = &lib.api;
        let name = CString::new(path.as_os_str().as_encoded_bytes())?;
        let cache_bytes = match mode {
            Mode::Write(..) | Mode::Inspect => SMALL_CACHE_BYTES,
            Mode::Read(bytes) => bytes as usize,
        };
        // SAFETY: plain constructors and setters on objects we own; RocksDB copies or
        // shares (the cache, by reference count) what it keeps.
        let mut db = unsafe {
            let options = (api.rocksdb_options_create)();
            // Only the writer's choice counts: a reader follows a blob reference whatever
            // its own options say, and reads the compression each block and blob
            // records; the engines' handle never flushes or compacts. Readers keep the
            // default's options, as every handle had before layouts.
            let layout = match mode {
                Mode::Write(layout, _) => layout,
                Mode::Read(_) | Mode::Inspect => RocksdbKnobs::default(),
            };
            let compression = layout.compression.code();
            (api.rocksdb_options_set_compression)(options, compression);
            (api.rocksdb_options_set_blob_compression_type)(options, compression);
            match layout.blob_files {
                BlobFiles::Off => (api.rocksdb_options_set_enable_blob_files)(options, 0),
                BlobFiles::From(min) => {
                    (api.rocksdb_options_set_enable_blob_files)(options, 1);
                    (api.rocksdb_options_set_min_blob_size)(options, min);
                    (api.rocksdb_options_set_blob_file_size)(options, BLOB_FILE_SIZE);
                }
            }
            (api.rocksdb_options_set_info_log_level)(options, LOG_FATAL);
            // Each open starts a LOG and keeps the last as LOG.old.<time>: keep none.
            (api.rocksdb_options_set_keep_log_file_num)(options, 1);
            let cache = (api.rocksdb_cache_create_lru)(cache_bytes);
            let table = (api.rocksdb_block_based_options_create)();
            (api.rocksdb_block_based_options_set_block_cache)(table, cache);
            (api.rocksdb_options_set_block_based_table_factory)(options, table);
            match mode {
                Mode::Write(_, memtable) => {
                    (api.rocksdb_options_set_create_if_missing)(options, 1);
                    (api.rocksdb_options_set_write_buffer_size)(options, memtable as usize);
                }
                Mode::Read(_) => {
                    // One budget for both: a blob read fills the cache the blocks use.
                    (api.rocksdb_options_set_blob_cache)(options, cache);
                    (api.rocksdb_options_set_disable_auto_compactions)(options, 1);
                }
                Mode::Inspect => {}
            }
            Db {
                lib,
                db: std::ptr::null_mut(),
                options,
                table,
                cache,
                path: path.to_path_buf(),
                read_only: matches!(mode, Mode::Inspect),
            }
        };
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: options and name outlive the call; err is set on failure only.
        db.db = unsafe {
            if db.read_only {
                (api.rocksdb_open_for_read_only)(db.options, name.as_ptr(), 0, &mut err)
            } else {
                (api.rocksdb_open)(db.options, name.as_ptr(), &mut err)
            }
        };
        if let Err(why) = lib.check(err) {
            // Closing a null database is not RocksDB's to do: free the rest only.
            let Db {
                options,
                table,
                cache,
                ..
            } = db;
            std::mem::forget(db);
            unsafe {
                (api.rocksdb_options_destroy)(options);
                (api.rocksdb_block_based_options_destroy)(table);
                (api.rocksdb_cache_destroy)(cache);
            }
            return Err(explain(&why, path));
        }
        Ok(db)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Compact every level into the last: what a load leaves in level 0 is merged now,
    /// not by a background compaction while a cell is measured. The keys and blob
    /// references move; the blob files stay as written.
    pub fn compact_all(&self) {
        // SAFETY: null bounds compact the whole key range; returns when done.
        unsafe {
            (self.lib.api.rocksdb_compact_range)(self.db, std::ptr::null(), 0, std::ptr::null(), 0)
        };
    }

    /// Wait until the memtable is on disk (its blobs in blob files) and the WAL with it.
    pub fn flush(&self) -> Result<()> {
        let api = &self.lib.api;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: options created and freed around the call.
        unsafe {
            let options = (api.rocksdb_flushoptions_create)();
            (api.rocksdb_flushoptions_set_wait)(options, 1);
            (api.rocksdb_flush)(self.db, options, &mut err);
            (api.rocksdb_flushoptions_destroy)(options);
        }
        self.lib
            .check(err)
            .map_err(|e| anyhow!("cannot flush {}: {e}", self.path.display()))
    }
}

/// RocksDB's error with what it means here.
fn explain(why: &str, path: &Path) -> anyhow::Error {
    if why.contains("lock") && why.contains("LOCK") {
        return anyhow!(
            "{} is open in another process (a load or run of the same dataset?): wait for it, or stop it ({why})",
            path.display()
        );
    }
    damaged(why, path)
        .unwrap_or_else(|| anyhow!("cannot open {} as RocksDB: {why}", path.display()))
}

/// A RocksDB error that says its files are damaged (a status of `Corruption`: a
/// checksum, a file cut short; or a file its MANIFEST names gone) as the dataset's
/// damage, which `verify` reports and `drop` removes; None for any other.
fn damaged(why: &str, path: &Path) -> Option<anyhow::Error> {
    let missing = why.contains("No such file")
        && [".sst", ".blob", "MANIFEST"]
            .iter()
            .any(|f| why.contains(f));
    (why.starts_with("Corruption") || why.contains("Corruption:") || missing).then(|| {
        crate::error::InputError::DatasetDamaged {
            path: path.to_path_buf(),
            why: format!("RocksDB finds its files damaged ({why})"),
        }
        .into()
    })
}

static READERS: SharedHandles<Db> = SharedHandles::new();

/// The process's handle for reading `path`, opened with a cache of `cache_bytes` if
/// none is open.
pub fn reader(path: &Path, cache_bytes: u64) -> Result<Arc<Db>> {
    READERS.get_or_open(path, || Db::open(path, Mode::Read(cache_bytes)))
}

/// Whether an engine of this process holds `path` open (its cache with it).
pub fn reader_is_open(path: &Path) -> bool {
    READERS.is_open(path)
}

/// Read options kept for a handle's life, so a fetch creates none.
pub struct ReadOptions {
    lib: &'static Library,
    pub raw: Ptr,
}

impl ReadOptions {
    pub fn new(lib: &'static Library) -> Self {
        // SAFETY: a constructor; freed in Drop.
        let raw = unsafe { (lib.api.rocksdb_readoptions_create)() };
        Self { lib, raw }
    }
}

impl Drop for ReadOptions {
    fn drop(&mut self) {
        // SAFETY: created in new, freed once.
        unsafe { (self.lib.api.rocksdb_readoptions_destroy)(self.raw) };
    }
}

// SAFETY: read options are plain settings, read by RocksDB during a call.
unsafe impl Send for ReadOptions {}

impl Db {
    /// Copy the value under `key` into `out`; false where there is none. The value is
    /// pinned where it lies (the block or blob cache) and copied once.
    #[inline]
    pub fn get_into(&self, read: &ReadOptions, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        let api = &self.lib.api;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: key outlives the call; the slice is destroyed after its bytes are copied.
        unsafe {
            let pinned = (api.rocksdb_get_pinned)(
                self.db,
                read.raw,
                key.as_ptr().cast(),
                key.len(),
                &mut err,
            );
            self.lib
                .check(err)
                .map_err(|e| damaged(&e, &self.path).unwrap_or_else(|| anyhow!(e)))?;
            if pinned.is_null() {
                return Ok(false);
            }
            let mut len = 0usize;
            let at = (api.rocksdb_pinnableslice_value)(pinned, &mut len);
            out.clear();
            out.extend_from_slice(std::slice::from_raw_parts(at.cast::<u8>(), len));
            (api.rocksdb_pinnableslice_destroy)(pinned);
        }
        Ok(true)
    }

    /// Write `rows` (key, value) in one batch, synced to the WAL before it returns:
    /// all of them are durable, or none.
    pub fn write_synced<'a>(&self, rows: impl Iterator<Item = (&'a [u8], &'a [u8])>) -> Result<()> {
        let api = &self.lib.api;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: the batch copies each key and value; batch and options freed after.
        unsafe {
            let batch = (api.rocksdb_writebatch_create)();
            for (key, value) in rows {
                (api.rocksdb_writebatch_put)(
                    batch,
                    key.as_ptr().cast(),
                    key.len(),
                    value.as_ptr().cast(),
                    value.len(),
                );
            }
            let options = (api.rocksdb_writeoptions_create)();
            (api.rocksdb_writeoptions_set_sync)(options, 1);
            (api.rocksdb_write)(self.db, options, batch, &mut err);
            (api.rocksdb_writeoptions_destroy)(options);
            (api.rocksdb_writebatch_destroy)(batch);
        }
        self.lib
            .check(err)
            .map_err(|e| anyhow!("cannot write to {}: {e}", self.path.display()))
    }

    /// Copy the value under `key` into `out`, false where there is none: `Get` on a
    /// read-write handle, an iterator's seek on a read-only one (whose `Get` misses keys:
    /// the module's comment says when).
    pub fn lookup(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        if !self.read_only {
            return self.get_into(&ReadOptions::new(self.lib), key, out);
        }
        let api = &self.lib.api;
        let read = ReadOptions::new(self.lib);
        let mut err: *mut c_char = std::ptr::null_mut();
        let mut found = false;
        // SAFETY: the iterator is used while the database is open and destroyed after;
        // key and value are copied before it moves.
        unsafe {
            let it = (api.rocksdb_create_iterator)(self.db, read.raw);
            (api.rocksdb_iter_seek)(it, key.as_ptr().cast(), key.len());
            if (api.rocksdb_iter_valid)(it) != 0 {
                let mut len = 0usize;
                let at = (api.rocksdb_iter_key)(it, &mut len);
                if std::slice::from_raw_parts(at.cast::<u8>(), len) == key {
                    let at = (api.rocksdb_iter_value)(it, &mut len);
                    out.clear();
                    out.extend_from_slice(std::slice::from_raw_parts(at.cast::<u8>(), len));
                    found = true;
                }
            }
            (api.rocksdb_iter_get_error)(it, &mut err);
            (api.rocksdb_iter_destroy)(it);
        }
        self.lib.check(err).map_err(|e| {
            damaged(&e, &self.path)
                .unwrap_or_else(|| anyhow!("cannot read {}: {e}", self.path.display()))
        })?;
        Ok(found)
    }

    /// Every key in order, handed to `each`; stops early where `each` says false.
    pub fn each_key(&self, mut each: impl FnMut(&[u8]) -> bool) -> Result<()> {
        let api = &self.lib.api;
        let read = ReadOptions::new(self.lib);
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: the iterator is used while the database is open and destroyed after.
        unsafe {
            let it = (api.rocksdb_create_iterator)(self.db, read.raw);
            (api.rocksdb_iter_seek_to_first)(it);
            while (api.rocksdb_iter_valid)(it) != 0 {
                let mut len = 0usize;
                let key = (api.rocksdb_iter_key)(it, &mut len);
                if !each(std::slice::from_raw_parts(key.cast::<u8>(), len)) {
                    break;
                }
                (api.rocksdb_iter_next)(it);
            }
            (api.rocksdb_iter_get_error)(it, &mut err);
            (api.rocksdb_iter_destroy)(it);
        }
        self.lib
            .check(err)
            .map_err(|e| anyhow!("cannot read {}: {e}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_cache_is_an_eighth_of_the_cap_or_rocksdbs_default_said_as_such() {
        let capped = Locations {
            memory_cap_bytes: Some(1 << 30),
            ..Default::default()
        };
        let (bytes, said) = reader_cache(&capped);
        assert_eq!(bytes, 128 << 20);
        assert!(said.contains("1/8 of the 1GiB cap"), "{said}");
        let (bytes, said) = reader_cache(&Locations::default());
        assert_eq!(bytes, 32 << 20);
        assert!(said.contains("no cap"), "{said}");
    }

    #[test]
    fn its_writer_keeps_rocksdbs_memtable_under_the_default_cap_and_a_sixteenth_under_less() {
        let cap = |bytes| Locations {
            memory_cap_bytes: Some(bytes),
            ..Default::default()
        };
        assert_eq!(writer_memtable(&cap(1 << 30)), 64 << 20);
        assert_eq!(writer_memtable(&cap(4 << 30)), 64 << 20);
        assert_eq!(writer_memtable(&cap(256 << 20)), 16 << 20);
        assert_eq!(writer_memtable(&cap(32 << 20)), 4 << 20);
        assert_eq!(writer_memtable(&Locations::default()), 64 << 20);
    }
}
