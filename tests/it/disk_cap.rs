//! The disk cap (`--disk-cap`): set on the data's disk by the kernel's block throttle,
//! read back, recorded, and felt by the fetches; where it cannot be set, said and
//! recorded as not capped, never claimed.

use crate::common::{only_run, run, stderr};
use serde_json::Value;

/// `blobrace env`'s JSON document (it is followed by the dataset table).
fn env_cap(root: &std::path::Path, args: &[&str]) -> Value {
    let out = run(root, &[&["env"][..], args].concat());
    crate::common::env_json(&out)["cap"].clone()
}

/// Whether this machine lets the process throttle its own disk: root on cgroup v1 with
/// blkio, or a v2 cgroup of its own with the io controller. Elsewhere the tests below
/// check that it says why not instead.
fn throttled(disk: &Value) -> bool {
    disk["in_force"]
        .as_object()
        .is_some_and(|limits| limits.values().any(|v| !v.is_null()))
}

#[test]
fn a_disk_cap_is_read_back_from_the_kernel_or_said_to_be_missing() {
    let root = tempfile::tempdir().unwrap();
    let cap = env_cap(
        root.path(),
        &["--cap", "256MiB", "--disk-cap", "riops=300,rbps=10MiB"],
    );
    let disk = &cap["disk"];
    assert_eq!(disk["asked"]["asked"], "riops=300,rbps=10MiB", "{disk}");
    let notes = disk["notes"].to_string();
    if throttled(disk) {
        // The figures the cgroup holds, not the ones asked for: the same here.
        assert_eq!(disk["in_force"]["read_iops"], 300, "{disk}");
        assert_eq!(disk["in_force"]["read_bytes_per_s"], 10 << 20, "{disk}");
        assert!(disk["in_force"]["write_iops"].is_null(), "{disk}");
        let device = disk["device"].as_str().unwrap();
        assert!(
            device.split(' ').next().unwrap().contains(':'),
            "MAJ:MIN name: {device}"
        );
        assert!(notes.contains("no time to each"), "{notes}");
    } else {
        assert!(disk["in_force"]["read_iops"].is_null(), "{disk}");
        assert!(notes.contains("disk not capped: "), "{notes}");
    }
    // Uncapped, nothing is said of a disk.
    let plain = env_cap(root.path(), &["--cap", "256MiB"]);
    assert!(plain["disk"].is_null(), "{plain}");
}

#[test]
fn the_floor_under_a_disk_cap_reads_at_the_capped_rate_and_its_results_say_so() {
    let root = tempfile::tempdir().unwrap();
    let base = [
        "--engines",
        "floor",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "128MiB",
        "--cap",
        "64MiB",
        "--cache",
        "cold",
        "--warmup",
        "100ms",
        "--measure",
        "2s",
    ];
    let out = run(
        root.path(),
        &[&["measure"][..], &base, &["--disk-cap", "riops=100"]].concat(),
    );
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("cap: disk "), "{said}");
    let (run_dir, json) = only_run(root.path());
    assert_eq!(json["config"]["disk_cap"]["asked"], "riops=100");
    let disk = &json["cap"]["disk"];
    let r = &json["results"][0];
    // Fetches of 64 KiB from a 128 MiB file under a 64 MiB cap: most miss.
    let mean_ms = r["measured"]["latency"]["mean_ns"].as_f64().unwrap() / 1e6;
    let page = std::fs::read_to_string(run_dir.join("index.html")).unwrap();
    if throttled(disk) {
        assert_eq!(disk["in_force"]["read_iops"], 100, "{disk}");
        // 100 reads a second: about 10 ms a miss on average, where this disk uncapped
        // reads 64 KiB in well under a millisecond. The mean, not the p50: the kernel's
        // throttle lets reads through at the disk's speed until its time slice's budget
        // is spent, then holds the next ones (p50 0.24 ms, p99 98 ms, mean 8.9 ms here).
        assert!(
            mean_ms >= 5.0,
            "mean {mean_ms} ms under 100 IOPS: {}",
            r["measured"]["latency"]
        );
        assert!(
            page.contains("the disk capped at read 100 IOPS"),
            "report header"
        );
    } else {
        assert!(page.contains("could not be set"), "report header");
    }
}

#[test]
fn a_bad_disk_cap_is_one_line_naming_the_forms() {
    let root = tempfile::tempdir().unwrap();
    for bad in ["gp2", "riops=fast", "gp3:99999"] {
        let out = run(root.path(), &["env", "--disk-cap", bad]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("riops=N") && err.contains("gp3"),
            "{bad}: {err}"
        );
    }
}
