//! The one terminal writer. Every line blobrace shows goes through here: `say!` for
//! what it tells as it works (on stderr: progress, notes, each result, errors) and
//! `show!` for a command's product (on stdout: `env`, the plan, a comparison table).
//! Elsewhere the std print macros are refused (clippy's `print_stderr` and
//! `print_stdout`, denied in the library, the binary and the benches).
//!
//! One place, so a run keeps what it said: from `hold()` (a run's start) the lines are
//! held, and once the run has its directory (`keep_in`, when results.json is first
//! written) they go on, held ones first, to its run.log. A run's log, its terminal and
//! its report then say the same: the reasons of a step that failed "above" can still be
//! read after the terminal is gone. A resumed run appends to the same log.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The file a run keeps its lines in, beside results.json.
pub const RUN_LOG: &str = "run.log";

/// At most this many lines are held before a run has its directory (a run that never
/// gets one, failing before its first finding, holds no more than this).
const HELD_MAX: usize = 100_000;

enum Keep {
    Off,
    Held(Vec<String>),
    File(PathBuf, std::fs::File),
}

static KEEP: Mutex<Keep> = Mutex::new(Keep::Off);

/// Tell one line on stderr (and keep it, while a run keeps its lines).
#[macro_export]
macro_rules! say {
    () => {
        $crate::say::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::say::line(format_args!($($arg)*))
    };
}

/// Show a command's product on stdout, a line (`show!`) or text as it is (`show_text`).
#[macro_export]
macro_rules! show {
    () => {
        $crate::say::product(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::say::product(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `say!`'s body: stderr first (the user sees it even if keeping fails), then the log.
pub fn line(args: fmt::Arguments<'_>) {
    // A line may name a server's URL: never its password (`secret`).
    let text = crate::secret::redact_text(&args.to_string());
    eprintln!("{text}");
    keep(&text);
}

/// `show!`'s body. A closed stdout (`blobrace env | head -1`) ends the process quietly
/// with 141, as a shell pipeline expects.
pub fn product(args: fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        eprintln!("cannot write to stdout: {e}");
    }
    drop(out);
    keep(args.to_string().trim_end_matches('\n'));
}

/// Text shown as it is (already laid out, its own newlines).
pub fn show_text(text: &str) {
    product(format_args!("{text}"));
}

fn lock() -> std::sync::MutexGuard<'static, Keep> {
    // A thread that panicked while holding it left nothing half-done worth refusing.
    KEEP.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn keep(text: &str) {
    lock().line(&crate::secret::redact_text(text));
}

/// Hold every line from now on, for the run's log (`keep_in`): a run starts (an earlier
/// run's log in this process, if any, is closed).
pub fn hold() {
    lock().hold();
}

/// Keep the lines in `dir`'s run.log from now on, the held ones first (appended: a
/// resumed run's parts follow each other). Nothing happens unless `hold` was called,
/// or where the log is already kept.
pub fn keep_in(dir: &Path) {
    lock().keep_in(dir);
}

/// Stop keeping lines (a run ended; tests run several in one process).
pub fn stop_keeping() {
    *lock() = Keep::Off;
}

impl Keep {
    fn line(&mut self, text: &str) {
        match self {
            Keep::Off => {}
            Keep::Held(lines) => {
                if lines.len() < HELD_MAX {
                    lines.push(text.to_string());
                }
            }
            Keep::File(path, file) => {
                if let Err(e) = writeln!(file, "{text}") {
                    // Said once, then the run goes on without its log: the terminal
                    // and results.json still have everything.
                    eprintln!(
                        "note: cannot write {} ({e}): the run goes on without its log",
                        path.display()
                    );
                    *self = Keep::Off;
                }
            }
        }
    }

    fn hold(&mut self) {
        *self = Keep::Held(Vec::new());
    }

    fn keep_in(&mut self, dir: &Path) {
        let Keep::Held(lines) = self else {
            return;
        };
        let held = std::mem::take(lines);
        let path = dir.join(RUN_LOG);
        let opened = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| {
                for line in &held {
                    writeln!(file, "{line}")?;
                }
                Ok(file)
            });
        *self = match opened {
            Ok(file) => Keep::File(path, file),
            Err(e) => {
                eprintln!(
                    "note: cannot write {} ({e}): the run goes on without its log",
                    path.display()
                );
                Keep::Off
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_lines_go_to_the_log_first_and_the_rest_follow_it_appended() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RUN_LOG), "an earlier part\n").unwrap();
        let mut keep = Keep::Off;
        keep.line("before holding: not kept");
        keep.hold();
        keep.line("held 1");
        keep.keep_in(dir.path());
        keep.line("kept 2");
        // Kept where it is: a second directory does not take it over.
        let other = tempfile::tempdir().unwrap();
        keep.keep_in(other.path());
        keep.line("kept 3");
        keep = Keep::Off;
        keep.line("after: not kept");
        let log = std::fs::read_to_string(dir.path().join(RUN_LOG)).unwrap();
        assert_eq!(log, "an earlier part\nheld 1\nkept 2\nkept 3\n");
        assert!(!other.path().join(RUN_LOG).exists());
    }

    #[test]
    fn a_log_that_cannot_be_opened_is_given_up_and_the_lines_still_shown() {
        let mut keep = Keep::Off;
        keep.hold();
        keep.line("held");
        keep.keep_in(Path::new("/nonexistent/blobrace-run"));
        assert!(matches!(keep, Keep::Off));
    }
}
