//! Two processes, one dataset: loads take turns, a drop waits for a run that reads the
//! dataset, and a process killed at any moment while holding or waiting for a dataset
//! leaves it to the other, whole (dataset_lock.rs).

use std::time::Duration;

use crate::common::{blobrace, run, stderr};

/// `blobrace <args>` on `root`'s data and results, started now (stderr kept).
fn spawn_on(root: &std::path::Path, args: &[&str]) -> std::process::Child {
    blobrace()
        .args(args)
        .args(["--cap", "none", "--cpus", "none", "--data-dir"])
        .arg(root.join("data"))
        .arg("--results-dir")
        .arg(root.join("results"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Two loads of the same datasets at once: the second waits for the first, saying
/// for whom, instead of writing beside it; both end well and every store verifies.
#[test]
fn two_loads_of_one_dataset_at_once_take_turns_and_verify() {
    let root = tempfile::tempdir().unwrap();
    let load = [
        "load",
        "--engines",
        "sqlite,fs,floor",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "96MiB",
    ];
    let mut first = spawn_on(root.path(), &load);
    // The second starts once the first is writing its first dataset (progress, not a
    // time): the fs and floor datasets are still ahead of the first then, so the second
    // meets the first's lock whichever dataset it reaches it on.
    let sqlite = root.path().join("data/sqlite/1KiB-x98304.sqlite");
    while !sqlite.exists() {
        if let Some(status) = first.try_wait().unwrap() {
            panic!("the first load ended ({status}) before writing {sqlite:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let second = spawn_on(root.path(), &load);
    let first_id = first.id();
    let (first, second) = (
        first.wait_with_output().unwrap(),
        second.wait_with_output().unwrap(),
    );
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(second.status.success(), "{}", stderr(&second));
    let waited = stderr(&second);
    assert!(
        waited.contains("waiting:") && waited.contains("is in use by process"),
        "the second load said it waited:\n{waited}"
    );
    // For whom: the first process, by pid and command, loading the dataset or, once it
    // has loaded it, reading it (a load keeps what it loaded from changing under it).
    let first_pid = format!("is in use by process {first_id} (");
    assert!(
        waited.contains(&first_pid) && waited.contains("blobrace load)"),
        "and for whom ({first_pid}... blobrace load)):\n{waited}"
    );
    // What the first loaded, the second found loaded: nothing written twice.
    assert!(
        waited.contains("0 dataset(s) loaded, 3 already complete"),
        "{waited}"
    );
    let verify = run(
        root.path(),
        &[
            "verify",
            "--engines",
            "sqlite,fs,floor",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "96MiB",
        ],
    );
    assert!(verify.status.success(), "{}", stderr(&verify));
    assert!(
        stderr(&verify).contains("3 dataset(s) verified, 0 wrong"),
        "{}",
        stderr(&verify)
    );
}

/// A drop while a run reads the dataset: refused with --no-wait, naming the run;
/// otherwise it waits for the run's end. The run measures to its end either way.
#[test]
fn a_dataset_a_run_reads_is_not_dropped_under_it() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "floor",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "8MiB",
    ];
    let loaded = run(root.path(), &[&["load"][..], &flags].concat());
    assert!(loaded.status.success(), "{}", stderr(&loaded));
    let measure = spawn_on(
        root.path(),
        &[
            &["measure"][..],
            &flags,
            &["--warmup", "200ms", "--measure", "3s", "--disk-probe", "0s"],
        ]
        .concat(),
    );
    std::thread::sleep(Duration::from_millis(1500));
    let refused = run(root.path(), &[&["drop", "--no-wait"][..], &flags].concat());
    assert!(!refused.status.success(), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains("is in use by process") && said.contains("(reading: "),
        "{said}"
    );
    assert!(said.contains("0 dataset(s) removed"), "{said}");
    let dropped = run(root.path(), &[&["drop"][..], &flags].concat());
    let measured = measure.wait_with_output().unwrap();
    assert!(measured.status.success(), "{}", stderr(&measured));
    assert!(dropped.status.success(), "{}", stderr(&dropped));
    assert!(
        stderr(&dropped).contains("waiting:"),
        "{}",
        stderr(&dropped)
    );
    assert!(
        stderr(&dropped).contains("1 dataset(s) removed"),
        "{}",
        stderr(&dropped)
    );
    let (_, json) = crate::common::only_run(root.path());
    assert_eq!(json["failures"].as_array().unwrap().len(), 0, "{json}");
    assert_eq!(json["results"].as_array().unwrap().len(), 1);
}

/// Two loads of one dataset at once, one of them SIGKILLed at a moment of its load or
/// its wait: the other loads (or finds loaded) every dataset whole, the killed one's
/// lock and its note of who held it are gone with it, and every store verifies.
#[test]
fn two_loads_at_once_with_either_killed_at_any_moment_leave_whole_datasets() {
    let flags = [
        "--engines",
        "sqlite,fs,floor",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "24MiB",
    ];
    let load = [&["load"][..], &flags].concat();
    let locks = std::env::temp_dir().join("blobrace-locks");
    for (moment, delay_ms) in [50u64, 150, 300, 600, 1000].into_iter().enumerate() {
        let root = tempfile::tempdir().unwrap();
        let first = spawn_on(root.path(), &load);
        std::thread::sleep(Duration::from_millis(20));
        let second = spawn_on(root.path(), &load);
        // Kill the one loading, then the one waiting, by turns.
        let (mut victim, survivor) = if moment % 2 == 0 {
            (first, second)
        } else {
            (second, first)
        };
        std::thread::sleep(Duration::from_millis(delay_ms));
        let killed_pid = victim.id();
        let _ = victim.kill();
        let _ = victim.wait();
        let out = survivor.wait_with_output().unwrap();
        assert!(out.status.success(), "moment {moment}: {}", stderr(&out));
        // Whatever the victim left, a load now finds or finishes, and it verifies.
        let again = run(root.path(), &load);
        assert!(again.status.success(), "{}", stderr(&again));
        let verify = run(root.path(), &[&["verify"][..], &flags].concat());
        assert!(
            stderr(&verify).contains("3 dataset(s) verified, 0 wrong"),
            "moment {moment} ({delay_ms} ms): {}",
            stderr(&verify)
        );
        // The later processes swept the killed one's note of what it held.
        let left: Vec<String> = std::fs::read_dir(&locks)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(&format!(".{killed_pid}.holder")))
            .collect();
        assert_eq!(left, Vec::<String>::new(), "moment {moment}");
    }
}
