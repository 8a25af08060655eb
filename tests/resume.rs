//! A load killed with SIGKILL at any moment, then re-run, ends with exactly
//! ids 1..=N and the right content in every store.

mod common;

use std::time::Duration;

use common::{blobrace, run, stderr};

/// Start `blobrace <args>` uncapped on `root`'s data, and SIGKILL it after `delay_ms`
/// unless it has finished; whether it was killed.
fn sigkill_after(root: &std::path::Path, args: &[&str], delay_ms: u64) -> bool {
    let mut child = blobrace()
        .args(args)
        .args(["--cap", "none", "--cpus", "none", "--data-dir"])
        .arg(root.join("data"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(delay_ms));
    let killed = child.try_wait().unwrap().is_none();
    if killed {
        child.kill().unwrap(); // SIGKILL
    }
    child.wait().unwrap();
    killed
}

#[test]
fn kill_9_mid_load_then_rerun_gives_exactly_1_to_n() {
    let root = tempfile::tempdir().unwrap();
    // Big enough that every store is mid-write at one of the kill points.
    let load = ["load", "--sizes", "1KiB", "--dataset-bytes", "24MiB"];
    let mut killed_mid_load = 0;
    for delay_ms in [150u64, 400, 700, 1100, 1600, 2300, 3200] {
        if sigkill_after(root.path(), &load, delay_ms) {
            killed_mid_load += 1;
        }
    }
    assert!(
        killed_mid_load >= 2,
        "the load finished too fast to interrupt ({killed_mid_load} kills)"
    );
    let finish = run(root.path(), &load);
    assert!(finish.status.success(), "{}", stderr(&finish));
    let verify = run(
        root.path(),
        &["verify", "--sizes", "1KiB", "--dataset-bytes", "24MiB"],
    );
    let err = stderr(&verify);
    assert!(verify.status.success(), "{err}");
    assert_eq!(err.matches("ok  ").count(), 3, "{err}");
    assert!(err.contains("ids 1..=24576"), "{err}");
}

/// `fs` deletes its 1-file-per-blob tree in parallel threads. A drop killed at any
/// moment leaves either the whole dataset (it verifies) or none under its name; what a
/// cut-short drop left aside is deleted by the next load or drop.
#[test]
fn an_fs_drop_killed_at_any_moment_never_leaves_a_partial_dataset_under_its_name() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "fs",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "24MiB",
    ];
    let with = |cmd: &'static str| -> Vec<&str> { [&[cmd][..], &flags[..]].concat() };
    let dataset = root.path().join("data/fs/1KiB-x24576");
    let aside = root.path().join("data/fs/1KiB-x24576.removing");
    let mut cut_short = 0;
    for delay_ms in [0u64, 5, 20, 60, 150] {
        let load = run(root.path(), &with("load"));
        assert!(load.status.success(), "{}", stderr(&load));
        assert!(!aside.exists(), "the load deletes what a drop left aside");
        sigkill_after(root.path(), &with("drop"), delay_ms);
        if aside.exists() {
            cut_short += 1;
        }
        if dataset.exists() {
            let verify = run(root.path(), &with("verify"));
            assert!(
                verify.status.success(),
                "killed after {delay_ms} ms: {}",
                stderr(&verify)
            );
        }
    }
    eprintln!("{cut_short} of 5 drops were cut short mid-delete");
    let drop = run(root.path(), &with("drop"));
    assert!(drop.status.success(), "{}", stderr(&drop));
    let left = common::files_under(&root.path().join("data/fs"));
    assert!(
        left.is_empty(),
        "files left after drop: {:?}",
        &left[..left.len().min(5)]
    );
    assert!(!aside.exists() && !dataset.exists());
}
