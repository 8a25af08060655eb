//! One dataset, one writer: advisory locks (flock) per dataset, so that two processes
//! never load, churn or drop the same dataset at once, and none is dropped while another
//! process reads it. Two `blobrace load` of one dataset both wrote fs and the floor and
//! failed in SQLite ("UNIQUE constraint failed: seaql_migrations.version"); a `drop`
//! deleted what a running `measure` read, which then counted each lost engine twice.
//!
//! A process takes a dataset exclusively to load, churn or drop it and shared to read
//! it (measure, verify), and keeps the shared lock until it ends or drops the dataset:
//! its own loads turn into its reads without letting another process in between
//! (flock converts a lock held through the same file). The locks live in the machine's
//! temporary directory, keyed by the dataset's absolute location (a server's URL and
//! table for its datasets): processes in other containers or machines do not see them.
//! Beside each lock, one file per holder says who it is, for the line of the one waiting.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use anyhow::{Context, Result, bail};

/// The locks this process holds, by key: a dataset is one open file here, so that
/// taking it again converts the lock instead of conflicting with itself.
static HELD: LazyLock<Mutex<HashMap<String, File>>> = LazyLock::new(Default::default);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Load, churn or drop: no one else at all.
    Write,
    /// Measure or verify: readers together, no writer.
    Read,
}

/// Whether a process that finds a dataset locked waits (saying for whom) or refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiting {
    Wait,
    Refuse,
}

fn lock_dir() -> PathBuf {
    std::env::temp_dir().join("blobrace-locks")
}

/// The lock's file name for a dataset at `location`: readable, and unique by a hash
/// of the whole (absolute) location.
fn key_of(location: &Path) -> String {
    // A file's lock is keyed by what it is (`machine::canonical`), not by its spelling:
    // `data/x`, `./data/x` and a symbolic link to it are one dataset.
    let absolute = if location.to_string_lossy().contains("://") {
        location.to_path_buf()
    } else {
        crate::machine::canonical(location)
    };
    let text = absolute.to_string_lossy();
    let readable: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let tail = &readable[readable.len().saturating_sub(80)..];
    // FNV-1a: stable across runs and versions (std's hasher is not).
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{tail}-{hash:016x}")
}

/// Take `location`'s dataset for `access`, as `doing` (e.g. "loading"). A lock another
/// process holds is waited for, with a line naming it, or refused (`Waiting::Refuse`).
/// Returns whether it had to wait: what the caller read of the dataset before may
/// have changed meanwhile.
pub fn take(location: &Path, access: Access, doing: &str, waiting: Waiting) -> Result<bool> {
    let dir = lock_dir();
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the lock directory {}", dir.display()))?;
    // Every user's processes lock here (sticky, like /tmp).
    let _ = std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o1777));
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep(&dir));
    let key = key_of(location);
    let path = dir.join(format!("{key}.lock"));
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let mut waited = false;
    loop {
        if !held.contains_key(&key) {
            let file = open_lock(&path)
                .with_context(|| format!("cannot open the lock {}", path.display()))?;
            held.insert(key.clone(), file);
        }
        waited |= lock(&held[&key], location, access, doing, waiting, &dir, &key)?;
        // Another process's sweep may have removed the file between our open and our
        // lock: a lock on a file no longer under its name guards nothing. Open it again.
        if same_file(&held[&key], &path) {
            break;
        }
        held.remove(&key);
    }
    let me = dir.join(format!("{key}.{}.holder", std::process::id()));
    // The program and its subcommand only: the rest may hold a server's password.
    let command: Vec<String> = std::env::args().take(2).collect();
    if let Ok(mut f) = File::create(&me) {
        let _ = write!(
            f,
            "process {} ({doing}: {})",
            std::process::id(),
            command.join(" ")
        );
    }
    Ok(waited)
}

/// Lock `file` for `access`, waiting with a line or refusing; whether it waited.
fn lock(
    file: &File,
    location: &Path,
    access: Access,
    doing: &str,
    waiting: Waiting,
    dir: &Path,
    key: &str,
) -> Result<bool> {
    let tried = match access {
        Access::Write => file.try_lock(),
        Access::Read => file.try_lock_shared(),
    };
    let waited = match tried {
        Ok(()) => false,
        Err(std::fs::TryLockError::WouldBlock) => {
            let holders = holders(dir, key);
            let what = format!(
                "{} is in use by {holders}: {doing} it must wait until {}",
                location.display(),
                if access == Access::Write {
                    "no other process loads, reads or drops it"
                } else {
                    "no other process loads or drops it"
                }
            );
            if waiting == Waiting::Refuse {
                bail!("{what}; refused (--no-wait): run again once it is done");
            }
            say!("waiting: {what} (Ctrl-C stops; --no-wait refuses instead)");
            match access {
                Access::Write => file.lock(),
                Access::Read => file.lock_shared(),
            }
            .with_context(|| format!("cannot lock {}", location.display()))?;
            true
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("cannot lock {}", location.display()));
        }
    };
    Ok(waited)
}

/// A lock file, created where missing, never truncated (another process may hold it).
fn open_lock(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// What ended processes left in the lock directory, once per process: the holder
/// files of processes no longer alive (a killed process never removes its own), and
/// the lock files no one holds (one per dataset location ever used; tests alone made
/// thousands). A lock file is removed while locked here, and `take` opens it again
/// where another process locked the removed one.
fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name
            .strip_suffix(".holder")
            .and_then(|rest| rest.rsplit_once('.'))
            .map(|(_, pid)| pid)
        {
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_file(entry.path());
            }
        } else if name.ends_with(".lock")
            && let Ok(file) = File::open(entry.path())
            && file.try_lock().is_ok()
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A dataset another process is loading, churning or dropping: where it stands is
/// read once that process is done with it.
#[derive(Debug)]
pub struct InUse(pub PathBuf);

impl std::fmt::Display for InUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is being written by {}",
            self.0.display(),
            holders(&lock_dir(), &key_of(&self.0))
        )
    }
}

impl std::error::Error for InUse {}

/// Held while a glance reads a dataset's state: the shared lock, where one was taken.
pub struct Glance {
    _shared: Option<File>,
}

/// Read access to `location`'s dataset while the `Glance` lives, unless another process
/// writes it now (`InUse`): reading a dataset being loaded can fail its writer (an
/// SQLite reader holds off the loader's commit in the rollback-journal mode a load
/// runs in), and what it read would be stale anyway. Never waits.
pub fn glance(location: &Path) -> Result<Glance, InUse> {
    let key = key_of(location);
    if HELD
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(&key)
    {
        // Held by this process: no other writes it.
        return Ok(Glance { _shared: None });
    }
    let dir = lock_dir();
    if std::fs::create_dir_all(&dir).is_err() {
        // No locks here at all (`take` says why): nothing to glance past.
        return Ok(Glance { _shared: None });
    }
    let path = dir.join(format!("{key}.lock"));
    loop {
        let Ok(file) = open_lock(&path) else {
            return Ok(Glance { _shared: None });
        };
        match file.try_lock_shared() {
            Ok(()) if same_file(&file, &path) => {
                return Ok(Glance {
                    _shared: Some(file),
                });
            }
            Ok(()) => continue,
            Err(std::fs::TryLockError::WouldBlock) => return Err(InUse(location.to_path_buf())),
            Err(std::fs::TryLockError::Error(_)) => return Ok(Glance { _shared: None }),
        }
    }
}

/// Let go of `location`'s dataset (after dropping it).
pub fn release(location: &Path) {
    let key = key_of(location);
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(file) = held.remove(&key) {
        let _ = file.unlock();
        let _ =
            std::fs::remove_file(lock_dir().join(format!("{key}.{}.holder", std::process::id())));
    }
}

/// The other live processes that said they hold `key`.
fn holders(dir: &Path, key: &str) -> String {
    let prefix = format!("{key}.");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = name.strip_prefix(&prefix)?.strip_suffix(".holder")?;
            let alive =
                pid != std::process::id().to_string() && Path::new("/proc").join(pid).exists();
            alive.then(|| std::fs::read_to_string(entry.path()).ok())?
        })
        .collect();
    found.sort();
    if found.is_empty() {
        "another process".into()
    } else {
        found.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_readable_and_tell_locations_apart() {
        let a = key_of(Path::new("/data/sqlite/1KiB-x3145728.sqlite"));
        assert!(a.starts_with("_data_sqlite_1KiB_x3145728_sqlite-"), "{a}");
        assert_eq!(a, key_of(Path::new("/data/sqlite/1KiB-x3145728.sqlite")));
        assert_ne!(a, key_of(Path::new("/data/sqlite/1KiB_x3145728.sqlite")));
        let relative = key_of(Path::new("data/fs/1KiB-x8"));
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(relative, key_of(&cwd.join("data/fs/1KiB-x8")));
        assert_eq!(relative, key_of(Path::new("./data/../data/fs/1KiB-x8")));
        let server = key_of(Path::new("postgres://blobrace@127.0.0.1:15432/blobrace#t"));
        assert!(
            !server.contains(&*cwd.to_string_lossy().replace('/', "_")),
            "{server}"
        );
    }
}
