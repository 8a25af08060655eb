//! The embedded key-value stores (redb, LMDB, RocksDB): each loaded, verified and measured like
//! every store (under integer and random keys), its version and cache recorded, listed
//! by `env`, dropped, and a file in its place that is not its own refused and left as
//! it was. One test body per check, run for each store.

use crate::common::{only_run, run, stderr, with_flags};

/// What differs between the stores: their names, files and what they record.
struct Kv {
    engine: &'static str,
    /// The file in a dataset's folder that says whose it is (a foreign one is refused).
    file: &'static str,
    /// A file a load killed as the store created its dataset leaves unwritten.
    unwritten: &'static str,
    /// Files a cold start evicts for a dataset of 4 MiB, at least.
    evicted_files: u64,
    /// The setting holding the store's version, and how that version starts.
    version: (&'static str, &'static str),
    /// What the `cache` setting says uncapped.
    cache_uncapped: &'static str,
    /// How a foreign file in its place is refused.
    foreign: &'static str,
}

const REDB: Kv = Kv {
    engine: "redb",
    file: "blobs.redb",
    unwritten: "blobs.redb",
    evicted_files: 1,
    version: ("redb", "4.6.0"),
    // Uncapped here: redb's own default cache, said as such.
    cache_uncapped: "no cap to size it from",
    foreign: "not a redb file",
};

const LMDB: Kv = Kv {
    engine: "lmdb",
    file: "data.mdb",
    unwritten: "data.mdb",
    evicted_files: 1,
    version: ("heed", "0.23.1"),
    cache_uncapped: "none of its own",
    foreign: "not an LMDB data file",
};

/// RocksDB: the system's library, loaded at run time; a directory per dataset, its
/// CURRENT naming its MANIFEST, its blobs in blob files beside the LSM's SST files.
const ROCKSDB: Kv = Kv {
    engine: "rocksdb",
    file: "CURRENT",
    // RocksDB takes its LOCK first: a create cut short leaves it and no CURRENT.
    unwritten: "LOCK",
    // At least its blob file, SST, MANIFEST, CURRENT, OPTIONS and LOCK.
    evicted_files: 4,
    version: ("rocksdb", "librocksdb.so."),
    cache_uncapped: "no cap to size it from",
    foreign: "not a RocksDB database",
};

/// Whether this machine has RocksDB's library (`scripts/setup.sh` installs it); where it
/// has not, says so and the RocksDB test is skipped, except on CI, which installs it.
pub fn rocksdb_here() -> bool {
    let found = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/lib",
    ]
    .iter()
    .filter_map(|d| std::fs::read_dir(d).ok())
    .flatten()
    .filter_map(|e| e.ok())
    .any(|e| e.file_name().to_string_lossy().starts_with("librocksdb.so"));
    if !found && std::env::var_os("BLOBRACE_ROCKSDB_LIB").is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs RocksDB's library (scripts/setup.sh)"
        );
        eprintln!("skipped: RocksDB's library is not installed (scripts/setup.sh installs it)");
        return false;
    }
    true
}

fn flags(kv: &Kv) -> [&'static str; 6] {
    [
        "--engines",
        kv.engine,
        "--sizes",
        "1KiB,64KiB",
        "--dataset-bytes",
        "4MiB",
    ]
}

fn loads_verifies_measures_and_is_listed_and_dropped(kv: &Kv) {
    let root = tempfile::tempdir().unwrap();
    let flags = flags(kv);
    for key in ["int", "uuidv4"] {
        let with = |cmd: &'static str| -> Vec<&'static str> {
            let mut all = with_flags(cmd, &flags, &[]);
            all.extend(["--key", key]);
            all
        };
        let load = run(root.path(), &with("load"));
        assert!(load.status.success(), "{key}: {}", stderr(&load));
        assert_eq!(
            stderr(&load).matches(": loaded").count(),
            2,
            "{}",
            stderr(&load)
        );
        let verify = run(root.path(), &with("verify"));
        assert!(verify.status.success(), "{key}: {}", stderr(&verify));
        assert_eq!(
            stderr(&verify).matches("ok  ").count(),
            2,
            "{}",
            stderr(&verify)
        );
    }
    let folder = root.path().join("data").join(kv.engine);
    let datasets: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        datasets.len(),
        4,
        "a folder per dataset and key type: {datasets:?}"
    );

    let measure = run(
        root.path(),
        &with_flags(
            "measure",
            &flags,
            &["--warmup", "100ms", "--measure", "300ms"],
        ),
    );
    assert!(measure.status.success(), "{}", stderr(&measure));
    let (_, json) = only_run(root.path());
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{results:?}");
    for r in results {
        assert_eq!(r["engine"], kv.engine);
        assert!(r["measured"]["count"].as_u64().unwrap() > 0, "{r}");
        let (setting, version) = kv.version;
        let recorded = r["settings"][setting].as_str().unwrap();
        assert!(recorded.starts_with(version), "{}", r["settings"]);
        let cache = r["settings"]["cache"].as_str().unwrap();
        assert!(cache.contains(kv.cache_uncapped), "{cache}");
        let evicted = r["eviction"]["files"].as_u64().unwrap();
        assert!(evicted >= kv.evicted_files, "{}", r["eviction"]);
        if kv.evicted_files == 1 {
            assert_eq!(evicted, 1, "its one file: {}", r["eviction"]);
        }
    }
    for load in json["loads"].as_array().unwrap() {
        // 4 MiB of blobs: at least that on disk, at most about twice (redb gives a
        // 64 KiB blob 128 KiB of pages).
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
            kv.engine,
            "--data-dir",
        ])
        .arg(root.path().join("data"))
        .output()
        .unwrap();
    assert!(env.status.success(), "{}", stderr(&env));
    let listed = crate::common::stdout(&env);
    let prefix = format!("  {} ", kv.engine);
    let listed_datasets: Vec<_> = listed
        .lines()
        .filter(|l| l.starts_with(&prefix) && !l.contains("not a dataset"))
        .collect();
    assert_eq!(listed_datasets.len(), 4, "{listed}");

    let drop = run(root.path(), &with_flags("drop", &flags, &[]));
    assert!(drop.status.success(), "{}", stderr(&drop));
    let left: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left.len(), 2, "the int-keyed datasets dropped: {left:?}");
    assert!(left.iter().all(|f| f.contains("-kuuidv4")), "{left:?}");
}

/// The workloads: a size mix loaded, verified and read with results per size band, by
/// one client and by 4; a size class read by YCSB's zipfian ids; churn, which these
/// stores do not do, refused by the store's name before anything is loaded.
fn serves_a_size_mix_and_zipfian_reads_and_refuses_churn_by_name(kv: &Kv) {
    let root = tempfile::tempdir().unwrap();
    let short = ["--cache", "cold", "--warmup", "50ms", "--measure", "200ms"];
    let mix = [
        "--engines",
        kv.engine,
        "--size-mix",
        "4KiB:60,64KiB:30,1MiB:10",
        "--dataset-bytes",
        "8MiB",
    ];
    let measure = run(
        root.path(),
        &with_flags(
            "measure",
            &mix,
            &[&short[..], &["--clients", "1,4"]].concat(),
        ),
    );
    assert!(measure.status.success(), "{}", stderr(&measure));
    let (_, json) = only_run(root.path());
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    let bands = results[0]["measured"]["bands"].as_array().unwrap();
    assert_eq!(bands.len(), 3, "{}", results[0]);
    let fetched: u64 = bands.iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert_eq!(fetched, results[0]["measured"]["count"].as_u64().unwrap());
    let loads = json["load_results"].as_array().unwrap();
    assert_eq!(loads.len(), 1, "4 clients: {loads:?}");
    assert_eq!(loads[0]["load"]["point"]["clients"], 4);
    assert!(
        loads[0]["load"]["fetches_per_s"].as_f64().unwrap() > 10.0,
        "{}",
        loads[0]
    );
    let verify = run(root.path(), &with_flags("verify", &mix, &[]));
    assert!(verify.status.success(), "{}", stderr(&verify));

    let zipfian = [
        "--engines",
        kv.engine,
        "--sizes",
        "4KiB",
        "--dataset-bytes",
        "4MiB",
        "--access",
        "zipfian",
    ];
    let measure = run(root.path(), &with_flags("measure", &zipfian, &short));
    assert!(measure.status.success(), "{}", stderr(&measure));
    let dir = crate::common::newest_run(root.path());
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(
        json["config"]["access"]["kind"], "zipfian",
        "{}",
        json["config"]
    );
    let result = &json["results"][0];
    assert_eq!(result["engine"], kv.engine);
    assert!(
        result["measured"]["count"].as_u64().unwrap() > 0,
        "{result}"
    );

    let churn = run(
        root.path(),
        &[
            "load",
            "--engines",
            kv.engine,
            "--churn",
            "30",
            "--sizes",
            "1KiB",
        ],
    );
    let err = stderr(&churn);
    assert_eq!(churn.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}'s store cannot change rows", kv.engine)),
        "{err}"
    );
}

fn a_file_in_its_place_that_is_not_its_own_is_refused_and_left_as_it_was(kv: &Kv) {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        kv.engine,
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "256KiB",
    ];
    let dir = root.path().join("data").join(kv.engine).join("1KiB-x256");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(kv.file);
    std::fs::write(
        &file,
        b"someone else's notes, long enough to hold a magic number",
    )
    .unwrap();
    let load = run(root.path(), &with_flags("load", &flags, &[]));
    let err = stderr(&load);
    assert_eq!(load.status.code(), Some(2), "{err}");
    assert!(err.contains(kv.foreign), "{err}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"someone else's notes, long enough to hold a magic number"
    );
}

/// A load killed as the store created its file leaves it sized but unwritten (redb
/// writes its magic number last, after a sync): the next load starts it again.
fn a_file_created_but_never_written_is_loaded_again(kv: &Kv) {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        kv.engine,
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "256KiB",
    ];
    let dir = root.path().join("data").join(kv.engine).join("1KiB-x256");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(kv.unwritten), vec![0u8; 8192]).unwrap();
    let load = run(root.path(), &with_flags("load", &flags, &[]));
    assert!(load.status.success(), "{}", stderr(&load));
    let verify = run(root.path(), &with_flags("verify", &flags, &[]));
    assert!(verify.status.success(), "{}", stderr(&verify));
    assert_eq!(
        stderr(&verify).matches("ok  ").count(),
        1,
        "{}",
        stderr(&verify)
    );
}

#[test]
fn redb_loads_verifies_measures_and_is_listed_and_dropped_with_integer_and_random_keys() {
    loads_verifies_measures_and_is_listed_and_dropped(&REDB);
}

#[test]
fn lmdb_loads_verifies_measures_and_is_listed_and_dropped_with_integer_and_random_keys() {
    loads_verifies_measures_and_is_listed_and_dropped(&LMDB);
}

#[test]
fn redb_serves_a_size_mix_and_zipfian_reads_and_refuses_churn_by_name() {
    serves_a_size_mix_and_zipfian_reads_and_refuses_churn_by_name(&REDB);
}

#[test]
fn lmdb_serves_a_size_mix_and_zipfian_reads_and_refuses_churn_by_name() {
    serves_a_size_mix_and_zipfian_reads_and_refuses_churn_by_name(&LMDB);
}

#[test]
fn rocksdb_serves_a_size_mix_and_zipfian_reads_and_refuses_churn_by_name() {
    if rocksdb_here() {
        serves_a_size_mix_and_zipfian_reads_and_refuses_churn_by_name(&ROCKSDB);
    }
}

#[test]
fn a_file_in_redbs_place_that_is_not_redb_is_refused_and_left_as_it_was() {
    a_file_in_its_place_that_is_not_its_own_is_refused_and_left_as_it_was(&REDB);
}

#[test]
fn a_file_in_lmdbs_place_that_is_not_lmdb_is_refused_and_left_as_it_was() {
    a_file_in_its_place_that_is_not_its_own_is_refused_and_left_as_it_was(&LMDB);
}

#[test]
fn a_redb_file_created_but_never_written_is_loaded_again() {
    a_file_created_but_never_written_is_loaded_again(&REDB);
}

#[test]
fn an_lmdb_file_created_but_never_written_is_loaded_again() {
    a_file_created_but_never_written_is_loaded_again(&LMDB);
}

#[test]
fn rocksdb_loads_verifies_measures_and_is_listed_and_dropped_with_integer_and_random_keys() {
    if rocksdb_here() {
        loads_verifies_measures_and_is_listed_and_dropped(&ROCKSDB);
    }
}

#[test]
fn a_file_in_rocksdbs_place_that_is_not_rocksdbs_is_refused_and_left_as_it_was() {
    if rocksdb_here() {
        a_file_in_its_place_that_is_not_its_own_is_refused_and_left_as_it_was(&ROCKSDB);
    }
}

#[test]
fn a_rocksdb_directory_whose_create_was_cut_short_is_loaded_again() {
    if rocksdb_here() {
        a_file_created_but_never_written_is_loaded_again(&ROCKSDB);
    }
}

/// LMDB's two engines read one dataset: with the kernel's read-ahead on the map and
/// without, each saying which, and the disk's own read-ahead beside it.
#[test]
fn lmdbs_two_engines_read_one_dataset_with_and_without_read_ahead() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "lmdb,lmdb-nordahead",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "4MiB",
    ];
    let measure = run(
        root.path(),
        &with_flags(
            "measure",
            &flags,
            &["--warmup", "100ms", "--measure", "300ms"],
        ),
    );
    assert!(measure.status.success(), "{}", stderr(&measure));
    let (_, json) = only_run(root.path());
    let loads = json["loads"].as_array().unwrap();
    assert_eq!(loads.len(), 1, "one store, one dataset: {loads:?}");
    let results = json["results"].as_array().unwrap();
    let read_ahead = |engine: &str| -> String {
        let r = results
            .iter()
            .find(|r| r["engine"] == engine && r["cache"] == "cold")
            .unwrap_or_else(|| panic!("no cold {engine} in {results:?}"));
        assert!(r["measured"]["count"].as_u64().unwrap() > 0, "{r}");
        let disk = r["settings"]["disk read-ahead"].as_str().unwrap();
        assert!(
            disk.contains("read_ahead_kb") || disk.starts_with("unavailable ("),
            "{disk}"
        );
        r["settings"]["read-ahead"].as_str().unwrap().to_string()
    };
    assert!(read_ahead("lmdb").starts_with("the kernel's"));
    assert!(read_ahead("lmdb-nordahead").contains("MDB_NORDAHEAD"));
}

/// Without RocksDB's library (here: the variable pointing at a file that is not there),
/// a run of the default engines goes on without RocksDB, saying what was tried and how to
/// install it; asked for by name, RocksDB refuses the run before anything is loaded.
#[test]
fn without_rocksdbs_library_a_default_run_leaves_it_out_and_naming_it_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let missing = "/nonexistent/librocksdb.so.7.8";
    let data = root.path().join("data");
    let go = |args: &[&str]| {
        crate::common::blobrace()
            .args(args)
            .args([
                "--sizes",
                "1KiB",
                "--dataset-bytes",
                "256KiB",
                "--cap",
                "none",
                "--cpus",
                "none",
                "--data-dir",
            ])
            .arg(&data)
            .env("BLOBRACE_ROCKSDB_LIB", missing)
            .output()
            .unwrap()
    };
    let dropped = go(&["drop"]);
    let err = stderr(&dropped);
    assert!(dropped.status.success(), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("skipping rocksdb:"))
        .unwrap_or_else(|| panic!("no line leaves RocksDB out: {err}"));
    assert!(line.contains(missing), "what was tried: {line}");
    assert!(
        line.contains("apt-get install librocksdb"),
        "how to install it: {line}"
    );

    let load = go(&["load", "--engines", "sqlite-raw,rocksdb"]);
    let err = stderr(&load);
    assert_eq!(load.status.code(), Some(1), "{err}");
    assert!(err.contains("rocksdb cannot run here"), "{err}");
    assert!(err.contains(missing), "{err}");
    assert_eq!(err.matches("Error").count(), 1, "one error: {err}");
    assert!(
        !data.join("sqlite").exists(),
        "refused before loading anything"
    );
}

/// RocksDB's layouts (`--rocksdb-min-blob-size`): every value in blob files (the
/// default), none, or those of 64 KiB and more. Each is a dataset of its own, loaded
/// with its values where the layout says and read back byte-equal; a run records the
/// layout it read, and `blobrace variants` sets the layouts side by side.
#[test]
fn rocksdbs_blob_file_layouts_are_datasets_of_their_own_read_back_and_compared() {
    if !rocksdb_here() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let base = [
        "--engines",
        "floor,rocksdb",
        "--sizes",
        "1KiB,64KiB",
        "--dataset-bytes",
        "4MiB",
    ];
    let timing = ["--warmup", "50ms", "--measure", "100ms", "--cache", "cold"];
    let mut runs = Vec::new();
    for layout in ["0", "off", "64KiB"] {
        let flags = [&base[..], &["--rocksdb-min-blob-size", layout]].concat();
        let verify = run(root.path(), &with_flags("verify", &flags, &[]));
        // Nothing loaded yet for this layout: verify refuses (its dataset is not the
        // default's directory, which is there after the first).
        assert!(!verify.status.success(), "{layout}: {}", stderr(&verify));
        let measure = run(root.path(), &with_flags("measure", &flags, &timing));
        assert!(measure.status.success(), "{layout}: {}", stderr(&measure));
        let verify = run(root.path(), &with_flags("verify", &flags, &[]));
        assert!(verify.status.success(), "{layout}: {}", stderr(&verify));
        assert_eq!(
            stderr(&verify).matches("ok  ").count(),
            4,
            "{layout}: {}",
            stderr(&verify)
        );
        let dir = crate::common::newest_run(root.path());
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
        let recorded: Vec<&str> = json["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["engine"] == "rocksdb")
            .map(|r| r["settings"]["blob files"].as_str().unwrap())
            .collect();
        assert_eq!(recorded.len(), 2, "{layout}: {recorded:?}");
        let says = match layout {
            "0" => "min_blob_size 0",
            "off" => "off (",
            _ => "min_blob_size 64KiB",
        };
        assert!(recorded.iter().all(|s| s.contains(says)), "{recorded:?}");
        runs.push(dir.file_name().unwrap().to_str().unwrap().to_string());
    }
    // Where each layout put its values: blob files, or only SST files.
    let folder = root.path().join("data").join("rocksdb");
    let has_blob_files = |dataset: &str| -> bool {
        std::fs::read_dir(folder.join(dataset))
            .unwrap_or_else(|e| panic!("{dataset}: {e}"))
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".blob"))
    };
    assert!(has_blob_files("1KiB-x4096") && has_blob_files("64KiB-x64"));
    assert!(!has_blob_files("1KiB-x4096-noblob") && !has_blob_files("64KiB-x64-noblob"));
    assert!(
        !has_blob_files("1KiB-x4096-mb65536"),
        "1 KiB is under 64 KiB"
    );
    assert!(has_blob_files("64KiB-x64-mb65536"));
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 6);

    let out = crate::common::blobrace()
        .arg("variants")
        .args(&runs)
        .arg("--results-dir")
        .arg(root.path().join("results"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let page = crate::common::newest_variants(root.path());
    let rows: serde_json::Value =
        serde_json::from_slice(&std::fs::read(page.join("variants.json")).unwrap()).unwrap();
    let layouts: Vec<(&str, u64)> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["engine"] == "rocksdb")
        .map(|r| {
            (
                r["layout"].as_str().unwrap(),
                r["size_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    for layout in ["default", "no blob files", "min_blob_size 64KiB"] {
        for size in [1024, 65536] {
            assert!(
                layouts.contains(&(layout, size)),
                "{layout} {size}: {layouts:?}"
            );
        }
    }
}
