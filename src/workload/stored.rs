//! The bytes a store keeps for its dataset: what the steady state's model divides its
//! cache by, and what every result records (`DatasetFacts::stored_bytes`) for the
//! regime and the report's "What each store keeps".

use crate::db::registry::AnyStore;

/// The bytes a store's dataset takes on disk: a local store's file length, else its
/// estimate; a server's as the server counts them (`Store::disk_bytes`: InnoDB's
/// tablespace, PostgreSQL's relation with its TOAST), its blob bytes where it cannot
/// say. The cache holds pages, not blob bytes: a 64 KiB blob takes five 16 KiB pages in
/// InnoDB (3.8 GiB for 3 GiB), and the model over the blob bytes said 20.0% where the
/// pool held 16% of the pages.
/// Measured where it can be (`measured_stored_bytes`): a store that compresses keeps
/// fewer bytes than its blobs', and its cache holds a larger share of them.
pub async fn stored_bytes(store: &mut AnyStore) -> u64 {
    let spec = *store.spec();
    if let Some(bytes) = measured_stored_bytes(store).await {
        return bytes;
    }
    match (
        store.kind().is_server(),
        store.estimated_disk_bytes(spec.rows),
    ) {
        (false, estimate) if estimate > 0 => estimate,
        _ => spec.bytes(),
    }
}

/// The bytes a store keeps for its dataset, measured: a server's own count, a local
/// store's blocks on disk (its file, or every file under its directory). None where
/// neither can be read.
pub async fn measured_stored_bytes(store: &mut AnyStore) -> Option<u64> {
    if store.kind().is_server() {
        return match store.disk_bytes().await {
            Ok(Some(bytes)) if bytes > 0 => Some(bytes),
            _ => None,
        };
    }
    allocated_bytes(store.location()).filter(|&bytes| bytes > 0)
}

/// The most files counted under a directory. A file per blob at 4 KiB is 786,432 files
/// for 3 GiB: a stat of each would take a while and pull their inodes into memory the
/// cap counts, between a prefill and its measurement. Beyond it: not measured.
const MAX_FILES_COUNTED: usize = 200_000;

/// The blocks a file takes, or every file under a directory (not its sub-directories'
/// own blocks): what the disk holds for it. None past `MAX_FILES_COUNTED` files.
fn allocated_bytes(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.is_file() {
        return Some(meta.blocks() * 512);
    }
    if !meta.is_dir() {
        return None;
    }
    let (mut total, mut files) = (0, 0);
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let meta = entry.metadata().ok()?;
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                total += meta.blocks() * 512;
                files += 1;
                if files > MAX_FILES_COUNTED {
                    return None;
                }
            }
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a store keeps is its blocks on disk: a file's, or every file's in its
    /// directory, every level down.
    #[test]
    fn the_bytes_kept_are_the_blocks_of_the_file_or_of_every_file_under_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        for (name, len) in [("one", 10_000usize), ("a/two", 4096), ("a/b/three", 1)] {
            std::fs::write(dir.path().join(name), vec![7u8; len]).unwrap();
        }
        let one = allocated_bytes(&dir.path().join("one")).unwrap();
        assert!((10_000..=16_384).contains(&one), "{one}");
        let all = allocated_bytes(dir.path()).unwrap();
        assert!(all > one + 4096 && all <= one + 3 * 4096 + 8192, "{all}");
        assert_eq!(allocated_bytes(&dir.path().join("nothing")), None);
    }
}
