//! RocksDB's C API (`rocksdb/c.h`), loaded when first needed from the system's own
//! library (Debian's `librocksdb7.8`, Ubuntu's `librocksdb8.9`, …) instead of compiling
//! RocksDB's C++ with the crate: that build takes longer on 2 cores than the rest of the
//! project (and needs libclang), and a machine without the library still builds and runs
//! every other engine; RocksDB's are then left out with the line saying how to install
//! it. Only the calls this store makes are looked up, each by name: a library too old to
//! have one is refused naming it. The C API only grows, so any release since blob files
//! got their C options (7.x) serves.

use std::ffi::{CStr, CString, c_char, c_int, c_uchar, c_void};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Every RocksDB handle (`rocksdb_t*`, `rocksdb_options_t*`, …): opaque to us.
pub type Ptr = *mut c_void;
/// An error out-parameter: null, or a message RocksDB allocated (`rocksdb_free`).
pub type Err = *mut *mut c_char;

/// The variable naming the library file, where it is not where the loader looks.
pub const LIB_VARIABLE: &str = "BLOBRACE_ROCKSDB_LIB";

macro_rules! api {
    ($( $name:ident ( $($arg:ty),* ) $(-> $ret:ty)? ; )*) => {
        /// The C functions used, resolved once.
        #[allow(non_snake_case)]
        pub struct Api {
            $( pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?, )*
        }

        impl Api {
            /// Each function by name in `lib` (a `dlopen` handle).
            fn resolve(lib: *mut c_void) -> Result<Api, String> {
                Ok(Api {
                    $( $name: {
                        let name = concat!(stringify!($name), "\0");
                        // SAFETY: dlsym on a live handle with a NUL-terminated name.
                        let sym = unsafe { libc::dlsym(lib, name.as_ptr().cast()) };
                        if sym.is_null() {
                            return Err(format!("it has no {}", stringify!($name)));
                        }
                        // SAFETY: the symbol is RocksDB's C function of this signature
                        // (c.h, unchanged since 7.x).
                        unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) $(-> $ret)?>(sym)
                        }
                    }, )*
                })
            }
        }
    };
}

api! {
    rocksdb_options_create() -> Ptr;
    rocksdb_options_destroy(Ptr);
    rocksdb_options_set_create_if_missing(Ptr, c_uchar);
    rocksdb_options_set_compression(Ptr, c_int);
    rocksdb_options_set_blob_compression_type(Ptr, c_int);
    rocksdb_options_set_enable_blob_files(Ptr, c_uchar);
    rocksdb_options_set_min_blob_size(Ptr, u64);
    rocksdb_options_set_blob_file_size(Ptr, u64);
    rocksdb_options_set_blob_cache(Ptr, Ptr);
    rocksdb_options_set_block_based_table_factory(Ptr, Ptr);
    rocksdb_options_set_info_log_level(Ptr, c_int);
    rocksdb_options_set_disable_auto_compactions(Ptr, c_int);
    rocksdb_options_set_keep_log_file_num(Ptr, usize);
    rocksdb_options_set_write_buffer_size(Ptr, usize);
    rocksdb_block_based_options_create() -> Ptr;
    rocksdb_block_based_options_destroy(Ptr);
    rocksdb_block_based_options_set_block_cache(Ptr, Ptr);
    rocksdb_cache_create_lru(usize) -> Ptr;
    rocksdb_cache_destroy(Ptr);
    rocksdb_open(Ptr, *const c_char, Err) -> Ptr;
    rocksdb_open_for_read_only(Ptr, *const c_char, c_uchar, Err) -> Ptr;
    rocksdb_close(Ptr);
    rocksdb_writeoptions_create() -> Ptr;
    rocksdb_writeoptions_destroy(Ptr);
    rocksdb_writeoptions_set_sync(Ptr, c_uchar);
    rocksdb_writebatch_create() -> Ptr;
    rocksdb_writebatch_destroy(Ptr);
    rocksdb_writebatch_put(Ptr, *const c_char, usize, *const c_char, usize);
    rocksdb_write(Ptr, Ptr, Ptr, Err);
    rocksdb_readoptions_create() -> Ptr;
    rocksdb_readoptions_destroy(Ptr);
    rocksdb_get_pinned(Ptr, Ptr, *const c_char, usize, Err) -> Ptr;
    rocksdb_pinnableslice_value(Ptr, *mut usize) -> *const c_char;
    rocksdb_pinnableslice_destroy(Ptr);
    rocksdb_flushoptions_create() -> Ptr;
    rocksdb_flushoptions_destroy(Ptr);
    rocksdb_flushoptions_set_wait(Ptr, c_uchar);
    rocksdb_flush(Ptr, Ptr, Err);
    rocksdb_compact_range(Ptr, *const c_char, usize, *const c_char, usize);
    rocksdb_create_iterator(Ptr, Ptr) -> Ptr;
    rocksdb_iter_destroy(Ptr);
    rocksdb_iter_seek_to_first(Ptr);
    rocksdb_iter_seek(Ptr, *const c_char, usize);
    rocksdb_iter_valid(Ptr) -> c_uchar;
    rocksdb_iter_next(Ptr);
    rocksdb_iter_key(Ptr, *mut usize) -> *const c_char;
    rocksdb_iter_value(Ptr, *mut usize) -> *const c_char;
    rocksdb_iter_get_error(Ptr, Err);
    rocksdb_free(*mut c_void);
}

/// The library, loaded: its calls and the file they came from.
pub struct Library {
    pub api: Api,
    /// The file the loader opened, links resolved ("…/librocksdb.so.7.8.3"): the
    /// RocksDB release, recorded with each result.
    pub file: PathBuf,
}

// SAFETY: function pointers into a library never unloaded.
unsafe impl Send for Library {}
unsafe impl Sync for Library {}

impl Library {
    /// "librocksdb.so.7.8.3": the file's name, which carries the release.
    pub fn release(&self) -> String {
        self.file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.file.display().to_string())
    }

    /// Turn RocksDB's error out-parameter into a Result, freeing its message.
    pub fn check(&self, err: *mut c_char) -> Result<(), String> {
        if err.is_null() {
            return Ok(());
        }
        // SAFETY: RocksDB sets it to a NUL-terminated string it allocated.
        let text = unsafe { CStr::from_ptr(err) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: freed once, by the allocator that made it.
        unsafe { (self.api.rocksdb_free)(err.cast()) };
        Err(text)
    }
}

/// Where the loader looks besides its own path: Debian's and Ubuntu's multiarch
/// folders and the usual others, for a library with a version after `.so.` only.
const LIB_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
];

/// How to get the library, said where it is missing.
pub const INSTALL_HINT: &str = "install RocksDB's shared library (Debian 12: apt-get install librocksdb7.8; Ubuntu 24.04: librocksdb8.9; scripts/setup.sh does it) or point BLOBRACE_ROCKSDB_LIB at a librocksdb.so of release 7.8 or newer";

/// The files to try, in order: the variable's, the unversioned name, then every
/// versioned `librocksdb.so.*` found, newest first.
fn candidates() -> Vec<PathBuf> {
    if let Ok(path) = std::env::var(LIB_VARIABLE)
        && !path.trim().is_empty()
    {
        return vec![PathBuf::from(path)];
    }
    let mut found: Vec<PathBuf> = LIB_DIRS
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("librocksdb.so."))
        })
        .collect();
    // Newest release first: compare the numbers after ".so.".
    let version = |p: &PathBuf| -> Vec<u32> {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        name.trim_start_matches("librocksdb.so.")
            .split('.')
            .map(|n| n.parse().unwrap_or(0))
            .collect()
    };
    found.sort_by_key(|p| std::cmp::Reverse(version(p)));
    let mut all = vec![PathBuf::from("librocksdb.so")];
    all.extend(found);
    all
}

fn open(path: &Path) -> Result<Library, String> {
    let name = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: dlopen of a file name; the handle is kept for the process's life.
    let lib = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        // SAFETY: dlerror's message is valid until the next dl call on this thread.
        let why = unsafe { libc::dlerror() };
        let why = if why.is_null() {
            "dlopen failed".to_string()
        } else {
            unsafe { CStr::from_ptr(why) }
                .to_string_lossy()
                .into_owned()
        };
        return Err(why);
    }
    let api =
        Api::resolve(lib).map_err(|e| format!("{}: {e} (too old a release?)", path.display()))?;
    let file = loaded_file(api.rocksdb_options_create as *const c_void).unwrap_or(path.into());
    Ok(Library { api, file })
}

/// The file a symbol was loaded from, links resolved.
fn loaded_file(symbol: *const c_void) -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr fills `info` for an address inside a loaded object.
    if unsafe { libc::dladdr(symbol, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(name.to_string_lossy().into_owned());
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}

static LIBRARY: OnceLock<Result<Library, String>> = OnceLock::new();

/// The process's RocksDB, loaded on first use; Err says what was tried and how to
/// install it.
pub fn library() -> Result<&'static Library, String> {
    LIBRARY
        .get_or_init(|| {
            let mut tried = Vec::new();
            for path in candidates() {
                match open(&path) {
                    Ok(lib) => return Ok(lib),
                    Err(why) => tried.push(why),
                }
            }
            Err(format!(
                "RocksDB's library could not be loaded ({}): {INSTALL_HINT}",
                tried.join("; ")
            ))
        })
        .as_ref()
        .map_err(|e| e.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_named_by_the_variable_that_is_not_there_is_said_with_the_fix() {
        let err = open(Path::new("/nonexistent/librocksdb.so.7.8"))
            .err()
            .unwrap();
        assert!(err.contains("/nonexistent/librocksdb.so.7.8"), "{err}");
    }

    #[test]
    fn a_library_without_rocksdbs_calls_is_refused_naming_the_first_missing() {
        // libc is loaded in every process and has none of them.
        let err = open(Path::new("libc.so.6")).err().unwrap();
        assert!(err.contains("has no rocksdb_options_create"), "{err}");
        assert!(err.contains("too old a release"), "{err}");
    }
}
