//! The fault test a user would trust, on the embedded key-value stores and a size mix:
//! a load killed outright (SIGKILL) or stopped (SIGTERM) at many moments is resumed by
//! the same command to exactly ids 1..=N, verified byte for byte; and two loads of the
//! same dataset at once take turns and verify.

use crate::common::{blobrace, run, stderr};

/// The stores' loads, killed at moments spread over the bytes of one whole load (a fixed
/// list of moments fell before the first commit on a busy machine, moments spread over a
/// load timed once fell after the end when the later loads ran faster).
fn loads_stopped_at_many_moments_resume_to_exactly_1_to_n(engine: &str, data: &[&str]) {
    let root = tempfile::tempdir().unwrap();
    let flags: Vec<&str> = [&["--engines", engine][..], data].concat();
    let with = |cmd: &'static str| -> Vec<&str> { [&[cmd][..], &flags[..]].concat() };
    let first = run(root.path(), &with("load"));
    assert!(first.status.success(), "{}", stderr(&first));
    let rows = stderr(&run(root.path(), &with("verify")))
        .split("ids 1..=")
        .nth(1)
        .and_then(|t| {
            t.split(|c: char| !c.is_ascii_digit())
                .next()
                .map(str::to_string)
        })
        .expect("verify names the ids it read");
    // The moments are fractions of the whole dataset's bytes on disk, reached by the
    // load (a load timed once beside other tests ran faster after: in a CI run 9 of 12
    // moments spread over its 585 ms fell after the end).
    let whole_bytes = crate::common::bytes_under(&root.path().join("data"));
    let (mut stopped, mut resumed) = (0, 0);
    for signal in [libc::SIGKILL, libc::SIGTERM] {
        for k in 1..=6 {
            let drop = run(root.path(), &with("drop"));
            assert!(drop.status.success(), "{}", stderr(&drop));
            let at_bytes = whole_bytes * k / 7;
            if crate::common::signal_at_bytes(root.path(), &with("load"), signal, at_bytes) {
                stopped += 1;
            }
            let finish = run(root.path(), &with("load"));
            let said = stderr(&finish);
            assert!(
                finish.status.success(),
                "{engine}: signal {signal} at {at_bytes} bytes, then load: {said}"
            );
            resumed += said.matches(": resumed ").count();
            let verify = run(root.path(), &with("verify"));
            let verified = stderr(&verify);
            assert!(
                verify.status.success(),
                "{engine}: signal {signal} at {at_bytes} bytes: {verified}"
            );
            assert!(
                verified.contains(&format!("ids 1..={rows}")),
                "{engine}: {verified}"
            );
        }
    }
    eprintln!(
        "{engine}: {stopped} of 12 loads ({whole_bytes} bytes whole) stopped, {resumed} resumed"
    );
    assert!(
        stopped >= 4,
        "{engine}: the load ended too fast to stop ({stopped})"
    );
    assert!(resumed > 0, "{engine}: no stop left a dataset to resume");
}

const DATA: [&str; 4] = ["--sizes", "64KiB", "--dataset-bytes", "96MiB"];

#[test]
fn lmdb_loads_stopped_at_many_moments_resume_to_exactly_1_to_n() {
    loads_stopped_at_many_moments_resume_to_exactly_1_to_n("lmdb", &DATA);
}

#[test]
fn redb_loads_stopped_at_many_moments_resume_to_exactly_1_to_n() {
    loads_stopped_at_many_moments_resume_to_exactly_1_to_n("redb", &DATA);
}

#[test]
fn rocksdb_loads_stopped_at_many_moments_resume_to_exactly_1_to_n() {
    if !crate::kv::rocksdb_here() {
        return;
    }
    loads_stopped_at_many_moments_resume_to_exactly_1_to_n("rocksdb", &DATA);
}

#[test]
fn a_size_mix_load_stopped_at_many_moments_resumes_to_exactly_1_to_n() {
    let mix = [
        "--size-mix",
        "4KiB:60,64KiB:30,1MiB:10",
        "--dataset-bytes",
        "96MiB",
    ];
    loads_stopped_at_many_moments_resume_to_exactly_1_to_n("lmdb", &mix);
}

/// Two loads of one key-value dataset at once: the second waits for the first (the
/// stores' own locks would refuse a second writer), both end well, and it verifies.
#[test]
fn two_loads_of_one_kv_dataset_at_once_take_turns_and_verify() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "lmdb,redb",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "96MiB",
    ];
    let spawn = || {
        blobrace()
            .arg("load")
            .args(flags)
            .args(["--cap", "none", "--cpus", "none", "--data-dir"])
            .arg(root.path().join("data"))
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = spawn();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let second = spawn();
    let (first, second) = (
        first.wait_with_output().unwrap(),
        second.wait_with_output().unwrap(),
    );
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(second.status.success(), "{}", stderr(&second));
    let verify = run(root.path(), &[&["verify"][..], &flags].concat());
    let verified = stderr(&verify);
    assert!(verify.status.success(), "{verified}");
    assert_eq!(verified.matches("ok  ").count(), 2, "{verified}");
}
