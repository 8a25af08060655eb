//! The physical floor: one `pread` of the blob's bytes from a packed file kept
//! open. No lookup, no parsing: what reading those bytes costs on this disk under
//! this cap, through the same page cache as every other engine.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::{Context, Result};

use super::{Engine, EngineSettings};
use crate::dataset::DatasetSpec;
use crate::store::{FloorStore, Store};

pub struct FloorEngine {
    file: File,
    size: usize,
    path: String,
}

impl FloorEngine {
    pub fn open(data_dir: &Path, spec: DatasetSpec) -> Result<Self> {
        let store = FloorStore::new(data_dir, spec);
        let path = store.location();
        let file = File::open(path).with_context(|| {
            format!(
                "cannot open {}: load the floor dataset first",
                path.display()
            )
        })?;
        Ok(Self {
            file,
            size: spec.size.as_usize(),
            path: path.display().to_string(),
        })
    }
}

impl Engine for FloorEngine {
    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        out.resize(self.size, 0);
        self.file.read_exact_at(out, (id - 1) * self.size as u64)?;
        Ok(())
    }

    fn settings(&self) -> EngineSettings {
        EngineSettings::from([
            (
                "access".into(),
                "pread at (id - 1) * size, file kept open".into(),
            ),
            ("file".into(), self.path.clone()),
        ])
    }
}
