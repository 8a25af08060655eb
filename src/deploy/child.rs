//! What a run starts beside itself and must not outlive it, however it ends: a helper
//! program killed with the run (`dies_with_this_thread`), and a watchdog shell that
//! waits on a pipe for the run's end and then undoes what the run set up (`watchdog`).
//! The readahead (`cap/readahead/`), the latency proxy and the emulated disk use them.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Ask the kernel to SIGKILL `cmd`'s process when the thread that starts it ends (the
/// run's main thread: the process). Its output goes nowhere.
pub fn dies_with_this_thread(cmd: &mut Command) -> &mut Command {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: prctl in the child before exec only asks the kernel for a signal at the
    // parent's end: no allocation, no lock.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        })
    }
}

/// `sh -c script name args…`, whose stdin is this process's end of a pipe: the script
/// reads it to its end, which comes when the run lets go (`let_go`) or dies. In its own
/// process group, so a terminal's Ctrl-C meant for the run does not reach it.
pub fn watchdog(script: &str, name: &str, args: &[&Path]) -> std::io::Result<Child> {
    watchdog_command(script, name, args).spawn()
}

/// `watchdog`, holding `lock` (an open file with a flock on it) until the script ends:
/// the resource it guards stays taken while the watchdog takes it down after the run
/// died, so that no next run sets it up meanwhile, only for this script to undo it.
pub fn watchdog_holding(
    script: &str,
    name: &str,
    args: &[&Path],
    lock: &std::fs::File,
) -> std::io::Result<Child> {
    use std::os::fd::AsRawFd;
    let fd = lock.as_raw_fd();
    let mut cmd = watchdog_command(script, name, args);
    // SAFETY: fcntl in the child before exec (no allocation, no lock) clears the
    // close-on-exec flag of the child's copy of the descriptor only.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn()
}

fn watchdog_command(script: &str, name: &str, args: &[&Path]) -> Command {
    let mut cmd = Command::new("sh");
    cmd.process_group(0)
        .arg("-c")
        .arg(script)
        .arg(name)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Close the watchdog's pipe and wait for it to do its work.
pub fn let_go(watchdog: &mut Child) {
    drop(watchdog.stdin.take());
    let _ = watchdog.wait();
}
