//! cgroup v2 under systemd as a normal user: cgroupfs is not writable, but the user's
//! systemd manager owns a delegated subtree with the memory and cpu controllers. So the
//! process re-executes itself under `systemd-run --user --scope` with the limits as
//! properties: same pid, same arguments, now inside a capped scope. `cargo bench` gets
//! the cap with no root and no extra step.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

use super::CapRequest;

/// Set to the pid on the re-executed process: it is in the scope made for it (and must
/// not re-execute again if the scope did not get the cap).
pub const SCOPE_MARKER: &str = "BLOBRACE_CAP_SCOPE";

/// True when this process was re-executed into its own capped scope. systemd-run
/// execs the command itself (same pid); a version that forks makes it our child.
pub fn in_own_scope() -> bool {
    // SAFETY: getppid has no preconditions and cannot fail.
    let parent = unsafe { libc::getppid() } as u32;
    std::env::var(SCOPE_MARKER)
        .is_ok_and(|v| v == std::process::id().to_string() || v == parent.to_string())
}

/// `systemd-run` arguments up to the command: a transient scope with the cap as properties.
pub fn scope_args(req: &CapRequest) -> Vec<String> {
    let mut args: Vec<String> = ["--user", "--scope", "--quiet", "--collect"]
        .map(String::from)
        .to_vec();
    if let Some(bytes) = req.memory_bytes {
        // systemd's K/M/G suffixes are powers of 1024.
        let max = if bytes % (1 << 20) == 0 {
            format!("{}M", bytes >> 20)
        } else {
            bytes.to_string()
        };
        args.extend(["-p".into(), format!("MemoryMax={max}")]);
        args.extend(["-p".into(), "MemorySwapMax=0".into()]);
    }
    if let Some(cpus) = req.cpus {
        args.extend(["-p".into(), format!("CPUQuota={}%", (cpus * 100.0).round())]);
    }
    args
}

/// The shell command a user can run themselves for the same scope.
pub fn scope_command_line(req: &CapRequest, command: &str) -> String {
    format!("systemd-run {} {command}", scope_args(req).join(" "))
}

/// Re-execute this process in a capped scope. Returns only when that cannot be done,
/// with the reason; on success the process image is replaced.
pub fn reexec(req: &CapRequest) -> String {
    if std::env::var_os(SCOPE_MARKER).is_some() {
        return "already re-executed under systemd-run, and its scope did not get the cap".into();
    }
    let args = scope_args(req);
    // Probe first: a failed exec would leave nothing to report the failure.
    let probe = Command::new("systemd-run").args(&args).arg("true").output();
    match probe {
        Err(e) => return format!("systemd-run is not available ({e})"),
        Ok(out) if !out.status.success() => {
            return format!(
                "`systemd-run --user --scope` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(_) => {}
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return format!("cannot find this executable to re-run it: {e}"),
    };
    let rest: Vec<OsString> = std::env::args_os().skip(1).collect();
    eprintln!(
        "cap: re-running under {}",
        scope_command_line(req, &exe.display().to_string())
    );
    let err = Command::new("systemd-run")
        .args(&args)
        .arg("--")
        .arg(exe)
        .args(rest)
        .env(SCOPE_MARKER, std::process::id().to_string())
        .exec();
    format!("cannot exec systemd-run: {err}")
}
