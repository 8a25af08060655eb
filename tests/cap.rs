//! The measuring process really runs under the requested cgroup cap, read back from the kernel.

mod common;

use common::{blobrace, env_json, stderr};

#[test]
fn requested_cap_is_applied_and_observed() {
    let out = blobrace()
        .args([
            "env",
            "--cap",
            "200MiB",
            "--cpus",
            "1",
            "--sizes",
            "1KiB",
            "--data-dir",
        ])
        .arg(tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    let json = env_json(&out);
    let cap = &json["cap"];
    if cap["origin"] == "uncapped" {
        // Not root / no delegated cgroup here: the run must say so, loudly.
        let notes = cap["notes"].to_string();
        assert!(notes.contains("UNCAPPED"), "{notes}");
        eprintln!("skipped: this process may not create cgroups here ({notes})");
        return;
    }
    assert_eq!(cap["memory_limit_bytes"], 200u64 << 20, "{cap}");
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
        .args([
            "env",
            "--cap",
            "none",
            "--cpus",
            "none",
            "--sizes",
            "1KiB",
            "--data-dir",
        ])
        .arg(tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("created"), "{}", stderr(&out));
}
