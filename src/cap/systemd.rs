//! cgroup v2 under systemd: the process re-executes itself under `systemd-run --scope`
//! with the limits as properties: same pid, same arguments, now inside a capped scope.
//! - As a normal user (`--user`): cgroupfs is not writable, but the user's systemd
//!   manager owns a delegated subtree with the memory and cpu controllers. `cargo
//!   bench` gets the cap with no root and no extra step.
//! - As root (the system manager): a leaf blobrace writes itself under a slice systemd
//!   owns is not safe there. Proven on a real v2 host (`scripts/v2-host.sh`): after a
//!   `systemctl daemon-reload` (any package install does one) systemd rewrote
//!   `system.slice/cgroup.subtree_control` to what its own units need, and the kernel
//!   took `cpu.max` off blobrace's leaf mid-run while the results still claimed the CPU
//!   cap. Limits systemd itself set on a scope it owns survive that: the disk cap goes
//!   in as the scope's `IO*Max` properties too (`ScopeDisk`).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

use super::CapRequest;
use super::disk::ScopeDisk;

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

/// Which systemd manager makes the scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manager {
    /// The user's (`--user`): a normal user.
    User,
    /// The system's: root.
    System,
}

impl Manager {
    /// The one this process asks: root the system's, anyone else their own.
    pub fn for_this_process() -> Manager {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            Manager::System
        } else {
            Manager::User
        }
    }
}

/// Whether systemd runs this machine (`sd_booted`): it then owns the cgroup tree.
pub fn booted() -> bool {
    std::path::Path::new("/run/systemd/system").is_dir()
}

/// `systemd-run` arguments up to the command: a transient scope with the cap as
/// properties, the disk's where one is asked.
pub fn scope_args(req: &CapRequest, manager: Manager, disk: Option<&ScopeDisk>) -> Vec<String> {
    let mut args: Vec<String> = match manager {
        Manager::User => vec!["--user".to_string()],
        Manager::System => Vec::new(),
    };
    args.extend(["--scope", "--quiet", "--collect"].map(String::from));
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
    for property in disk.map(ScopeDisk::properties).unwrap_or_default() {
        args.extend(["-p".into(), property]);
    }
    args
}

/// The shell command a user can run themselves for the same scope.
pub fn scope_command_line(req: &CapRequest, command: &str) -> String {
    format!(
        "systemd-run {} {command}",
        scope_args(req, Manager::User, None).join(" ")
    )
}

/// Re-execute this process in a capped scope. Returns only when that cannot be done,
/// with the reason; on success the process image is replaced.
pub fn reexec(req: &CapRequest, manager: Manager, disk: Option<&ScopeDisk>) -> String {
    if std::env::var_os(SCOPE_MARKER).is_some() {
        return "already re-executed under systemd-run, and its scope did not get the cap".into();
    }
    let args = scope_args(req, manager, disk);
    // Each property one word: `-p 'IOReadIOPSMax=/dev/vda 3000'`.
    let shown = format!(
        "systemd-run {}",
        args.iter()
            .map(|a| if a.contains(' ') {
                format!("'{a}'")
            } else {
                a.clone()
            })
            .collect::<Vec<_>>()
            .join(" ")
    );
    // Probe first: a failed exec would leave nothing to report the failure.
    let probe = Command::new("systemd-run").args(&args).arg("true").output();
    match probe {
        Err(e) => return format!("systemd-run is not available ({e})"),
        Ok(out) if !out.status.success() => {
            return format!(
                "`{shown}` failed: {}",
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
    say!("cap: re-running under {shown} {}", exe.display());
    let err = Command::new("systemd-run")
        .args(&args)
        .arg("--")
        .arg(exe)
        .args(rest)
        .env(SCOPE_MARKER, std::process::id().to_string())
        .exec();
    format!("cannot exec systemd-run: {err}")
}
