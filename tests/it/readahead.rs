//! The readahead (`--readahead`): set on the data's disk for the run, read back,
//! recorded, and put back at its end and after a SIGKILL. Measured on a disk of the
//! test's own (an ext4 image on a loop device, whose `read_ahead_kb` is its own), so a
//! run here never changes the disk other tests read from.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{blobrace, only_run, run, stderr};

/// An ext4 file system on a loop device, mounted; unmounted and detached when dropped.
pub(crate) struct LoopDisk {
    pub(crate) mount: PathBuf,
    device: String,
    _root: tempfile::TempDir,
}

impl LoopDisk {
    /// None (with the reason printed) where this machine cannot make one: not root, no
    /// loop devices, no mkfs.ext4.
    pub(crate) fn new() -> Option<Self> {
        let root = tempfile::tempdir().unwrap();
        let image = root.path().join("disk.img");
        let mount = root.path().join("mnt");
        std::fs::create_dir(&mount).unwrap();
        let ok = |cmd: &mut Command| {
            cmd.stderr(Stdio::null())
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if !ok(Command::new("truncate").args(["-s", "160M"]).arg(&image))
            || !ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image))
        {
            eprintln!("skipping: no ext4 image can be made here (mkfs.ext4)");
            return None;
        }
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .output();
        let device = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            _ => {
                eprintln!(
                    "skipping: no loop device can be attached here (root and losetup needed)"
                );
                return None;
            }
        };
        if !ok(Command::new("mount").arg(&device).arg(&mount)) {
            let _ = Command::new("losetup").args(["-d", &device]).status();
            eprintln!("skipping: the loop device cannot be mounted here");
            return None;
        }
        Some(LoopDisk {
            mount,
            device,
            _root: root,
        })
    }

    fn sys_file(&self) -> PathBuf {
        let name = Path::new(&self.device)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        PathBuf::from(format!("/sys/block/{name}/queue/read_ahead_kb"))
    }

    pub(crate) fn readahead(&self) -> u64 {
        std::fs::read_to_string(self.sys_file())
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    pub(crate) fn set_readahead(&self, kb: u64) {
        std::fs::write(self.sys_file(), kb.to_string()).unwrap();
    }
}

impl Drop for LoopDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mount).status();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

const FLOOR: [&str; 12] = [
    "measure",
    "--engines",
    "floor",
    "--sizes",
    "64KiB",
    "--dataset-bytes",
    "32MiB",
    "--warmup",
    "50ms",
    "--precision",
    "off",
    "--no-wait",
];

#[test]
fn a_run_reads_at_the_asked_readahead_records_it_and_puts_the_hosts_back() {
    let Some(disk) = LoopDisk::new() else { return };
    disk.set_readahead(4096);
    let root = disk.mount.join("run");
    let out = run(
        &root,
        &[&FLOOR[..], &["--measure", "300ms", "--readahead", "256"]].concat(),
    );
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("readahead 256 KiB (asked; the host's 4096 KiB)"),
        "{said}"
    );
    let (_, json) = only_run(&root);
    assert_eq!(json["config"]["readahead"], "256KiB");
    let device = &json["readahead"]["devices"][0];
    assert_eq!(device["host_kb"], 4096, "{json:#}");
    assert_eq!(device["in_force_kb"], 256, "{json:#}");
    assert_eq!(device["holds"][0], "data directory");
    // The machine's facts are read once it is set: what the cells read through.
    assert_eq!(json["machine"]["data_read_ahead_kb"], 256);
    assert_eq!(
        disk.readahead(),
        4096,
        "the host's value put back at the end"
    );

    // `host` leaves the disk's own, and is a run of its own (not continued by the above).
    let out = run(
        &root,
        &[&FLOOR[..], &["--measure", "300ms", "--readahead", "host"]].concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("readahead 4096 KiB (the host's)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(disk.readahead(), 4096);
}

#[test]
fn a_killed_run_leaves_the_readahead_as_the_host_had_it() {
    let Some(disk) = LoopDisk::new() else { return };
    disk.set_readahead(4096);
    let root = disk.mount.join("run");
    let mut cmd = blobrace();
    cmd.args(FLOOR)
        .args([
            "--readahead",
            "64",
            "--measure",
            "60s",
            "--cap",
            "none",
            "--cpus",
            "none",
        ])
        .arg("--data-dir")
        .arg(root.join("data"))
        .arg("--results-dir")
        .arg(root.join("results"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SIGKILL: nothing of the run's own runs.
    crate::common::kill_once_ready(cmd, "the run never set 64 KiB", |_| {
        (disk.readahead() == 64).then_some(())
    });
    let started = Instant::now();
    while disk.readahead() != 4096 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "a SIGKILLed run left the readahead at {} KiB",
            disk.readahead()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_readahead_out_of_range_or_misspelt_is_one_line_before_any_work() {
    let root = tempfile::tempdir().unwrap();
    for bad in ["hots", "2GiB", "1500B", "-4"] {
        let flag = format!("--readahead={bad}");
        let out = run(root.path(), &[&FLOOR[..], &[flag.as_str()]].concat());
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{bad}: {said}");
        assert!(said.contains("it takes \"host\""), "{bad}: {said}");
        assert!(!root.path().join("data").exists(), "{bad}: nothing written");
    }
}
