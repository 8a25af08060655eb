//! What the stores of one data file in a folder of their own share (LMDB's data.mdb,
//! redb's blobs.redb): the states told apart before the file is looked into, the id
//! range of big-endian id keys, the folder's bytes on disk, the file's eviction, and the
//! file itself as the store's own file.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::store::{IdRange, allocated_bytes};
use crate::dataset::DatasetState;
use crate::disk::evict::{EvictionReport, evict_file, resident_bytes};
use crate::error::InputError;

/// Before a store looks inside its file: Absent where its folder is not there; a load
/// killed before it made its file where the folder holds nothing else (`besides`: what
/// the library makes beside it, LMDB's lock.mdb); someone else's folder where it holds
/// other files. None: the file is there, to be looked into.
pub fn state_before_file(
    dir: &Path,
    file: &Path,
    besides: &[&str],
) -> Result<Option<DatasetState>> {
    if !dir.exists() {
        return Ok(Some(DatasetState::Absent));
    }
    if file.exists() {
        return Ok(None);
    }
    let others = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok())
        .any(|e| !besides.iter().any(|b| e.file_name() == *b));
    if !others {
        return Ok(Some(DatasetState::Partial { rows_done: 0 }));
    }
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    Err(InputError::ForeignFile {
        path: dir.to_path_buf(),
        why: format!("the directory has files but no {name}"),
    }
    .into())
}

/// `count` rows whose first and last keys are big-endian ids: their id range.
pub fn id_range_of_keys(
    count: u64,
    first: Option<&[u8]>,
    last: Option<&[u8]>,
    file: &Path,
) -> Result<IdRange> {
    let id_of = |key: &[u8]| -> Result<u64> {
        Ok(u64::from_be_bytes(key.try_into().with_context(|| {
            format!("a key of {} bytes in {}", key.len(), file.display())
        })?))
    };
    let first = first.map(id_of).transpose()?;
    let last = last.map(id_of).transpose()?;
    Ok(IdRange {
        count,
        ids: Some((first.unwrap_or(0), last.unwrap_or(0))),
    })
}

/// The folder's allocated blocks: both libraries grow their file and never shrink it,
/// so free pages count (space amplification the report shows).
pub fn disk_bytes(dir: &Path) -> Result<Option<u64>> {
    let bytes = allocated_bytes(dir)
        .with_context(|| format!("cannot count the bytes of {}", dir.display()))?;
    Ok(Some(bytes))
}

/// The file's pages written back and dropped from the page cache, `method` saying what
/// the store closed first (its library's own cache, a map) and what stays.
pub fn evict(file: &Path, method: String) -> Result<EvictionReport> {
    let started = std::time::Instant::now();
    let mut report = EvictionReport {
        method,
        ..Default::default()
    };
    if file.exists() {
        report.bytes = evict_file(file)?;
        report.files = 1;
        report.resident_after_bytes = Some(resident_bytes(file)?);
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The file as the store's own file for the disk probe, or why there is none.
pub fn own_file(file: &Path) -> Result<Vec<PathBuf>, String> {
    if file.exists() {
        Ok(vec![file.to_path_buf()])
    } else {
        Err(format!("{} is not there", file.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_absent_partial_or_foreign_before_its_file_is_looked_into() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("ds");
        let file = dir.join("data.mdb");
        assert_eq!(
            state_before_file(&dir, &file, &["lock.mdb"]).unwrap(),
            Some(DatasetState::Absent)
        );
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("lock.mdb"), b"").unwrap();
        assert_eq!(
            state_before_file(&dir, &file, &["lock.mdb"]).unwrap(),
            Some(DatasetState::Partial { rows_done: 0 })
        );
        std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
        let err = state_before_file(&dir, &file, &["lock.mdb"]).unwrap_err();
        assert!(
            format!("{err:#}").contains("has files but no data.mdb"),
            "{err:#}"
        );
        std::fs::write(&file, b"x").unwrap();
        assert_eq!(state_before_file(&dir, &file, &["lock.mdb"]).unwrap(), None);
    }

    #[test]
    fn big_endian_keys_give_their_ids_and_a_key_of_another_length_is_named() {
        let file = Path::new("/x/blobs.redb");
        let range = id_range_of_keys(
            3,
            Some(&7u64.to_be_bytes()),
            Some(&9u64.to_be_bytes()),
            file,
        )
        .unwrap();
        assert_eq!(range.ids, Some((7, 9)));
        assert_eq!(
            id_range_of_keys(0, None, None, file).unwrap().ids,
            Some((0, 0))
        );
        let err = id_range_of_keys(1, Some(&[1, 2, 3]), None, file).unwrap_err();
        assert!(format!("{err:#}").contains("a key of 3 bytes"), "{err:#}");
    }
}
