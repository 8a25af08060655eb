//! A disk that fills up under blobrace, at every step that writes: a load, a run saving
//! its results, verify, and a report. Each says which disk filled and what to do, leaves
//! no half-written file, and loses nothing that was loaded or measured.

use std::io::Write;
use std::time::Duration;

use crate::common::{SmallDisk, blobrace, run, stderr};

/// Fill the disk holding `file` until it refuses another MiB.
fn fill(file: &std::path::Path) {
    let mut f = std::fs::File::create(file).unwrap();
    let chunk = vec![0u8; 1 << 20];
    while f.write_all(&chunk).is_ok() {}
}

/// `blobrace <args>` uncapped on `mount`'s data and results, its stderr to `log` (off
/// the small disk), started now.
fn spawn_logged(
    mount: &std::path::Path,
    args: &[&str],
    log: &std::path::Path,
) -> std::process::Child {
    blobrace()
        .args(args)
        .arg("--data-dir")
        .arg(mount.join("data"))
        .arg("--results-dir")
        .arg(mount.join("results"))
        .args(["--cap", "none", "--cpus", "none"])
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

/// Wait until `log` holds `line`, for at most `limit`.
fn wait_for(log: &std::path::Path, line: &str, limit: Duration) {
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(log).unwrap().contains(line) {
        assert!(
            started.elapsed() < limit,
            "{line:?} never came: {}",
            std::fs::read_to_string(log).unwrap()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `blobrace report` of the newest run under `root`'s results.
fn report(root: &std::path::Path) -> std::process::Output {
    blobrace()
        .arg("report")
        .arg("--results-dir")
        .arg(root.join("results"))
        .output()
        .unwrap()
}

/// Files whose names say they were never finished (`.tmp`, `.partial.`).
fn unfinished(dir: &std::path::Path) -> Vec<String> {
    crate::common::files_under(dir)
        .into_iter()
        .filter(|f| f.ends_with(".tmp") || f.contains(".partial."))
        .collect()
}

/// The free-space check passes, then another program fills the disk mid-load (as a
/// second run or a database's WAL would): the load meets ENOSPC for real, and must stop
/// that store saying which file system filled, give the space back, and leave a dataset
/// that the next load (with room again) loads whole. For every embedded store: each meets
/// ENOSPC in its own library (RocksDB's once aborted the process from its LOG writer).
#[test]
fn a_load_that_meets_a_full_disk_says_which_gives_the_space_back_and_loads_later() {
    for store in ["sqlite", "rocksdb", "lmdb", "redb", "fs", "floor"] {
        load_meets_a_full_disk(store);
    }
}

fn load_meets_a_full_disk(store: &str) {
    let root = tempfile::tempdir().unwrap();
    let total_mib = 320;
    let Some(disk) = SmallDisk::mount(root.path(), total_mib) else {
        return;
    };
    let mount = root.path();
    // 96 MiB of 64 KiB blobs: with the 64 MiB + 1% kept free, and RocksDB's 128 MiB of WAL
    // while it loads (two 64 MiB memtables, uncapped), it passes the check on 320 MiB.
    let load = [
        "load",
        "--engines",
        store,
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "96MiB",
    ];
    let mut cmd = blobrace();
    cmd.args(load)
        .arg("--data-dir")
        .arg(mount.join("data"))
        .arg("--results-dir")
        .arg(mount.join("results"))
        .args(["--cap", "none", "--cpus", "none"])
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    // Fill the disk the moment the load has begun writing.
    let store_dir = mount.join("data").join(store);
    let started = std::time::Instant::now();
    let filler = mount.join("filler");
    loop {
        // Rows are going in: its files hold a few MiB.
        let written: u64 = crate::common::files_under(&store_dir)
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        if written >= 4 << 20 {
            // Hold the load still while the disk fills, 1 MiB at a time: a 96 MiB load
            // can finish in 0.1 s, faster than a filler racing it.
            let pid = child.id() as libc::pid_t;
            assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
            fill(&filler);
            assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{store}: the load never began"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(
        out.status.code() == Some(1),
        "{store}: the load cannot have finished, and ends with an error, not a signal ({:?}): {err}",
        out.status
    );
    let mount_text = mount.display().to_string();
    assert!(
        err.contains("filled up while loading")
            && err.contains(&mount_text)
            && err.contains("its partial dataset was removed to give the space back")
            && err.contains("blobrace env"),
        "{store}: {err}"
    );
    assert_eq!(err.matches("Error").count(), 1, "{store}: one error: {err}");
    // Everything it wrote is gone: the disk holds the filler and little else.
    let filler_bytes = std::fs::metadata(&filler).unwrap().len();
    let total = total_mib << 20;
    assert!(
        disk.free_bytes() + filler_bytes > total - (4 << 20),
        "{store}: free {} + filler {filler_bytes} of {total}: {:?}",
        disk.free_bytes(),
        crate::common::files_under(&mount.join("data"))
    );
    // With room again, the same command loads it whole.
    std::fs::remove_file(&filler).unwrap();
    let again = run(mount, &load);
    assert!(again.status.success(), "{store}: {}", stderr(&again));
    let verify = run(mount, &[&["verify"][..], &load[1..]].concat());
    assert!(verify.status.success(), "{store}: {}", stderr(&verify));
    assert!(
        stderr(&verify).contains("ids 1..=1536"),
        "{store}: {}",
        stderr(&verify)
    );
}

/// Another program fills the disk while a run measures: the run stops at its next save
/// saying which disk filled and how to go on, keeps what it saved whole, and the same
/// command continues it once there is room. verify on the full disk still answers for
/// every store; a report on a full disk fails the same way and is written once there
/// is room again.
#[test]
fn a_disk_filled_while_measuring_verifying_and_reporting_loses_nothing() {
    let root = tempfile::tempdir().unwrap();
    let Some(_disk) = SmallDisk::mount(root.path(), 200) else {
        return;
    };
    let mount = root.path();
    let dataset = [
        "--engines",
        "sqlite,fs,floor",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "32MiB",
    ];
    let load = run(mount, &[&["load"][..], &dataset].concat());
    assert!(load.status.success(), "{}", stderr(&load));
    let measure: Vec<&str> = [&["measure"][..], &dataset]
        .concat()
        .into_iter()
        .chain(["--warmup", "100ms", "--measure", "300ms", "--cache", "cold"])
        .collect();
    // Its lines go to a file off the small disk, read while it runs.
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("measure.err");
    let child = spawn_logged(mount, &measure, &log);
    let filler = mount.join("filler");
    // Held still at its first cell while the disk fills: the save after it meets ENOSPC.
    wait_for(&log, "[cell 1 of 3]", Duration::from_secs(60));
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    fill(&filler);
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    let out = child.wait_with_output().unwrap();
    let err = std::fs::read_to_string(&log).unwrap();
    assert!(!out.status.success(), "it cannot have saved: {err}");
    assert!(
        err.contains("the run stopped: its results could not be saved")
            && err.contains(&format!("the disk holding {}", mount.display()))
            && err.contains("is full")
            && err.contains("run the same command again: it continues the run"),
        "{err}"
    );
    assert_eq!(err.matches("Error").count(), 1, "one error: {err}");
    let results = mount.join("results");
    assert_eq!(unfinished(&results), Vec::<String>::new());

    // verify needs no room: every store answers, and every blob is as loaded.
    let verify = [&["verify"][..], &dataset].concat();
    let checked = run(mount, &verify);
    assert!(checked.status.success(), "{}", stderr(&checked));
    assert!(
        stderr(&checked).contains("3 dataset(s) verified, 0 wrong"),
        "{}",
        stderr(&checked)
    );

    // With room again the same command continues the run: each cell measured once.
    std::fs::remove_file(&filler).unwrap();
    let again = run(mount, &measure);
    assert!(again.status.success(), "{}", stderr(&again));
    let (dir, json) = crate::common::only_run(mount);
    assert_eq!(
        json["parts"].as_array().unwrap().len(),
        2,
        "{}",
        json["parts"]
    );
    assert_eq!(json["results"].as_array().unwrap().len(), 3);
    assert_eq!(json["complete"], true);

    // A report on a full disk: one clear error, the files before it whole.
    let page = std::fs::read(dir.join("index.html")).unwrap();
    fill(&filler);
    let refused = report(mount);
    let err = stderr(&refused);
    assert!(!refused.status.success(), "{err}");
    assert!(
        err.contains("the report of")
            && err.contains("is full")
            && err.contains("run this command again"),
        "{err}"
    );
    assert_eq!(unfinished(&results), Vec::<String>::new());
    assert_eq!(std::fs::read(dir.join("index.html")).unwrap(), page);
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(saved, json, "the results are untouched");
    std::fs::remove_file(&filler).unwrap();
    let reported = report(mount);
    assert!(reported.status.success(), "{}", stderr(&reported));
    let checked = run(mount, &verify);
    assert!(checked.status.success(), "{}", stderr(&checked));
}

/// A disk that fills between size classes of a run that goes one size class at a time
/// (another program, or a drop that failed): the next size class no longer fits as
/// planned. The run does not end there: its stores load one by one where there is
/// room, the others fail alone saying why, every other cell is measured, and the run
/// ends non-zero naming what failed.
#[test]
fn a_size_class_that_no_longer_fits_fails_alone_and_the_run_goes_on() {
    let root = tempfile::tempdir().unwrap();
    let Some(disk) = SmallDisk::mount(root.path(), 300) else {
        return;
    };
    let mount = root.path();
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("measure.err");
    // About 41 MiB per store and size class; 64 MiB + 1% kept free.
    let measure = [
        "measure",
        "--engines",
        "sqlite,fs,floor",
        "--sizes",
        "64KiB,1MiB",
        "--dataset-bytes",
        "40MiB",
        "--drop-after",
        "--cache",
        "cold",
        "--warmup",
        "100ms",
        "--measure",
        "300ms",
    ];
    let child = spawn_logged(mount, &measure, &log);
    wait_for(&log, "[cell 3 of 6]", Duration::from_secs(120));
    // Held at its last 64 KiB cell while the disk fills to 30 MiB free: once the 64 KiB
    // datasets are dropped, one 1 MiB store fits beside the room kept free, not three.
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let mut f = std::fs::File::create(mount.join("filler")).unwrap();
    let chunk = vec![0u8; 1 << 20];
    while disk.free_bytes() > 30 << 20 {
        f.write_all(&chunk).unwrap();
    }
    drop(f);
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    let out = child.wait_with_output().unwrap();
    let err = std::fs::read_to_string(&log).unwrap();
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("1MiB no longer fits as planned"),
        "said, not ended: {err}"
    );
    let (_, json) = crate::common::only_run(mount);
    let results = json["results"].as_array().unwrap();
    let failures = json["failures"].as_array().unwrap();
    let measured_1mib = results.iter().filter(|r| r["size"] == "1MiB").count();
    assert_eq!(results.len() - measured_1mib, 3, "every 64 KiB cell: {err}");
    assert!(measured_1mib >= 1, "a store that fits is measured: {err}");
    let no_room = failures
        .iter()
        .filter(|f| {
            f["why"]
                .as_str()
                .unwrap_or("")
                .contains("not enough free disk")
        })
        .count();
    assert_eq!(measured_1mib + no_room, 3, "{failures:?}");
}
