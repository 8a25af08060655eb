//! Ctrl-C and SIGTERM during a run: one line saying where the run stood and how to go
//! on, then the exit a shell expects (128 + the signal). Without it the process died
//! with no word of its own after hours of loading.
//!
//! A signal handler may do almost nothing, so it writes the signal's number into a
//! pipe; a thread of ours reads it, prints the run's last status (kept up to date by
//! the run after each step: `set_status`) and exits. results.json is rewritten after
//! every finding, so nothing more needs saving: the next run with the same flags
//! continues from the last cell measured to its end (`resume`). The handler is a
//! plain `sigaction` (not a blocked mask): processes the run starts (docker, sh)
//! get the default actions back when they exec.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};

/// The run's results.json, the line an interrupt prints, and the one it prints where
/// nothing of the run was saved yet.
type Status = (Option<PathBuf>, String, String);
static STATUS: Mutex<Status> = Mutex::new((None, String::new(), String::new()));
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

/// What an interrupt marks stopped (`results_json`, where the run has saved anything)
/// and the line it prints: where the run stands, how to go on (`status`), or, where
/// results.json was not written yet (a first load stopped), `unsaved`.
pub fn set_status(results_json: PathBuf, status: String, unsaved: String) {
    if let Ok(mut s) = STATUS.lock() {
        *s = (Some(results_json), status, unsaved);
    }
}

/// What an interrupt prints before the run has a results.json of its own to mark
/// (its settings still being settled): `line`, and nothing on disk touched.
pub fn set_unsaved(line: String) {
    if let Ok(mut s) = STATUS.lock() {
        *s = (None, String::new(), line);
    }
}

extern "C" fn on_signal(signal: libc::c_int) {
    let fd = PIPE_WRITE.load(Ordering::Relaxed);
    let byte = signal as u8;
    // SAFETY: write(2) on a pipe is async-signal-safe; a full pipe only loses a repeat.
    unsafe {
        libc::write(fd, (&byte as *const u8).cast(), 1);
    }
}

/// Catch SIGINT and SIGTERM for the rest of the process. Call once, after the cap
/// is set (which may run the process again under systemd).
pub fn catch() {
    if PIPE_WRITE.load(Ordering::Relaxed) >= 0 {
        return;
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: a plain pipe(2) into a local array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return; // Signals keep their default action: the run still resumes.
    }
    let [read, write] = fds;
    PIPE_WRITE.store(write, Ordering::Relaxed);
    let spawned = std::thread::Builder::new()
        .name("interrupt".into())
        .spawn(move || {
            let mut byte = 0u8;
            // SAFETY: reading one byte into a local from the pipe made above.
            let n = unsafe { libc::read(read, (&mut byte as *mut u8).cast(), 1) };
            if n != 1 {
                return;
            }
            let signal = byte as libc::c_int;
            let name = if signal == libc::SIGINT {
                "SIGINT"
            } else {
                "SIGTERM"
            };
            let (results_json, status, unsaved) =
                STATUS.lock().map(|s| s.clone()).unwrap_or_default();
            let how = format!("interrupted by {name}");
            let saved = results_json.is_some_and(|path| mark_stopped(&path, &how));
            let said = match (saved, unsaved.is_empty()) {
                (true, _) => status,
                (false, false) => unsaved,
                // Stopped before the run said where it stood.
                (false, true) => "before the run began: nothing was measured or saved".into(),
            };
            say!("\n{how}: {said}");
            // exit drops nothing: the disk's readahead goes back here.
            crate::cap::readahead::put_back_all();
            std::process::exit(128 + signal);
        });
    if spawned.is_err() {
        return;
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installing a handler that only calls write(2).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Mark the running part of the run in `results_json` stopped by `how` ("interrupted
/// by SIGINT"), with its end time; then no other write follows in this process (the
/// write lock is kept: the caller exits).
/// Whether there was a results.json to mark.
fn mark_stopped(results_json: &std::path::Path, how: &str) -> bool {
    let writing = crate::records::results::WRITING.lock();
    let Ok(mut run) = crate::records::results::RunResults::read(results_json) else {
        return false; // Nothing saved yet: nothing to mark.
    };
    if let Some(part) = run.parts.last_mut() {
        part.finished_at = Some(crate::now_rfc3339());
        part.ended = Some(how.to_string());
    }
    if let Ok(bytes) = serde_json::to_vec_pretty(&run) {
        let _ = crate::atomic_file::write_atomic(results_json, &bytes);
    }
    std::mem::forget(writing);
    true
}
