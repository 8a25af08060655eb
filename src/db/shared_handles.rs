//! The handles a run's engines share in this process, one per file or directory: N
//! clients, one cache, as an application's threads share their database. A handle lives
//! while an engine holds it; the store asks whether one is open (its cold start keeps
//! or closes that cache, and it reads through it rather than opening another).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use anyhow::Result;

pub struct SharedHandles<T> {
    open: Mutex<BTreeMap<PathBuf, Weak<T>>>,
}

impl<T> SharedHandles<T> {
    pub const fn new() -> Self {
        Self {
            open: Mutex::new(BTreeMap::new()),
        }
    }

    /// The handle open on `path`, or the one `open` makes, kept for the next caller
    /// while anyone holds it.
    pub fn get_or_open(&self, path: &Path, open: impl FnOnce() -> Result<T>) -> Result<Arc<T>> {
        let mut handles = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(handle) = handles.get(path).and_then(Weak::upgrade) {
            return Ok(handle);
        }
        let handle = Arc::new(open()?);
        handles.retain(|_, weak| weak.strong_count() > 0);
        handles.insert(path.to_path_buf(), Arc::downgrade(&handle));
        Ok(handle)
    }

    /// Whether an engine of this process holds `path` open.
    pub fn is_open(&self, path: &Path) -> bool {
        let handles = self.open.lock().unwrap_or_else(|e| e.into_inner());
        handles.get(path).is_some_and(|w| w.strong_count() > 0)
    }
}

impl<T> Default for SharedHandles<T> {
    fn default() -> Self {
        Self::new()
    }
}
