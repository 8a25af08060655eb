//! A store library's panic on a damaged file, turned into the dataset's error. redb
//! trusts its pages: 4 KiB overwritten in the middle of a file made `verify` end with
//! "thread 'main' panicked at .../redb-4.6.0/src/tree_store/btree.rs" and exit 101,
//! where the other stores say the dataset is damaged and `drop` removes it. The calls
//! into such a library run in `contained`: its panic is caught, its message kept off
//! the terminal (a panic hook that stays silent while a contained call runs on its
//! thread), and what comes back is `InputError::DatasetDamaged`, which `verify`,
//! `measure` and `load` report in one line and `drop` removes.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Once;

use crate::error::InputError;

thread_local! {
    /// Whether a contained call runs on this thread (its panic is caught and said).
    static CONTAINING: Cell<bool> = const { Cell::new(false) };
    /// The message and place of the last panic caught on this thread.
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// The panic hook, installed once: silent for a contained call, the previous hook's
/// message for any other panic (a bug of ours stays loud).
pub fn install_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CONTAINING.with(Cell::get) {
                return previous(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", crate_relative(l.file()), l.line()))
                .unwrap_or_default();
            CAUGHT.with(|c| *c.borrow_mut() = Some(format!("{message}{at}")));
        }));
    });
}

/// `.../registry/src/index/redb-4.6.0/src/tree_store/btree.rs` → `redb-4.6.0/src/tree_store/btree.rs`.
fn crate_relative(file: &str) -> &str {
    match file.rfind("/src/") {
        Some(i) => &file[file[..i].rfind('/').map_or(0, |j| j + 1)..],
        None => file,
    }
}

/// `read()` with `library`'s panic turned into the damage of the dataset in `file`.
/// The caller installed the hook (`install_hook`) when it opened the library's file, so
/// a fetch's call does not check it again; without it a panic is still caught, but its
/// message printed.
#[inline]
pub fn contained<T>(
    library: &str,
    file: &Path,
    read: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let was = CONTAINING.with(|c| c.replace(true));
    let result = catch_unwind(AssertUnwindSafe(read));
    CONTAINING.with(|c| c.set(was));
    result.unwrap_or_else(|_| {
        let why = CAUGHT
            .with(|c| c.borrow_mut().take())
            .unwrap_or_else(|| "no message".into());
        Err(InputError::DatasetDamaged {
            path: file.to_path_buf(),
            why: format!("{library} gave up reading it, its pages do not hold together ({why})"),
        }
        .into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contained_panic_is_the_datasets_damage_and_others_pass_through() {
        install_hook();
        let file = Path::new("/data/redb/blobs.redb");
        let err = contained("redb", file, || -> anyhow::Result<()> {
            panic!("index out of bounds")
        })
        .unwrap_err();
        let said = err.to_string();
        assert!(said.contains("/data/redb/blobs.redb"), "{said}");
        assert!(
            said.contains("index out of bounds") && said.contains("contained.rs:"),
            "{said}"
        );
        assert!(matches!(
            err.downcast_ref::<InputError>(),
            Some(InputError::DatasetDamaged { .. })
        ));
        assert_eq!(contained("redb", file, || Ok(7)).unwrap(), 7);
        let plain = contained("redb", file, || -> anyhow::Result<()> {
            anyhow::bail!("io")
        });
        assert_eq!(plain.unwrap_err().to_string(), "io");
        assert_eq!(
            crate_relative("/r/registry/src/index/redb-4.6.0/src/tree_store/btree.rs"),
            "redb-4.6.0/src/tree_store/btree.rs"
        );
    }
}
