//! Files blobrace writes for readers (results, exports, charts, pages): written whole
//! beside their name, then renamed over it, so a reader, a re-run or a full disk never
//! meets half a file. A write that fails leaves the file before it as it was and
//! nothing beside it.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Write `bytes` to `<path>.tmp`, then rename it over `path`. On a failure the `.tmp`
/// is removed; on a full disk the error says which disk filled.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    if let Err(e) = std::fs::write(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(not_written(path, e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::Error::new(e).context(format!("cannot move {} into place", path.display()))
    })
}

/// Make a file with `make`, which writes to the path it is given, then rename it over
/// `path` (for writers that only take a path: plotters' PNG backend). The partial
/// file keeps `path`'s extension, which such writers read the format from.
pub fn make_atomic(path: &Path, make: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let tmp = partial_name(path);
    let made = make(&tmp).and_then(|()| {
        std::fs::rename(&tmp, path)
            .with_context(|| format!("cannot move {} into place", path.display()))
    });
    if let Err(e) = made {
        let _ = std::fs::remove_file(&tmp);
        return Err(if is_disk_full(&e) {
            e.context(full_disk(path))
        } else {
            e
        });
    }
    Ok(())
}

/// `<dir>/.<name>.partial.<ext>`: hidden, and of the same type.
fn partial_name(path: &Path) -> PathBuf {
    let name = path.file_stem().unwrap_or_default().to_string_lossy();
    let partial = match path.extension() {
        Some(ext) => format!(".{name}.partial.{}", ext.to_string_lossy()),
        None => format!(".{name}.partial"),
    };
    path.with_file_name(partial)
}

fn not_written(path: &Path, e: std::io::Error) -> anyhow::Error {
    if e.kind() == ErrorKind::StorageFull || e.raw_os_error() == Some(libc::EDQUOT) {
        anyhow::Error::new(e).context(full_disk(path))
    } else {
        anyhow::Error::new(e).context(format!("cannot write {}", path.display()))
    }
}

fn full_disk(path: &Path) -> String {
    let dir = path.parent().unwrap_or(path);
    let (fstype, source) = crate::machine::filesystem_of(dir);
    format!(
        "the disk holding {} ({fstype} {source}) is full: {} was not written, and the one before it, if any, is kept whole",
        dir.display(),
        path.display()
    )
}

/// `is_disk_full`, or an I/O error (EIO) while `path`'s file system has no room left
/// (under 16 MiB): a full disk that a store's library reported as "Input/output error"
/// (LMDB: the kernel took its pages, then could not write them back for want of space).
pub fn is_disk_full_at(e: &anyhow::Error, path: Option<&Path>) -> bool {
    if is_disk_full(e) {
        return true;
    }
    let eio = e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.raw_os_error() == Some(libc::EIO))
    }) || format!("{e:#}").contains("Input/output error");
    let existing = path.and_then(|p| p.ancestors().find(|dir| dir.is_dir()));
    eio && existing
        .and_then(|dir| crate::machine::statvfs(dir).ok())
        .is_some_and(|st| st.f_bavail.saturating_mul(st.f_frsize) < 16 << 20)
}

/// Whether `e` (anywhere in its chain) is a full disk or a used-up quota.
pub fn is_disk_full(e: &anyhow::Error) -> bool {
    let io = e.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| {
            io.kind() == ErrorKind::StorageFull || io.raw_os_error() == Some(libc::EDQUOT)
        })
    });
    // Drivers that keep only the text: SQLite's "database or disk is full", PostgreSQL's
    // "could not extend file ... No space left on device", InnoDB's "The table ... is
    // full" (error 1114), MariaDB's "Disk full".
    io || {
        let text = format!("{e:#}");
        [
            "No space left on device",
            "os error 28",
            "is full",
            "Disk full",
        ]
        .iter()
        .any(|m| text.contains(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        write_atomic(&path, b"old").unwrap();
        let e = make_atomic(&path, |tmp| {
            std::fs::write(tmp, b"half")?;
            Err(std::io::Error::from(ErrorKind::StorageFull).into())
        })
        .unwrap_err();
        assert!(is_disk_full(&e), "{e:#}");
        assert!(format!("{e:#}").contains("is full: "), "{e:#}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["results.json"]);
    }

    #[test]
    fn the_partial_file_keeps_the_extension_writers_read_the_format_from() {
        assert_eq!(
            partial_name(Path::new("/r/cdf-64KiB.png")),
            Path::new("/r/.cdf-64KiB.partial.png")
        );
    }
}
