//! zstd at level 3 (its default, and what RocksDB's ZSTD and most users' zstd mean), from
//! the system's own `libzstd.so.1`, loaded when first needed: every machine that has the
//! RocksDB engine has it (librocksdb depends on it), and compiling zstd's C with the crate
//! would add to a build that already takes minutes on 2 cores. Where it cannot be loaded
//! the ratio is "unavailable", never a guess.

use std::ffi::{CStr, c_int, c_uint, c_void};
use std::sync::OnceLock;

/// zstd's default level.
pub const LEVEL: c_int = 3;

type Compress = unsafe extern "C" fn(*mut c_void, usize, *const c_void, usize, c_int) -> usize;
type Bound = unsafe extern "C" fn(usize) -> usize;
type IsError = unsafe extern "C" fn(usize) -> c_uint;

struct Api {
    compress: Compress,
    bound: Bound,
    is_error: IsError,
}

fn api() -> Result<&'static Api, &'static str> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(load).as_ref().map_err(String::as_str)
}

fn symbol(lib: *mut c_void, name: &CStr) -> Result<*mut c_void, String> {
    // SAFETY: dlsym on a live handle with a NUL-terminated name.
    let sym = unsafe { libc::dlsym(lib, name.as_ptr()) };
    if sym.is_null() {
        return Err(format!("libzstd.so.1 has no {}", name.to_string_lossy()));
    }
    Ok(sym)
}

fn load() -> Result<Api, String> {
    // SAFETY: dlopen of a library name; the handle is kept for the process's life.
    let lib = unsafe { libc::dlopen(c"libzstd.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        return Err("libzstd.so.1 is not installed (Debian: apt-get install libzstd1)".into());
    }
    // SAFETY: each symbol is zstd's stable C function of this signature (zstd.h, 1.x).
    unsafe {
        Ok(Api {
            compress: std::mem::transmute::<*mut c_void, Compress>(symbol(lib, c"ZSTD_compress")?),
            bound: std::mem::transmute::<*mut c_void, Bound>(symbol(lib, c"ZSTD_compressBound")?),
            is_error: std::mem::transmute::<*mut c_void, IsError>(symbol(lib, c"ZSTD_isError")?),
        })
    }
}

/// Why zstd cannot be used here, if it cannot.
pub fn unavailable() -> Option<&'static str> {
    api().err()
}

/// The bytes zstd (level 3) makes of `src`, compressed alone; `scratch` is reused.
pub fn compressed_len(src: &[u8], scratch: &mut Vec<u8>) -> Result<usize, &'static str> {
    let api = api()?;
    // SAFETY: plain arithmetic on a length.
    let bound = unsafe { (api.bound)(src.len()) };
    scratch.resize(bound, 0);
    // SAFETY: dst holds `bound` writable bytes, src its own length; both outlive the call.
    let n = unsafe {
        (api.compress)(
            scratch.as_mut_ptr().cast(),
            bound,
            src.as_ptr().cast(),
            src.len(),
            LEVEL,
        )
    };
    // SAFETY: plain check of a return code.
    if unsafe { (api.is_error)(n) } != 0 {
        return Err("ZSTD_compress failed");
    }
    Ok(n)
}
