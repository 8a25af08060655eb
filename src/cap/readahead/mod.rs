//! The readahead of the disk a run reads from (`--readahead`), set for the run and put
//! back like the caps.
//!
//! A cold fetch that misses the page cache reads what it asked for and, on a buffered
//! read or an mmap page fault, as much around it as the disk's `read_ahead_kb` says:
//! LMDB's 64 KiB fetch read 6.5 MB from disk at this VM's 8192 KiB and 214 KiB at
//! Linux's default 128 KiB (p50 8.5 ms against 0.54 ms, the same hour). That is the
//! host's setting, not the store's, so a run sets it, and reads it back, as it sets the
//! memory cap: runs on different hosts then compare.
//!
//! The value a run found (the host's own) is kept in a state directory under /run (a
//! tmpfs: gone at a reboot, as the setting itself is) with one file per run holding it.
//! It is put back when the last holder lets go: at the run's end, on Ctrl-C or SIGTERM
//! (`put_back_all`), and, after a SIGKILL, by a watchdog shell that waits for this
//! process's end on a pipe; a leftover is put back by the next run. Two runs at once may
//! share the disk only at the same readahead.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::disk::BlockDevice;
use crate::error::InputError;

/// Linux's own default (`VM_READAHEAD_PAGES`, 128 KiB): what most hosts run with, so a
/// run at it answers for them rather than for this machine's setting.
pub const DEFAULT_KB: u64 = 128;

/// The most `--readahead` takes: far past any device's useful window.
const MAX_KB: u64 = 1 << 20;

/// `--readahead`: the host's own value, or KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Readahead {
    /// Whatever the host has (the value before any run set it).
    Host,
    Kib(u64),
}

impl Default for Readahead {
    /// Results written before the setting existed ran at the host's.
    fn default() -> Self {
        Readahead::Host
    }
}

impl std::fmt::Display for Readahead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Readahead::Host => write!(f, "host"),
            Readahead::Kib(kb) => write!(f, "{kb}KiB"),
        }
    }
}

impl From<Readahead> for String {
    fn from(r: Readahead) -> String {
        r.to_string()
    }
}

impl TryFrom<String> for Readahead {
    type Error = InputError;
    fn try_from(text: String) -> Result<Self, InputError> {
        parse_readahead(&text)
    }
}

/// The forms `--readahead` takes, for its help and its errors.
pub const FORMS: &str = "\"host\" (the disk's own setting), or KiB: a whole number (\"128\") or a size (\"128KiB\", \"8MiB\"), 0 for none, at most 1GiB";

/// `--readahead`: "host", a bare number of KiB, or a size in whole KiB.
pub fn parse_readahead(text: &str) -> Result<Readahead, InputError> {
    let bad = |why: String| InputError::Value {
        what: "readahead",
        input: text.into(),
        why: format!("{why}; it takes {FORMS}"),
    };
    let t = text.trim();
    if t == "host" {
        return Ok(Readahead::Host);
    }
    let kb = if let Ok(kb) = t.parse::<u64>() {
        kb
    } else {
        let bytes = crate::size::parse_bytes(t).map_err(|e| bad(e.to_string()))?;
        if bytes % 1024 != 0 {
            return Err(bad(format!("{bytes} bytes is not a whole number of KiB")));
        }
        bytes / 1024
    };
    if kb > MAX_KB {
        return Err(bad(format!("{kb} KiB is more than {MAX_KB} KiB")));
    }
    Ok(Readahead::Kib(kb))
}

/// One disk's readahead during a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceReadahead {
    /// "vda (254:0)".
    pub device: String,
    /// What is on it: "data directory", "postgres's volume", ...
    pub holds: Vec<String>,
    /// The host's own value, before this run (or a run before it) set it.
    pub host_kb: Option<u64>,
    /// Read back once set: what the run's reads went through.
    pub in_force_kb: Option<u64>,
    /// Why the asked value is not the one in force (not root, a read-only /sys in a
    /// container, another run holding it); None where it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
}

/// The readahead a run asked for and what each of its disks ran under.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadaheadReport {
    pub asked: Readahead,
    pub devices: Vec<DeviceReadahead>,
    /// Why a disk could not be found at all (tmpfs, overlay), or one put back that a
    /// killed run left set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ReadaheadReport {
    /// The data directory's readahead in force, KiB.
    pub fn data_kb(&self) -> Option<u64> {
        self.devices.first().and_then(|d| d.in_force_kb)
    }

    /// "readahead 128 KiB (asked; the host's 8192 KiB)", "readahead 8192 KiB (the host's;
    /// 128 KiB asked, not set: …)", "readahead unavailable (…)".
    pub fn label(&self) -> String {
        let Some(d) = self.devices.first() else {
            return format!("readahead unavailable ({})", self.notes.join("; "));
        };
        let kb = |v: Option<u64>| v.map_or("unavailable".into(), |k| format!("{k} KiB"));
        match (&d.why_not, self.asked) {
            (Some(why), _) => format!(
                "readahead {} (the host's; {} asked, not set: {why})",
                kb(d.in_force_kb),
                asked_label(self.asked)
            ),
            (None, Readahead::Host) => format!("readahead {} (the host's)", kb(d.in_force_kb)),
            (None, Readahead::Kib(_)) if d.host_kb == d.in_force_kb => {
                format!(
                    "readahead {} (asked, as the host has it)",
                    kb(d.in_force_kb)
                )
            }
            (None, Readahead::Kib(_)) => format!(
                "readahead {} (asked; the host's {})",
                kb(d.in_force_kb),
                kb(d.host_kb)
            ),
        }
    }
}

fn asked_label(r: Readahead) -> String {
    match r {
        Readahead::Host => "the host's".into(),
        Readahead::Kib(kb) => format!("{kb} KiB"),
    }
}

/// Where runs keep the host's values while they hold them: /run is a tmpfs, cleared at
/// a reboot like the setting itself; elsewhere the temporary directory.
pub fn state_dir() -> PathBuf {
    let run = Path::new("/run");
    if run.is_dir() && crate::machine::check_writable_dir(&run.join("blobrace")).is_ok() {
        run.join("blobrace/readahead")
    } else {
        std::env::temp_dir().join("blobrace-readahead")
    }
}

/// This run's hold on one disk's readahead: let go (and the host's value put back
/// where no other run holds it) when dropped.
pub struct Hold {
    dir: PathBuf,
    holder: String,
    sys_file: PathBuf,
    /// Its stdin is this process's end of the pipe: closed (by exit or a kill), the
    /// watchdog lets go for us.
    watchdog: Option<Child>,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);
/// Every hold of this process, for `put_back_all` on a signal (which exits without
/// dropping anything).
static HELD: Mutex<Vec<(PathBuf, String, PathBuf)>> = Mutex::new(Vec::new());

/// The watchdog: waits for its stdin to close (this process gone), then lets go as
/// `release` does: under the lock, its holder file removed, the host's value put back
/// where no live holder is left. `$1` the device's state dir, `$2` the holder, `$3` the
/// sysfs file.
const WATCHDOG: &str = r#"
trap '' INT TERM HUP
while read -r _; do :; done
[ -d "$1" ] || exit 0
exec 9>"$1/../lock" && flock 9 || exit 1
rm -f "$1/$2"
for h in "$1"/h-*; do
  [ -e "$h" ] || continue
  pid=${h##*/h-}; pid=${pid%%-*}
  if kill -0 "$pid" 2>/dev/null; then exit 0; fi
  rm -f "$h"
done
[ -f "$1/host" ] && cat "$1/host" > "$3" && rm -rf "$1"
"#;

/// Hold `device`'s readahead at `asked` for this run: the host's value recorded, the
/// asked one written and read back. `Err` is a refusal (another run holds the disk at
/// another value); a value that cannot be written is `Ok` with `why_not` set, for the
/// caller to refuse or go on with.
pub fn hold(
    asked: Readahead,
    device: &BlockDevice,
    sys: &Path,
    state: &Path,
) -> Result<(DeviceReadahead, Option<Hold>, Vec<String>), String> {
    let sys_file = sys.join(format!(
        "dev/block/{}/queue/read_ahead_kb",
        device.major_minor
    ));
    let label = format!("{} ({})", device.name, device.major_minor);
    let mut notes = Vec::new();
    let dir = state.join(device.major_minor.replace(':', "_"));
    // Everything read and written under the lock: a killed run's watchdog puts the
    // host's value back under it, so a value read before it would be its run's, not the
    // host's (a next run then recorded 64 KiB as the host's, and found 4096 after
    // writing 64).
    let lock = match lock(state) {
        Ok(lock) => lock,
        Err(why) => {
            let current = read_kb(&sys_file);
            let mut report = DeviceReadahead {
                device: label,
                holds: Vec::new(),
                host_kb: current,
                in_force_kb: current,
                // Without the state dir nothing can be put back after a kill: set nothing.
                why_not: current
                    .is_some_and(|c| asked != Readahead::Host && asked != Readahead::Kib(c))
                    .then(|| format!("no state directory to keep the host's value in ({why})")),
            };
            if current.is_none() {
                report.why_not = Some(format!("{} cannot be read", sys_file.display()));
            }
            return Ok((report, None, notes));
        }
    };
    let current = read_kb(&sys_file);
    let mut report = DeviceReadahead {
        device: label.clone(),
        holds: Vec::new(),
        host_kb: current,
        in_force_kb: current,
        why_not: None,
    };
    let Some(current) = current else {
        report.why_not = Some(format!("{} cannot be read", sys_file.display()));
        return Ok((report, None, notes));
    };
    let live = live_holders(&dir);
    let host = match read_kb(&dir.join("host")) {
        Some(host) if host != current && live.is_empty() => {
            notes.push(format!(
                "{label}: readahead {current} KiB was left by a run that was killed; the host's {host} KiB is put back at this run's end"
            ));
            host
        }
        Some(host) => host,
        None => current,
    };
    report.host_kb = Some(host);
    let target = match asked {
        Readahead::Host => host,
        Readahead::Kib(kb) => kb,
    };
    if let Some((pid, held)) = live.first().map(|p| (*p, current))
        && held != target
    {
        return Err(format!(
            "another blobrace run (process {pid}) holds the readahead of {label} at {held} KiB, and this one asks {target} KiB: two runs on one disk must read at one readahead. Wait for it, or ask --readahead {held}"
        ));
    }
    // The host's value and this run's holder are kept before the disk is changed: a
    // kill after the write finds them, and the next run or the watchdog puts it back.
    let holder = format!(
        "h-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let kept = fs::create_dir_all(&dir)
        .and_then(|()| {
            if !dir.join("host").exists() {
                fs::write(dir.join("host"), host.to_string())?;
            }
            fs::write(dir.join(&holder), "")
        })
        .map_err(|e| format!("cannot keep the host's readahead in {}: {e}", dir.display()));
    if let Err(why) = kept {
        // Nothing changed: nothing to put back, and nothing can be after a kill.
        let _ = fs::remove_file(dir.join(&holder));
        if live.is_empty() {
            let _ = fs::remove_dir_all(&dir);
        }
        report.why_not = (target != current).then_some(why);
        return Ok((report, None, notes));
    }
    if target != current
        && let Err(e) = fs::write(&sys_file, target.to_string())
    {
        report.why_not = Some(match e.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => {
                format!("writing {} needs root ({e})", sys_file.display())
            }
            Some(libc::EROFS) => format!(
                "{} is read-only here (inside a container: set it on the host, as scripts/compose-run.sh does)",
                sys_file.display()
            ),
            _ => format!("cannot write {}: {e}", sys_file.display()),
        });
        // Unchanged: let go of what was kept (the host's value back where no run holds
        // the disk, which is the value it has).
        drop(lock);
        release(&dir, &holder, &sys_file);
        return Ok((report, None, notes));
    }
    report.in_force_kb = read_kb(&sys_file);
    if report.in_force_kb != Some(target) {
        report.why_not = Some(format!(
            "{} reads back {:?} after {target} was written",
            sys_file.display(),
            report.in_force_kb
        ));
    }
    drop(lock);
    let watchdog = crate::deploy::child::watchdog(
        WATCHDOG,
        "blobrace-readahead",
        &[&dir, Path::new(&holder), &sys_file],
    )
    .ok();
    if watchdog.is_none() {
        notes.push(format!(
            "{label}: no watchdog could start (sh): a killed run leaves the readahead for the next run to put back"
        ));
    }
    if let Ok(mut held) = HELD.lock() {
        held.push((dir.clone(), holder.clone(), sys_file.clone()));
    }
    Ok((
        report,
        Some(Hold {
            dir,
            holder,
            sys_file,
            watchdog,
        }),
        notes,
    ))
}

impl Drop for Hold {
    fn drop(&mut self) {
        release(&self.dir, &self.holder, &self.sys_file);
        if let Ok(mut held) = HELD.lock() {
            held.retain(|(_, h, _)| *h != self.holder);
        }
        if let Some(mut child) = self.watchdog.take() {
            // It finds our holder gone and nothing left to put back.
            crate::deploy::child::let_go(&mut child);
        }
    }
}

/// Let go of every hold of this process: for a signal's exit, which drops nothing.
pub fn put_back_all() {
    let held = HELD.lock().map(|h| h.clone()).unwrap_or_default();
    for (dir, holder, sys_file) in held {
        release(&dir, &holder, &sys_file);
    }
}

/// Remove `holder`; where no live holder is left, write the host's value back and
/// forget the disk.
fn release(dir: &Path, holder: &str, sys_file: &Path) {
    let Some(state) = dir.parent() else { return };
    let Ok(_lock) = lock(state) else { return };
    let _ = fs::remove_file(dir.join(holder));
    if !live_holders(dir).is_empty() {
        return;
    }
    if let Some(host) = read_kb(&dir.join("host")) {
        let _ = fs::write(sys_file, host.to_string());
    }
    let _ = fs::remove_dir_all(dir);
}

/// The pids of holders still alive; dead ones' files removed.
fn live_holders(dir: &Path) -> Vec<u32> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut live = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("h-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if alive(pid) {
            live.push(pid);
        } else {
            let _ = fs::remove_file(entry.path());
        }
    }
    live
}

fn alive(pid: u32) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

fn read_kb(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// An exclusive lock on the state dir (flock on its `lock` file), held while alive.
fn lock(state: &Path) -> Result<fs::File, String> {
    use std::os::fd::AsRawFd;
    fs::create_dir_all(state).map_err(|e| format!("{}: {e}", state.display()))?;
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(state.join("lock"))
        .map_err(|e| format!("{}: {e}", state.display()))?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(format!("cannot lock {}", state.display()));
    }
    Ok(file)
}

#[cfg(test)]
mod tests;
