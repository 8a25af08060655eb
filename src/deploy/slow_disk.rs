//! A disk that answers in milliseconds (`--disk-latency`): the run's data directory on
//! an emulated block device whose every read and write waits a stated time, as a cloud
//! block volume's (a network device: EBS, persistent disk) does on each cache miss.
//! `--disk-cap` can only throttle a rate: the kernel lets reads through at the disk's own
//! speed until the budget is spent, so it leaves the p50 where it was.
//!
//! The stack, from existing tools (this VM's kernel has no dm-delay, nbd or ublk; FUSE
//! and loop devices work): nbdkit's `file` plugin serves an image file (`cache=none`:
//! the host's page cache keeps none of it) through its `delay` filter (`rdelay`,
//! `wdelay`: in µs from nbdkit 1.40, whole ms before), nbdfuse exposes it as a file, a loop device in direct-I/O
//! mode makes that file a block device (no page cache of the loop's own), and ext4 on it
//! is mounted as the data directory. The only page cache left is the mounted file
//! system's, charged to the reader's cgroup: the memory cap still holds. The FUSE path
//! costs its own time (about 0.27 ms a 4 KiB read here with no delay): the disk probe
//! before and after each cell measures the emulated disk as the fetches see it.
//!
//! Set up by the run before the cap (nbdkit and nbdfuse are the disk, not the process)
//! and taken down by a watchdog shell that waits on a pipe for the run's end, however it
//! ends: unmounted, the loop device detached, FUSE unmounted, nbdkit gone.
//!
//! A server's data volume goes onto the same disk (`hold_volume`): with its container
//! stopped, a directory of the emulated disk is bind-mounted over the volume's directory
//! on Docker's host, so the container, started again, keeps its data there (a server of
//! its own on that disk, its datasets kept in the image for the next run). Docker gives
//! a container its volume when it starts: the bind is taken off only with the container
//! stopped, then it starts again on its own volume. The watchdog does that first, from
//! a list written before each bind (`.latency-disk-servers`), so a killed run leaves
//! every server on its own volume too.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use super::disk_latency::{DiskLatency, FORMS, parse_disk_latency};

/// nbdkit's version on PATH, "nbdkit 1.42.3" read as (1, 42).
fn nbdkit_version() -> Option<(u32, u32)> {
    let line = version("nbdkit");
    let mut parts = line.split_whitespace().nth(1)?.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The emulated disk a run read from, recorded with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowDiskReport {
    pub asked: DiskLatency,
    /// The file holding the emulated disk's bytes, on the machine's own disk.
    pub image: PathBuf,
    /// Where it is mounted: the run's data directory.
    pub mount: PathBuf,
    /// "/dev/loop3".
    pub device: String,
    /// "nbdkit 1.32.5 (file cache=none, delay rdelay=1ms wdelay=1ms) → nbdfuse 1.14.2 →
    /// /dev/loop3 (direct I/O) → ext4".
    pub stack: String,
    /// The servers' data volumes it holds for the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerVolume>,
    /// What it does not hold (a server's volume it could not reach), and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A server's data volume held on the emulated disk for the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerVolume {
    /// The compose service: "postgres".
    pub server: String,
    pub container: String,
    /// The volume's directory on Docker's host, the bind's target.
    pub volume: PathBuf,
    /// The emulated disk's directory bound over it.
    pub on: PathBuf,
}

impl SlowDiskReport {
    pub fn label(&self) -> String {
        format!(
            "disk latency: +{} a read and a write on the data directory {}{} ({})",
            self.asked.label(),
            self.mount.display(),
            self.servers
                .iter()
                .map(|s| format!(" and {}'s volume", s.server))
                .collect::<String>(),
            self.stack
        )
    }
}

/// The emulated disk, mounted; taken down when dropped (or by its watchdog when this
/// process ends any other way).
pub struct SlowDisk {
    watchdog: Child,
    /// The disk's lock, held with the watchdog (`Places::lock`).
    _lock: std::fs::File,
    /// The servers' list the watchdog reads (`WATCHDOG`'s `$4`).
    servers_list: PathBuf,
    pub report: SlowDiskReport,
}

/// Tears the stack down once its stdin closes: `$1` the mount point, `$2` the loop
/// device, `$3` the FUSE mount point, `$4` the servers' list (lines of container, stop
/// seconds, volume, tab-separated): each server stopped, its volume's bind taken off
/// and started again on its own volume, before the disk goes.
const WATCHDOG: &str = r#"
trap '' INT TERM HUP
while read -r _; do :; done
if [ -f "$4" ]; then
  tab=$(printf '\t')
  while IFS="$tab" read -r container seconds volume; do
    docker stop -t "$seconds" "$container" >/dev/null 2>&1 </dev/null
    umount "$volume" 2>/dev/null || umount -l "$volume" 2>/dev/null
    docker start "$container" >/dev/null 2>&1 </dev/null
  done < "$4"
  rm -f "$4"
fi
sync -f "$1" 2>/dev/null
umount "$1" 2>/dev/null || umount -l "$1" 2>/dev/null
losetup -d "$2" 2>/dev/null
fusermount3 -u "$3" 2>/dev/null || fusermount3 -u -z "$3" 2>/dev/null || umount -l "$3" 2>/dev/null
exit 0
"#;

/// The programs the stack needs, with the package that has each.
const PROGRAMS: [(&str, &str); 6] = [
    ("nbdkit", "nbdkit"),
    ("nbdfuse", "libnbd-bin"),
    ("fusermount3", "fuse3"),
    ("losetup", "mount"),
    ("mkfs.ext4", "e2fsprogs"),
    ("mount", "mount"),
];

fn version(program: &str) -> String {
    Command::new(program)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_else(|| program.into())
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The watchdog's `$0`: how a leftover one is told in the process table.
const WATCHDOG_NAME: &str = "blobrace-slow-disk";

/// Where one data directory's emulated disk lives, all under it (canonical).
struct Places {
    /// Its bytes: `<dir>/latency-disk.img`, with a file system from the start.
    image: PathBuf,
    /// An image being made: renamed to `image` once its file system is on it, so that a
    /// run killed while making it leaves no image without one.
    partial: PathBuf,
    /// nbdfuse's mount point: the image as a file, `<fuse>/disk`.
    fuse: PathBuf,
    /// The ext4 on it: the run's data directory.
    mount: PathBuf,
    /// The servers' volumes bound onto it (read by the watchdog after the disk is gone).
    servers_list: PathBuf,
    /// Held (flock) by the run and its watchdog while the disk is set up.
    lock: PathBuf,
}

impl Places {
    fn of(dir: &Path) -> Places {
        Places {
            image: dir.join("latency-disk.img"),
            partial: dir.join("latency-disk.img.partial"),
            fuse: dir.join(".latency-disk-fuse"),
            mount: dir.join("latency-disk"),
            servers_list: dir.join(".latency-disk-servers"),
            lock: dir.join(".latency-disk.lock"),
        }
    }
}

/// The disk's lock, waited for with a line where another run (or its teardown) has it,
/// or refused (`wait` false: --no-wait).
fn take_lock(path: &Path, wait: bool) -> Result<std::fs::File, String> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let in_use = format!(
        "the emulated disk of {} is in use by another run (or its watchdog is taking it down after the run ended)",
        path.parent().unwrap_or(path).display()
    );
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) if wait => {
            say!("waiting: {in_use} (Ctrl-C stops; --no-wait refuses instead)");
            file.lock()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(file)
        }
        Err(std::fs::TryLockError::WouldBlock) => Err(format!(
            "{in_use}; refused (--no-wait): run again once it is done, or give another --data-dir"
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(format!("{}: {e}", path.display())),
    }
}

/// Take down what a killed run and its killed watchdog left: the servers' binds, the
/// ext4 mount, the loop device over the FUSE file, the FUSE mount, a half-made image.
/// Called with the lock held: nothing else uses them. What it cleared, or None.
fn clear_leftovers(places: &Places, lock: &std::fs::File) -> Result<Option<String>, String> {
    let mounted = crate::machine::mount_points();
    let fuse_file = places.fuse.join("disk");
    let loops: Vec<String> = run(Command::new("losetup")
        .arg("-n")
        .arg("-O")
        .arg("NAME,BACK-FILE")
        .arg("-l"))
    .unwrap_or_default()
    .lines()
    .filter_map(|l| {
        let (name, back) = l.trim().split_once(char::is_whitespace)?;
        (Path::new(back.trim().trim_end_matches(" (deleted)")) == fuse_file)
            .then(|| name.to_string())
    })
    .collect();
    let servers_left = std::fs::metadata(&places.servers_list).is_ok_and(|m| m.len() > 0);
    let mut left: Vec<String> = Vec::new();
    if mounted.contains(&places.mount) {
        left.push(format!("{} mounted", places.mount.display()));
    }
    left.extend(loops.iter().map(|l| format!("{l} attached")));
    if mounted.contains(&places.fuse) {
        left.push(format!("{} (FUSE) mounted", places.fuse.display()));
    }
    if servers_left {
        left.push("servers' volumes bound onto it".into());
    }
    if !left.is_empty() {
        // The watchdog's own script, let go at once: the same steps in the same order,
        // each loop device found, holding the disk's lock to its end (a run killed
        // meanwhile leaves it working, and no next run sets the disk up under it).
        let device = loops.first().cloned().unwrap_or_default();
        let args = [
            places.mount.as_path(),
            Path::new(&device),
            places.fuse.as_path(),
            places.servers_list.as_path(),
        ];
        if let Ok(mut teardown) =
            super::child::watchdog_holding(WATCHDOG, WATCHDOG_NAME, &args, lock)
        {
            super::child::let_go(&mut teardown);
        }
        for extra in loops.iter().skip(1) {
            let _ = Command::new("losetup").args(["-d", extra]).status();
        }
        let still: Vec<PathBuf> = crate::machine::mount_points()
            .into_iter()
            .filter(|m| *m == places.mount || *m == places.fuse)
            .collect();
        if !still.is_empty() {
            return Err(format!(
                "a killed run's emulated disk is still mounted at {} and could not be taken down: umount it by hand (umount -l), then run again",
                still
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ));
        }
    }
    if places.partial.exists() {
        std::fs::remove_file(&places.partial)
            .map_err(|e| format!("{}: {e}", places.partial.display()))?;
        left.push(format!("a half-made image {}", places.partial.display()));
    }
    Ok((!left.is_empty()).then(|| {
        format!(
            "the emulated disk of a run killed with its watchdog was left ({}): taken down; its datasets are kept in {}",
            left.join(", "),
            places.image.display()
        )
    }))
}

/// A new image at `image`: sparse, as large as the free space allows, ext4 made on the
/// file itself (not through the slow stack), made under `partial` and renamed once it
/// has its file system.
fn make_image(dir: &Path, partial: &Path, image: &Path) -> Result<(), String> {
    let free = crate::machine::available_bytes(dir).map_err(|e| e.to_string())?;
    // Sparse: it takes on the real disk what is written to it.
    let size = free / 100 * 95;
    let file = std::fs::File::create(partial).map_err(|e| format!("{}: {e}", partial.display()))?;
    file.set_len(size)
        .map_err(|e| format!("{}: {e}", partial.display()))?;
    drop(file);
    if let Err(why) = run(Command::new("mkfs.ext4")
        .args([
            "-q",
            "-F",
            "-L",
            "blobrace-slow",
            "-E",
            "lazy_itable_init=1,lazy_journal_init=1",
        ])
        .arg(partial))
    {
        let _ = std::fs::remove_file(partial);
        return Err(format!("mkfs.ext4 on the emulated disk's image: {why}"));
    }
    std::fs::rename(partial, image).map_err(|e| format!("{}: {e}", image.display()))
}

impl SlowDisk {
    /// Mount the emulated disk holding `dir`'s datasets (its image `<dir>/latency-disk.img`,
    /// made sparse on first use, as large as the free space allows) at
    /// `<dir>/latency-disk`; what a killed run left there is taken down first, saying so.
    /// `Err`: one line, why and what to do.
    pub fn attach(dir: &Path, latency: DiskLatency, wait: bool) -> Result<SlowDisk, String> {
        // SAFETY: geteuid only reads the process's credentials.
        if unsafe { libc::geteuid() } != 0 {
            return Err("an emulated disk (a loop device, a mount) needs root".into());
        }
        if !Path::new("/dev/fuse").exists() {
            return Err("/dev/fuse is missing: FUSE is not available here (inside a container it needs --device /dev/fuse and --privileged)".into());
        }
        for (program, package) in PROGRAMS {
            let found = std::env::var_os("PATH").is_some_and(|paths| {
                std::env::split_paths(&paths).any(|p| p.join(program).is_file())
            });
            if !found {
                return Err(format!(
                    "{program} is not installed (Debian's {package}: scripts/setup.sh installs it)"
                ));
            }
        }
        // Before 1.40 nbdkit reads "500us" as an error and "0.5ms" as 0 ms: refused here.
        if !latency.whole_ms() && nbdkit_version().is_none_or(|v| v < (1, 40)) {
            return Err(format!(
                "{} takes whole milliseconds only, and {latency} is not: nbdkit 1.40 or newer takes microseconds (scripts/build-nbdkit.sh builds 1.42.3 into /usr/local)",
                version("nbdkit")
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        // Named by what it is: a relative and an absolute spelling of one directory are
        // one disk (`machine::canonical`).
        let dir = &crate::machine::canonical(dir);
        let places = Places::of(dir);
        // One run on the disk at a time, its watchdog included (`watchdog_holding`): a
        // second is refused, whatever path it was given.
        let lock = take_lock(&places.lock, wait)?;
        // What a run killed together with its watchdog left (its lock is free now):
        // taken down, in one line, before anything is made.
        if let Some(note) = clear_leftovers(&places, &lock)? {
            say!("note: {note}");
        }
        let Places {
            image,
            partial,
            fuse,
            mount,
            servers_list,
            lock: _,
        } = places;
        for d in [&fuse, &mount] {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        std::fs::write(&servers_list, "")
            .map_err(|e| format!("{}: {e}", servers_list.display()))?;
        if !image.exists() {
            make_image(dir, &partial, &image)?;
        }
        let delay = [
            format!("rdelay={}", latency.nbdkit_form()),
            format!("wdelay={}", latency.nbdkit_form()),
        ];
        let mut nbdfuse = Command::new("nbdfuse");
        nbdfuse
            .arg(fuse.join("disk"))
            .args([
                "--command",
                "nbdkit",
                "-s",
                "--exit-with-parent",
                "--filter=delay",
                "file",
            ])
            .arg(&image)
            .arg("cache=none")
            .args(&delay);
        super::child::dies_with_this_thread(&mut nbdfuse);
        // The delay filter sleeps each request; a thread's default timer slack (50 µs)
        // lets the kernel wake it that much late, measured 60 µs more a 4 KiB read at
        // 250us asked. nbdfuse, the nbdkit it starts and their threads inherit 1 ns.
        // SAFETY: prctl in the child before exec: no allocation, no lock.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut nbdfuse, || {
                libc::prctl(libc::PR_SET_TIMERSLACK, 1);
                Ok(())
            });
        }
        let mut fuse_child = nbdfuse.spawn().map_err(|e| format!("nbdfuse: {e}"))?;
        let started = Instant::now();
        while !fuse.join("disk").exists() {
            if let Ok(Some(status)) = fuse_child.try_wait() {
                return Err(format!(
                    "nbdfuse with nbdkit exited at its start ({status})"
                ));
            }
            if started.elapsed() > Duration::from_secs(10) {
                let _ = fuse_child.kill();
                return Err("nbdfuse did not expose the disk in 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let cleanup_fuse = |child: &mut Child| {
            let _ = Command::new("fusermount3").arg("-u").arg(&fuse).status();
            let _ = child.kill();
            let _ = child.wait();
        };
        let device = match run(Command::new("losetup")
            .args(["--direct-io=on", "--find", "--show"])
            .arg(fuse.join("disk")))
        {
            Ok(d) => d,
            Err(why) => {
                cleanup_fuse(&mut fuse_child);
                return Err(format!("no loop device: {why}"));
            }
        };
        // From here the watchdog takes everything down, whatever happens.
        let mut watchdog = super::child::watchdog_holding(
            WATCHDOG,
            WATCHDOG_NAME,
            &[&mount, Path::new(&device), &fuse, &servers_list],
            &lock,
        )
        .map_err(|e| {
            let _ = Command::new("losetup").args(["-d", &device]).status();
            cleanup_fuse(&mut fuse_child);
            format!("no watchdog (sh): {e}")
        })?;
        // The watchdog's unmount ends nbdfuse: it is the watchdog's to reap.
        std::mem::forget(fuse_child);
        if let Err(why) = run(Command::new("mount").arg(&device).arg(&mount)) {
            super::child::let_go(&mut watchdog);
            return Err(format!(
                "mounting the emulated disk: {why}; its image {} holds no file system that mounts: remove it (its datasets go with it) and run again",
                image.display()
            ));
        }
        let stack = format!(
            "{} (file cache=none, delay {}) → {} → {device} (direct I/O) → ext4",
            version("nbdkit"),
            delay.join(" "),
            version("nbdfuse"),
        );
        Ok(SlowDisk {
            watchdog,
            _lock: lock,
            servers_list,
            report: SlowDiskReport {
                asked: latency,
                image,
                mount,
                device,
                stack,
                servers: Vec::new(),
                notes: Vec::new(),
            },
        })
    }

    /// Put a server's data volume (`volume`, its directory on Docker's host) on this
    /// disk, at `servers/<container>`, with the volume's owner and mode (the server's
    /// user writes there; the image's entry point makes a new database in it the first
    /// time). The container must be stopped: the caller starts it afterwards, and the
    /// watchdog (or `Drop`) stops it, takes the bind off and starts it on its own volume.
    /// `stop_seconds`: its shutdown's grace. `Err`: one line.
    pub fn hold_volume(
        &mut self,
        server: &str,
        container: &str,
        stop_seconds: i32,
        volume: &Path,
    ) -> Result<(), String> {
        use std::io::Write;
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let owner = std::fs::metadata(volume).map_err(|e| format!("{}: {e}", volume.display()))?;
        let on = self.report.mount.join("servers").join(container);
        std::fs::create_dir_all(&on).map_err(|e| format!("{}: {e}", on.display()))?;
        std::os::unix::fs::chown(&on, Some(owner.uid()), Some(owner.gid()))
            .map_err(|e| format!("{}: {e}", on.display()))?;
        std::fs::set_permissions(&on, std::fs::Permissions::from_mode(owner.mode() & 0o7777))
            .map_err(|e| format!("{}: {e}", on.display()))?;
        // Listed before it is bound: a run killed between the two leaves nothing the
        // watchdog does not undo.
        let line = format!("{container}\t{stop_seconds}\t{}\n", volume.display());
        std::fs::OpenOptions::new()
            .append(true)
            .open(&self.servers_list)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .map_err(|e| format!("{}: {e}", self.servers_list.display()))?;
        run(Command::new("mount").arg("--bind").arg(&on).arg(volume))
            .map_err(|why| format!("binding {} over {}: {why}", on.display(), volume.display()))?;
        self.report.servers.push(ServerVolume {
            server: server.into(),
            container: container.into(),
            volume: volume.into(),
            on,
        });
        Ok(())
    }
}

impl Drop for SlowDisk {
    fn drop(&mut self) {
        // Written back before the watchdog unmounts: a load's last pages.
        let _ = Command::new("sync")
            .arg("-f")
            .arg(&self.report.mount)
            .status();
        super::child::let_go(&mut self.watchdog);
    }
}
