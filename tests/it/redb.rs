//! redb, the embedded key-value store: loaded, verified and measured like every store
//! (under integer and random keys), its version and cache recorded, listed by `env`,
//! dropped, and a file in its place that is not redb's refused and left as it was.

use crate::common::{only_run, run, stderr, with_flags};

const FLAGS: [&str; 6] = [
    "--engines",
    "redb",
    "--sizes",
    "1KiB,64KiB",
    "--dataset-bytes",
    "4MiB",
];

#[test]
fn redb_loads_verifies_measures_and_is_listed_and_dropped_with_integer_and_random_keys() {
    let root = tempfile::tempdir().unwrap();
    for key in ["int", "uuidv4"] {
        let with = |cmd: &'static str, extra: &[&'static str]| -> Vec<&'static str> {
            let mut all = with_flags(cmd, &FLAGS, extra);
            all.extend(["--key", key]);
            all
        };
        let load = run(root.path(), &with("load", &[]));
        assert!(load.status.success(), "{key}: {}", stderr(&load));
        assert_eq!(
            stderr(&load).matches(": loaded").count(),
            2,
            "{}",
            stderr(&load)
        );
        let verify = run(root.path(), &with("verify", &[]));
        assert!(verify.status.success(), "{key}: {}", stderr(&verify));
        assert_eq!(
            stderr(&verify).matches("ok  ").count(),
            2,
            "{}",
            stderr(&verify)
        );
    }
    let files: Vec<_> = std::fs::read_dir(root.path().join("data/redb"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        files.len(),
        4,
        "a folder per dataset and key type: {files:?}"
    );

    let measure = run(
        root.path(),
        &with_flags(
            "measure",
            &FLAGS,
            &["--warmup", "100ms", "--measure", "300ms"],
        ),
    );
    assert!(measure.status.success(), "{}", stderr(&measure));
    let (_, json) = only_run(root.path());
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{results:?}");
    for r in results {
        assert_eq!(r["engine"], "redb");
        assert!(r["measured"]["count"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(r["settings"]["redb"], "4.6.0", "{}", r["settings"]);
        // Uncapped here: redb's own default cache, said as such.
        let cache = r["settings"]["cache"].as_str().unwrap();
        assert!(cache.contains("no cap to size it from"), "{cache}");
        assert!(
            r["eviction"]["files"].as_u64().unwrap() == 1,
            "{}",
            r["eviction"]
        );
    }
    for load in json["loads"].as_array().unwrap() {
        // Every 64 KiB blob is 16 pages and a header: at least the blobs, at most twice.
        let bytes = load["disk_bytes"].as_u64().unwrap();
        assert!((4 << 20..=9 << 20).contains(&bytes), "{load}");
    }

    let env = crate::common::blobrace()
        .args([
            "env",
            "--cap",
            "none",
            "--cpus",
            "none",
            "--engines",
            "redb",
            "--data-dir",
        ])
        .arg(root.path().join("data"))
        .output()
        .unwrap();
    assert!(env.status.success(), "{}", stderr(&env));
    let listed = crate::common::stdout(&env);
    let datasets: Vec<_> = listed
        .lines()
        .filter(|l| l.starts_with("  redb ") && !l.contains("not a dataset"))
        .collect();
    assert_eq!(datasets.len(), 4, "{listed}");

    let drop = run(root.path(), &with_flags("drop", &FLAGS, &[]));
    assert!(drop.status.success(), "{}", stderr(&drop));
    let left: Vec<_> = std::fs::read_dir(root.path().join("data/redb"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left.len(), 2, "the int-keyed datasets dropped: {left:?}");
    assert!(left.iter().all(|f| f.contains("-kuuidv4")), "{left:?}");
}

#[test]
fn a_file_in_redbs_place_that_is_not_redb_is_refused_and_left_as_it_was() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "redb",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "256KiB",
    ];
    let dir = root.path().join("data/redb/1KiB-x256");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("blobs.redb");
    std::fs::write(&file, b"someone else's notes").unwrap();
    let load = run(root.path(), &with_flags("load", &flags, &[]));
    let err = stderr(&load);
    assert_eq!(load.status.code(), Some(2), "{err}");
    assert!(err.contains("not a redb file"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), b"someone else's notes");
}
