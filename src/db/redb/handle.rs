//! Opening a redb file. redb locks its file: a writable `Database` alone, or any number
//! of `ReadOnlyDatabase`s, and each handle keeps a cache of its own. So the engines of a
//! run's clients share one read-only handle per file in this process (N clients, one
//! cache, as the threads of an application sharing its database would), and the store
//! opens the file writable only while it writes, so an engine can open it after.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use redb::{Builder, Database, DatabaseError, ReadOnlyDatabase, TableDefinition};

use crate::db::locations::Locations;
use crate::db::shared_handles::SharedHandles;
use crate::size::format_bytes;

/// The rows: a blob under its key (the id, big-endian so the B-tree keeps id order,
/// or the dataset's 16-byte key).
pub const BLOBS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("blobs");
/// The manifest (JSON), in the same file as the rows and written in their
/// transactions: the resume point is always the rows that are there.
pub const MANIFEST: TableDefinition<&str, &str> = TableDefinition::new("manifest");
pub const MANIFEST_KEY: &str = "manifest";

/// redb's own default cache, used where the process has no memory cap to size it from.
const DEFAULT_CACHE_BYTES: u64 = 1 << 30;
/// The share of the cap its cache gets: what this project's PostgreSQL gets for
/// shared_buffers under its 1 GiB compose cap (128 MB). The rest of the cap is the
/// page cache's, which redb reads through (pread, no mmap).
const CACHE_SHARE_OF_CAP: u64 = 8;
/// The writer's cache while loading: the loader writes each page once and never
/// reads it back, so a large cache would only hold the cap's memory.
const WRITE_CACHE_BYTES: usize = 16 << 20;

/// The cache a reader gets under the run's cap, and how that was chosen (recorded
/// with each result).
pub fn reader_cache(at: &Locations) -> (u64, String) {
    match at.memory_cap_bytes {
        Some(cap) => (
            cap / CACHE_SHARE_OF_CAP,
            format!(
                "{} (1/{CACHE_SHARE_OF_CAP} of the {} cap)",
                format_bytes(cap / CACHE_SHARE_OF_CAP),
                format_bytes(cap)
            ),
        ),
        None => (
            DEFAULT_CACHE_BYTES,
            format!(
                "{} (redb's default: no cap to size it from)",
                format_bytes(DEFAULT_CACHE_BYTES)
            ),
        ),
    }
}

static READERS: SharedHandles<ReadOnlyDatabase> = SharedHandles::new();

/// The process's read-only handle on `path`, opened with a cache of `cache_bytes`
/// if none is open.
pub fn reader(path: &Path, cache_bytes: u64) -> Result<Arc<ReadOnlyDatabase>> {
    READERS.get_or_open(path, || {
        Builder::new()
            .set_cache_size(cache_bytes as usize)
            .open_read_only(path)
            .map_err(|e| explain(e, path))
    })
}

/// Whether an engine of this process holds `path` open (its cache with it).
pub fn reader_is_open(path: &Path) -> bool {
    READERS.is_open(path)
}

/// `read()` on the dataset in `file`, redb's word that the file is corrupted (its
/// `StorageError::Corrupted`, "DB corrupted: File truncated below stored layout") and
/// its panic on a page that does not hold together both the dataset's damage, which
/// `verify` reports and `drop` removes.
#[inline]
pub fn guarded<T>(file: &Path, read: impl FnOnce() -> Result<T>) -> Result<T> {
    crate::db::contained::contained("redb", file, read).map_err(|e| {
        let corrupted = e.chain().any(|c| c.to_string().starts_with("DB corrupted"));
        if corrupted && e.downcast_ref::<crate::error::InputError>().is_none() {
            crate::error::InputError::DatasetDamaged {
                path: file.to_path_buf(),
                why: format!("redb finds it corrupted ({e:#})"),
            }
            .into()
        } else {
            e
        }
    })
}

/// `path` writable (created when `create`), for the loader: refused while an engine
/// of this process reads it.
pub fn writer(path: &Path, create: bool) -> Result<Database> {
    if reader_is_open(path) {
        anyhow::bail!(
            "{} is open for reading in this process (an engine still holds it)",
            path.display()
        );
    }
    let mut builder = Builder::new();
    builder.set_cache_size(WRITE_CACHE_BYTES);
    let opened = if create {
        builder.create(path)
    } else {
        builder.open(path)
    };
    opened.map_err(|e| explain(e, path))
}

/// redb's error with what it means here.
fn explain(e: DatabaseError, path: &Path) -> anyhow::Error {
    match e {
        DatabaseError::DatabaseAlreadyOpen => anyhow::anyhow!(
            "{} is open in another process (a load or run of the same dataset?): wait for it, or stop it",
            path.display()
        ),
        // redb refuses a read-only open of a file whose last writer stopped mid-commit.
        DatabaseError::RepairAborted => anyhow::anyhow!(
            "{} needs redb's repair (its last writer stopped mid-commit): run `blobrace load` for it again, which repairs it and resumes",
            path.display()
        ),
        other => {
            anyhow::Error::new(other).context(format!("cannot open {} as redb", path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_cache_is_an_eighth_of_the_cap_or_redbs_default_said_as_such() {
        let capped = Locations {
            memory_cap_bytes: Some(1 << 30),
            ..Default::default()
        };
        let (bytes, said) = reader_cache(&capped);
        assert_eq!(bytes, 128 << 20);
        assert!(said.contains("1/8 of the 1GiB cap"), "{said}");
        let (bytes, said) = reader_cache(&Locations::default());
        assert_eq!(bytes, 1 << 30);
        assert!(said.contains("no cap"), "{said}");
    }
}
