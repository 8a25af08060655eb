//! "Just use files": open the blob's own file, read it whole, close it.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Instant;

use anyhow::{Result, bail};

use super::store::blob_path_into;
use crate::dataset::DatasetSpec;
use crate::db::engine::{Engine, EngineSettings, Streaming};

pub struct FsEngine {
    dir: Vec<u8>,
    path: Vec<u8>,
    size: usize,
    /// Its dataset: a size mix's rows differ in size (`before_fetch` sizes `out` for
    /// each, and each file is read to its end).
    spec: DatasetSpec,
}

impl FsEngine {
    pub fn open(data_dir: &Path, spec: DatasetSpec) -> Result<Self> {
        let dir = data_dir.join("fs").join(spec.stem());
        if !dir.is_dir() {
            // Its text, not the input error: one engine not loaded fails that engine alone.
            return Err(anyhow::anyhow!(
                "{}",
                crate::error::InputError::NotLoaded { path: dir }
            ));
        }
        let dir = dir.as_os_str().as_bytes().to_vec();
        // Room for "/xx/xx/<20 digits>\0" so formatting a path never reallocates.
        let path = Vec::with_capacity(dir.len() + 32);
        Ok(Self {
            dir,
            path,
            size: spec.size.as_usize(),
            spec,
        })
    }
}

impl FsEngine {
    /// Open the blob's file and read it into `out`, `piece` bytes per `read()`, and
    /// close it; with `MARK_FIRST`, when the first piece landed (otherwise no clock is
    /// read: `fetch`'s timed path stays bare).
    #[inline]
    fn read_blob<const MARK_FIRST: bool>(
        &mut self,
        id: u64,
        piece: usize,
        out: &mut Vec<u8>,
    ) -> Result<Option<Instant>> {
        blob_path_into(&self.dir, id, &mut self.path);
        // A size class's buffer is its one size; a mix's was sized for this row before
        // the clock (`before_fetch`), and the read below goes on to the file's end.
        let mix = self.spec.mix.is_some();
        let size = if mix { out.len() } else { self.size };
        out.resize(size, 0);
        // SAFETY: NUL-terminated path in our buffer; fd closed below on every path.
        let fd = unsafe { libc::open(self.path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            bail!("open blob {id}: {}", std::io::Error::last_os_error());
        }
        let mut first = None;
        let mut filled = 0;
        while filled < size {
            let want = piece.max(1).min(size - filled);
            let n = unsafe { libc::read(fd, out[filled..].as_mut_ptr().cast(), want) };
            if n <= 0 {
                let err = std::io::Error::last_os_error();
                unsafe { libc::close(fd) };
                bail!(
                    "read blob {id}: {}",
                    if n == 0 {
                        "file shorter than the blob".to_string()
                    } else {
                        err.to_string()
                    }
                );
            }
            filled += n as usize;
            if MARK_FIRST && first.is_none() {
                first = Some(Instant::now());
            }
        }
        if mix {
            // Read to the file's end, as an application that does not know the size
            // does: one read more, which returns 0 (more bytes: the file is not its row).
            let mut past = [0u8; 1];
            let n = unsafe { libc::read(fd, past.as_mut_ptr().cast(), 1) };
            if n != 0 {
                unsafe { libc::close(fd) };
                bail!("read blob {id}: the file is longer than its row ({size} bytes)");
            }
        }
        unsafe { libc::close(fd) };
        Ok(first)
    }
}

impl Engine for FsEngine {
    fn before_fetch(&mut self, id: u64, out: &mut Vec<u8>) {
        crate::db::engine::size_for_row(&self.spec, id, out);
    }

    #[inline]
    async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
        self.read_blob::<false>(id, self.size, out)?;
        Ok(())
    }

    fn streaming(&self) -> Streaming {
        Streaming::Chunks("open, then read() of one piece after another into the buffer, close")
    }

    async fn fetch_streamed(
        &mut self,
        id: u64,
        chunk: usize,
        out: &mut Vec<u8>,
    ) -> Result<Instant> {
        self.read_blob::<true>(id, chunk, out)?
            .ok_or_else(|| anyhow::anyhow!("blob {id} is empty"))
    }

    fn settings(&self) -> EngineSettings {
        EngineSettings::from([
            (
                "access".into(),
                "open + read + close, one file per blob".into(),
            ),
            ("layout".into(), "<(id>>16)%256>/<(id>>8)%256>/<id>".into()),
            (
                "dir".into(),
                String::from_utf8_lossy(&self.dir).into_owned(),
            ),
        ])
    }
}
