//! A load killed with SIGKILL at any moment, then re-run, ends with exactly
//! ids 1..=N and the right content in every store.

mod common;

use std::time::Duration;

use common::{blobrace, run, stderr};

#[test]
fn kill_9_mid_load_then_rerun_gives_exactly_1_to_n() {
    let root = tempfile::tempdir().unwrap();
    // Big enough that every store is mid-write at one of the kill points.
    let load = ["load", "--sizes", "1KiB", "--dataset-bytes", "24MiB"];
    let mut killed_mid_load = 0;
    for delay_ms in [150u64, 400, 700, 1100, 1600, 2300, 3200] {
        let mut child = blobrace()
            .args(load)
            .args(["--cap", "none", "--cpus", "none", "--data-dir"])
            .arg(root.path().join("data"))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            killed_mid_load += 1;
        }
        child.wait().unwrap();
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
