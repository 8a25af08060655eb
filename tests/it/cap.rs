//! The measuring process really runs under the requested cgroup cap, read back from the
//! kernel; where no cap can be had, a capped run is refused instead of run uncapped.

use crate::common::{blobrace, env_json, stderr};

pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn requested_cap_is_applied_and_observed() {
    let data = tempfile::tempdir().unwrap();
    let out = blobrace()
        .args(["env", "--cap", "200MiB", "--cpus", "1", "--sizes", "1KiB"])
        .arg("--data-dir")
        .arg(data.path())
        .output()
        .unwrap();
    if !out.status.success() {
        // Not root / no delegated cgroup / no systemd here: refused, with the ways out.
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("--cap none") && err.contains("systemd-run"),
            "{err}"
        );
        assert!(!is_root(), "root must be able to cap itself here: {err}");
        eprintln!("skipped: this process may not create cgroups here ({err})");
        return;
    }
    let json = env_json(&out);
    let cap = &json["cap"];
    assert_eq!(cap["memory_limit_bytes"], 200u64 << 20, "{cap}");
    // The line on stderr says how the cap came about.
    assert!(
        stderr(&out).contains(&format!(
            "({}: {}",
            cap["origin"].as_str().unwrap(),
            cap["method"].as_str().unwrap()
        )),
        "{}",
        stderr(&out)
    );
    if cap["origin"] == "created" {
        assert_eq!(cap["cpu_limit"], 1.0, "{cap}");
        // The cgroup is removed when the process exits.
        let cgroup = cap["cgroup"].as_str().unwrap();
        assert!(
            !std::path::Path::new(cgroup).exists(),
            "{cgroup} left behind"
        );
    }
}

#[test]
fn cap_none_observes_without_capping() {
    let out = blobrace()
        .args(["env", "--cap", "none", "--cpus", "none", "--sizes", "1KiB"])
        .arg("--data-dir")
        .arg(tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("created"), "{}", stderr(&out));
}

/// A normal user on a machine where it cannot make a cgroup (this one: cgroup v1, no
/// systemd): a capped load is refused before anything is written, --cap none runs.
#[test]
fn a_user_who_cannot_be_capped_gets_one_error_and_nothing_written() {
    if !is_root() {
        eprintln!("skipped: needs root to run the binary as another user (setpriv)");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(
        root.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    std::fs::set_permissions(&data, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let as_nobody = |cap: &str| {
        let program = blobrace().get_program().to_owned();
        let args: Vec<_> = [
            "load",
            "--engines",
            "sqlite",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "64KiB",
            "--cap",
            cap,
            "--cpus",
            "none",
            "--data-dir",
        ]
        .iter()
        .map(std::ffi::OsString::from)
        .chain([data.clone().into_os_string()])
        .collect();
        let mut setpriv = std::process::Command::new("setpriv");
        setpriv
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(program)
            .args(args)
            .env("BLOBRACE_COMPOSE_ENV", "/nonexistent/compose.env")
            .env_remove("BLOBRACE_CAP_SCOPE");
        setpriv.output().expect("setpriv runs")
    };
    let refused = as_nobody("64MiB");
    let err = stderr(&refused);
    if refused.status.success() {
        // A machine that delegates a cgroup to every user (systemd on cgroup v2) caps it.
        assert!(err.contains("64MiB"), "{err}");
        eprintln!("skipped: this machine can cap a normal user ({err})");
        return;
    }
    assert_eq!(refused.status.code(), Some(2), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("Error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    for way in [
        "run as root",
        "systemd-run --user --scope",
        "scripts/compose-run.sh",
        "--cap none",
    ] {
        assert!(errors[0].contains(way), "missing '{way}': {err}");
    }
    assert!(
        crate::common::files_under(&data).is_empty(),
        "nothing may be written: {:?}",
        crate::common::files_under(&data)
    );
    let uncapped = as_nobody("none");
    assert!(uncapped.status.success(), "{}", stderr(&uncapped));
}

/// Every store that loads inside the measuring process (the floor's file, files,
/// SQLite, redb, LMDB, RocksDB) writes blobs of 4 MiB under a cap of 96 MiB: a loader
/// that holds more than a few blobs at once, or a store whose write buffers are sized
/// for a bigger machine (RocksDB's default 64 MiB memtable, two of them while one
/// flushes), is killed by its own cap, as the quick profile's RocksDB load was at 256 MiB.
#[test]
fn every_in_process_store_loads_4mib_blobs_under_a_96mib_cap() {
    let root = tempfile::tempdir().unwrap();
    let mut engines = vec!["floor", "fs", "sqlite", "redb", "lmdb"];
    if crate::kv::rocksdb_here() {
        engines.push("rocksdb");
    }
    let engines = engines.join(",");
    let out = crate::common::run(
        root.path(),
        &[
            "load",
            "--engines",
            &engines,
            "--sizes",
            "4MiB",
            "--dataset-bytes",
            "192MiB",
            "--cap",
            "96MiB",
            "--cpus",
            "none",
        ],
    );
    let err = stderr(&out);
    if out.status.code() == Some(2) && err.contains("systemd-run") {
        assert!(!is_root(), "root must be able to cap itself here: {err}");
        eprintln!("skipped: this process may not cap itself here ({err})");
        return;
    }
    // Killed by the kernel (SIGKILL), there is no exit code and no line saying why.
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(err.contains("cap: memory 96MiB"), "{err}");
    let loaded = err
        .lines()
        .filter(|l| l.contains(": loaded 192MiB"))
        .count();
    assert_eq!(loaded, engines.split(',').count(), "{err}");
}

/// A data directory on tmpfs counts against the cap it is written under and cannot be
/// evicted: loads bigger than the cap leaves were a bare kill (exit 137) inside the
/// run's own cap. Refused before any load, with the ways out.
#[test]
fn data_in_ram_bigger_than_the_cap_is_refused_before_any_load() {
    let dir = tempfile::tempdir().unwrap();
    let Some(_ram) = crate::common::SmallDisk::mount(dir.path(), 512) else {
        return;
    };
    let out = blobrace()
        .args([
            "measure",
            "--engines",
            "floor,sqlite-raw",
            "--sizes",
            "64KiB",
        ])
        .args([
            "--dataset-bytes",
            "128MiB",
            "--cap",
            "64MiB",
            "--measure",
            "1s",
        ])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--results-dir")
        .arg(dir.path().join("results"))
        .output()
        .unwrap();
    let err = stderr(&out);
    if err.contains("may not create cgroups") || err.contains("systemd-run") {
        eprintln!("skipped: no cap here ({err})");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(last.contains("is on tmpfs, which is RAM"), "{err}");
    assert!(
        last.contains("--cap to ") && last.contains("on a disk"),
        "{err}"
    );
    let loaded = crate::common::files_under(&dir.path().join("data"));
    assert!(
        loaded.iter().all(|f| !f.contains("64KiB-")),
        "nothing loaded: {loaded:?}"
    );
}
