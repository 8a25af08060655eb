//! A damaged dataset of every embedded store: its main file cut short or overwritten
//! at several places after a load. Each command then answers in one line and a
//! non-zero exit, never a signal (LMDB's map read past a cut file was a SIGBUS) or a
//! panic (redb on a page that does not hold together); `measure` measures nothing of
//! it; and `drop` removes it, whatever is left of it.

use std::path::{Path, PathBuf};

use crate::common::{run, stderr};

/// How a file is damaged: cut to a share of its length, or 4 KiB of other bytes
/// written at a share of it.
#[derive(Clone, Copy, Debug)]
enum Damage {
    Cut(f64),
    Overwrite(f64),
}

impl Damage {
    fn apply(self, file: &Path) {
        use std::io::{Seek, SeekFrom, Write};
        let len = std::fs::metadata(file).unwrap().len();
        let mut f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
        match self {
            Damage::Cut(share) => f.set_len((len as f64 * share) as u64).unwrap(),
            Damage::Overwrite(share) => {
                let at = ((len as f64 * share) as u64).min(len.saturating_sub(4096));
                f.seek(SeekFrom::Start(at)).unwrap();
                // Not zeros (a hole reads as zeros): bytes no store wrote there.
                let junk: Vec<u8> = (0..4096u32).map(|i| (i * 131 % 251) as u8 ^ 0xa5).collect();
                f.write_all(&junk).unwrap();
            }
        }
    }
}

/// The file of a store's dataset to damage: its data file, or its largest one.
fn main_file(data: &Path, engine: &str) -> PathBuf {
    let folder = match engine {
        "sqlite-raw" => "sqlite",
        other => other,
    };
    let mut files = Vec::new();
    let mut stack = vec![data.join(folder)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap()) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((entry.metadata().unwrap().len(), path));
            }
        }
    }
    files
        .into_iter()
        .max()
        .expect("a loaded dataset has files")
        .1
}

/// Load `engine`'s dataset, damage its main file, and hold every command to one line.
fn damaged_is_said_and_dropped(engine: &str, size: &str, damages: &[Damage]) {
    let flags = [
        "--engines",
        engine,
        "--sizes",
        size,
        "--dataset-bytes",
        "4MiB",
    ];
    let with = |cmd: &'static str| -> Vec<&str> { [&[cmd][..], &flags[..]].concat() };
    for &damage in damages {
        let root = tempfile::tempdir().unwrap();
        let load = run(root.path(), &with("load"));
        assert!(load.status.success(), "{}", stderr(&load));
        let file = main_file(&root.path().join("data"), engine);
        damage.apply(&file);
        let case = format!("{engine} {size}, {} {damage:?}", file.display());
        for cmd in ["verify", "measure", "load", "drop"] {
            let mut args = with(cmd);
            if cmd == "measure" {
                args.extend(["--warmup", "50ms", "--measure", "300ms"]);
            }
            let out = run(root.path(), &args);
            let err = stderr(&out);
            assert!(!err.contains("panicked"), "{case}: {cmd}: {err}");
            let code = out.status.code();
            let expected: &[i32] = match cmd {
                // The damage is found: in the rows, or in the files before them.
                "verify" | "measure" => &[1, 2],
                // A load finds the files damaged, or a complete dataset whose rows it
                // does not read (verify and measure do).
                "load" => &[0, 2],
                _ => &[0],
            };
            assert!(
                code.is_some_and(|c| expected.contains(&c)),
                "{case}: {cmd} exited {:?} (a signal if None): {err}",
                out.status
            );
            if code != Some(0) {
                let last = err.lines().last().unwrap_or_default();
                assert!(last.starts_with("Error: "), "{case}: {cmd}: {err}");
            }
            if cmd == "measure" {
                assert!(
                    !err.contains(" n="),
                    "{case}: measured on damaged data: {err}"
                );
            }
        }
        let dataset = root.path().join("data").join(match engine {
            "sqlite-raw" => "sqlite",
            other => other,
        });
        let left = crate::common::files_under(&dataset);
        assert!(left.is_empty(), "{case}: drop left {left:?}");
    }
}

const EVERYWHERE: [Damage; 4] = [
    Damage::Cut(0.5),
    Damage::Cut(0.999),
    Damage::Overwrite(0.0),
    Damage::Overwrite(0.5),
];

#[test]
fn a_damaged_lmdb_dataset_is_one_line_from_each_command_and_dropped() {
    damaged_is_said_and_dropped("lmdb", "64KiB", &EVERYWHERE);
}

#[test]
fn a_damaged_redb_dataset_is_one_line_from_each_command_and_dropped() {
    damaged_is_said_and_dropped("redb", "64KiB", &EVERYWHERE);
    // 1 KiB rows: the file is mostly B-tree pages, and redb panics on one it cannot read.
    damaged_is_said_and_dropped("redb", "1KiB", &[Damage::Overwrite(0.26)]);
}

#[test]
fn a_damaged_rocksdb_dataset_is_one_line_from_each_command_and_dropped() {
    if !crate::kv::rocksdb_here() {
        return;
    }
    damaged_is_said_and_dropped("rocksdb", "64KiB", &EVERYWHERE);
}

#[test]
fn a_damaged_floor_file_or_blob_file_is_one_line_from_each_command_and_dropped() {
    damaged_is_said_and_dropped("floor", "64KiB", &EVERYWHERE);
    damaged_is_said_and_dropped("fs", "64KiB", &[Damage::Cut(0.5), Damage::Overwrite(0.5)]);
}

#[test]
fn a_damaged_sqlite_file_is_one_line_from_each_command_and_dropped() {
    // Cut short, SQLite's file reads as a load killed mid-write and is loaded again
    // (tested with the loads); overwritten, its pages are found wrong.
    damaged_is_said_and_dropped(
        "sqlite-raw",
        "64KiB",
        &[Damage::Overwrite(0.0), Damage::Overwrite(0.5)],
    );
}

/// A dataset on a read-only mount: SQLite said only "unable to open database file";
/// now the line names the mount and why SQLite writes even to read.
#[test]
fn sqlite_on_a_read_only_mount_is_said_as_such() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "sqlite-raw",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "4MiB",
    ];
    let load = run(root.path(), &[&["load"][..], &flags].concat());
    assert!(load.status.success(), "{}", stderr(&load));
    let ro = root.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let bound = std::process::Command::new("mount")
        .arg("--bind")
        .arg(root.path().join("data"))
        .arg(&ro)
        .status()
        .is_ok_and(|s| s.success());
    if !bound {
        eprintln!("skipped: cannot bind-mount here (not root)");
        return;
    }
    let remounted = std::process::Command::new("mount")
        .args(["-o", "remount,bind,ro"])
        .arg(&ro)
        .status()
        .is_ok_and(|s| s.success());
    let verify = crate::common::blobrace()
        .arg("verify")
        .args(flags)
        .args(["--cap", "none", "--cpus", "none", "--data-dir"])
        .arg(&ro)
        .output()
        .unwrap();
    let _ = std::process::Command::new("umount").arg(&ro).status();
    assert!(remounted, "remount read-only");
    let err = stderr(&verify);
    assert_eq!(verify.status.code(), Some(1), "{err}");
    assert!(err.contains("is on a read-only mount"), "{err}");
}
