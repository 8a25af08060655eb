//! Bad input: one clear error, a non-zero exit, and nothing half-written.

use crate::common::{files_under, run, stderr};

/// Runs `load` with `args`, expects a failure whose message contains `needle`.
fn rejects(args: &[&str], needle: &str) -> (tempfile::TempDir, String) {
    let root = tempfile::tempdir().unwrap();
    let mut all = vec!["load"];
    all.extend_from_slice(args);
    let out = run(root.path(), &all);
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "expected failure for {args:?}; stderr:\n{err}"
    );
    assert!(
        err.contains(needle),
        "stderr for {args:?} lacks {needle:?}:\n{err}"
    );
    assert_eq!(
        err.matches("Error:").count(),
        1,
        "one error, stated once:\n{err}"
    );
    (root, err)
}

#[test]
fn unknown_size_unit() {
    let (root, _) = rejects(
        &["--sizes", "12XB"],
        "invalid size '12XB': unknown unit 'XB'",
    );
    assert!(
        files_under(root.path()).is_empty(),
        "nothing may be written"
    );
}

#[test]
fn size_zero() {
    let (root, _) = rejects(&["--sizes", "0"], "at least 8 bytes");
    assert!(files_under(root.path()).is_empty());
}

#[test]
fn dataset_smaller_than_one_row() {
    let (root, _) = rejects(
        &["--sizes", "4MiB", "--dataset-bytes", "1MiB"],
        "smaller than one 4MiB blob",
    );
    assert!(files_under(root.path()).is_empty());
}

#[test]
fn unknown_engine() {
    let (root, err) = rejects(&["--engines", "sqlite,oracle"], "unknown engine 'oracle'");
    assert!(
        err.contains("sqlite-raw, sqlite-blobio, redb, lmdb, lmdb-nordahead, rocksdb, fs, floor"),
        "lists the known engines: {err}"
    );
    assert!(files_under(root.path()).is_empty());
}

#[test]
fn exit_code_is_2_for_input_errors() {
    let root = tempfile::tempdir().unwrap();
    let out = run(root.path(), &["load", "--sizes", "12XB"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn unwritable_data_dir() {
    let root = tempfile::tempdir().unwrap();
    // A regular file where a directory is needed fails even for root.
    let blocker = root.path().join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let out = crate::common::blobrace()
        .args([
            "load",
            "--cap",
            "none",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "64KiB",
            "--data-dir",
        ])
        .arg(blocker.join("data"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("data directory")
            && err.contains("not-a-dir/data")
            && err.contains("cannot create"),
        "{err}"
    );
}

#[test]
fn not_enough_free_disk() {
    let (root, err) = rejects(
        &[
            "--engines",
            "floor",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "900TiB",
        ],
        "not enough free disk",
    );
    assert!(
        err.contains("need about")
            && err.contains("(floor ")
            && err.contains("kept free")
            && err.contains("available")
            && err.contains("blobrace drop")
            && err.contains("`blobrace load` loads every size class at once"),
        "{err}"
    );
    assert!(
        files_under(root.path()).is_empty(),
        "refused before writing: {:?}",
        files_under(root.path())
    );
    // A run already goes one size class at a time: --drop-after is no way out there.
    for extra in [&[][..], &["--drop-after"][..]] {
        let args = [
            &["measure", "--engines", "floor", "--sizes", "1KiB"][..],
            &["--dataset-bytes", "900TiB"],
            extra,
        ]
        .concat();
        let out = run(root.path(), &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("Even one dataset at a time does not fit")
                && !err.contains("--drop-after")
                && !err.contains("DROP_AFTER"),
            "{err}"
        );
    }
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_alone() {
    let root = tempfile::tempdir().unwrap();
    let sqlite_dir = root.path().join("data/sqlite");
    std::fs::create_dir_all(&sqlite_dir).unwrap();
    let victim = sqlite_dir.join("1KiB-x64.sqlite");
    let content = b"my precious notes, not a database at all".repeat(10);
    std::fs::write(&victim, &content).unwrap();
    let out = run(
        root.path(),
        &[
            "load",
            "--engines",
            "sqlite",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "64KiB",
        ],
    );
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("1KiB-x64.sqlite") && err.contains("not an SQLite database"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&victim).unwrap(),
        content,
        "the file must be untouched"
    );
}

#[test]
fn a_dataset_of_another_seed_is_refused_and_left_alone() {
    let root = tempfile::tempdir().unwrap();
    let base = ["load", "--sizes", "1KiB", "--dataset-bytes", "64KiB"];
    let first = run(root.path(), &[&base[..], &["--seed", "1"]].concat());
    assert!(first.status.success(), "{}", stderr(&first));
    let before: Vec<_> = files_under(root.path())
        .into_iter()
        .map(|f| (std::fs::read(&f).unwrap(), f))
        .collect();
    let second = run(root.path(), &[&base[..], &["--seed", "2"]].concat());
    let err = stderr(&second);
    assert!(!second.status.success());
    assert!(err.contains("seed 1") && err.contains("seed 2"), "{err}");
    for (bytes, f) in before {
        if !f.ends_with("-shm") && !f.ends_with("-wal") {
            assert_eq!(std::fs::read(&f).unwrap(), bytes, "{f} changed");
        }
    }
    // The way out it names works: a drop with the refused run's flags removes what is
    // at that place, whatever seed loaded it, and the load then goes through.
    assert!(err.contains("`blobrace drop`"), "{err}");
    let drop = [&["drop"][..], &base[1..], &["--seed", "2"]].concat();
    let dropped = run(root.path(), &drop);
    assert!(dropped.status.success(), "{}", stderr(&dropped));
    assert!(
        stderr(&dropped).contains("removed, 0 not there, 0 could not be removed"),
        "{}",
        stderr(&dropped)
    );
    let again = run(root.path(), &[&base[..], &["--seed", "2"]].concat());
    assert!(again.status.success(), "{}", stderr(&again));
}

/// A floor file changed after its load: said as such, and `drop` (which the line names)
/// removes it.
#[test]
fn a_changed_floor_file_is_said_and_dropped() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "floor",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "64KiB",
    ];
    let loaded = run(root.path(), &[&["load"][..], &flags].concat());
    assert!(loaded.status.success(), "{}", stderr(&loaded));
    let file = root.path().join("data/floor/1KiB-x64.bin");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    std::io::Write::write_all(&mut f, b"xx").unwrap();
    let refused = run(root.path(), &[&["load"][..], &flags].concat());
    let err = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not what its manifest says") && err.contains("`blobrace drop`"),
        "{err}"
    );
    let dropped = run(root.path(), &[&["drop"][..], &flags].concat());
    assert!(dropped.status.success(), "{}", stderr(&dropped));
    assert!(!file.exists());
}

/// Switches set by variables take the words people write: BLOBRACE_FRESH=1 as the
/// run's own advice writes it, yes, on, true; and 0, no, off, false.
#[test]
fn switch_variables_take_1_yes_and_0_no() {
    for value in ["1", "yes", "on", "true", "0", "no", "off", "false"] {
        let root = tempfile::tempdir().unwrap();
        let mut cmd = crate::common::blobrace();
        cmd.args([
            "measure",
            "--dry-run",
            "--engines",
            "floor",
            "--sizes",
            "1KiB",
        ])
        .arg("--data-dir")
        .arg(root.path().join("data"))
        .arg("--results-dir")
        .arg(root.path().join("results"));
        for name in [
            "BLOBRACE_FRESH",
            "BLOBRACE_NO_WAIT",
            "BLOBRACE_FAIL_FAST",
            "BLOBRACE_DROP_AFTER",
        ] {
            cmd.env(name, value);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{value}: {}", stderr(&out));
    }
}

/// A report asked of a results directory where no run was made says how to make one.
#[test]
fn a_report_where_no_run_was_made_says_how_to_make_one() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("nothing-here");
    for args in [&[][..], &["--run", "20261127-000000-0000001"][..]] {
        let out = crate::common::blobrace()
            .arg("report")
            .args(args)
            .arg("--results-dir")
            .arg(&dir)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert!(!out.status.success(), "{err}");
        assert!(
            err.contains("no run has been made in")
                && err.contains(&format!("blobrace measure --results-dir {}", dir.display())),
            "{err}"
        );
    }
}

#[test]
fn a_cap_too_small_for_the_largest_blob_is_refused_before_loading() {
    // Otherwise the kernel kills the run mid-load with a bare "Killed".
    let (root, err) = rejects(
        &[
            "--sizes",
            "1KiB,32MiB",
            "--dataset-bytes",
            "64MiB",
            "--cap",
            "64MiB",
        ],
        "32MiB blobs need a cap of at least 208MiB",
    );
    assert!(err.contains("raise --cap"), "{err}");
    drop(root);
}

#[test]
fn unknown_cache_state() {
    let (root, err) = rejects(&["--cache", "warm"], "invalid value 'warm' for '--cache");
    assert!(
        err.contains("cold") && err.contains("steady") && err.contains("both"),
        "{err}"
    );
    assert!(files_under(root.path()).is_empty());
}

#[test]
fn zero_repeats() {
    let (root, _) = rejects(&["--repeat", "0"], "invalid value '0' for '--repeat");
    assert!(files_under(root.path()).is_empty());
}

#[test]
fn zero_clients() {
    let (root, _) = rejects(
        &["--clients", "0"],
        "invalid clients '0': a load needs at least 1 client",
    );
    assert!(files_under(root.path()).is_empty());
}

#[test]
fn a_rate_of_zero_or_less() {
    for rate in ["0", "-5", "fast"] {
        let (root, err) = rejects(&["--rate", rate], &format!("invalid rate '{rate}'"));
        assert!(err.contains("fetches"), "{err}");
        assert!(files_under(root.path()).is_empty());
    }
}

#[test]
fn an_in_flight_limit_below_the_clients() {
    let (root, err) = rejects(
        &["--clients", "16", "--rate", "100", "--max-in-flight", "4"],
        "invalid max-in-flight '4': below the 16 clients",
    );
    assert!(err.contains("raise --max-in-flight"), "{err}");
    assert!(files_under(root.path()).is_empty());
}

#[test]
fn an_sqlite_page_size_sqlite_does_not_have() {
    for bad in ["3000", "256", "131072", "sixteen"] {
        let (root, err) = rejects(
            &["--engines", "sqlite", "--sqlite-page-size", bad],
            "SQLite's page size is a power of two from 512 to 65536",
        );
        assert!(err.contains("16384") && err.contains(bad), "{err}");
        assert!(
            files_under(root.path()).is_empty(),
            "nothing written for {bad}"
        );
    }
}

#[test]
fn a_rocksdb_min_blob_size_that_is_neither_a_size_nor_off() {
    for bad in ["4parsecs", "on", "1.5B"] {
        let (root, err) = rejects(
            &["--engines", "rocksdb", "--rocksdb-min-blob-size", bad],
            "RocksDB's min_blob_size is a size",
        );
        assert!(
            err.contains(bad) && err.contains("off (no blob files)"),
            "{err}"
        );
        assert!(
            files_under(root.path()).is_empty(),
            "nothing written for {bad}"
        );
    }
}

#[test]
fn a_key_type_that_does_not_exist() {
    let (root, err) = rejects(&["--key", "uuidv1"], "unknown key type");
    assert!(err.contains("int, uuidv4, uuidv7, ulid"), "{err}");
    assert!(files_under(root.path()).is_empty());
}

#[test]
fn a_key_type_for_an_engine_without_keys() {
    // fs has no keys; the floor alone has nothing keyed to be the reference for.
    for engine in ["floor", "fs", "sqlite,fs"] {
        let (root, err) = rejects(
            &["--engines", engine, "--key", "ulid", "--sizes", "1KiB"],
            "has no key type",
        );
        // Names the engines that have keys, and the way out.
        assert!(
            err.contains(
                "Engines with keys: sqlite, sqlite-raw, sqlite-blobio, redb, lmdb, lmdb-nordahead, rocksdb, postgres"
            ),
            "{err}"
        );
        assert!(err.contains("--key int"), "{err}");
        assert!(
            files_under(root.path()).is_empty(),
            "nothing written for {engine}"
        );
    }
}

#[test]
fn access_distributions_out_of_their_range() {
    for (access, says) in [
        ("zipfian:0", "theta must be between 0 and 1"),
        ("zipfian:5", "theta must be between 0 and 1"),
        (
            "hotspot:120/10",
            "the hot set must be a percentage between 0 and 100",
        ),
        ("pareto", "unknown --access \"pareto\""),
    ] {
        let root = tempfile::tempdir().unwrap();
        let out = run(root.path(), &["measure", "--access", access]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{access}: {err}");
        assert!(err.contains(says), "{access}: {err}");
        assert!(
            files_under(root.path()).is_empty(),
            "{access}: nothing written"
        );
    }
}

#[test]
fn churn_shares_kinds_and_engines_that_cannot_change_rows() {
    for (args, says) in [
        (
            &["--churn", "150"][..],
            "--churn \"150\" is not a whole percentage of the rows from 0 to 100",
        ),
        (&["--churn=-1"][..], "from 0 to 100"),
        (
            &["--churn", "30", "--churn-kind", "update"][..],
            "is not one of: replace, delete-insert",
        ),
        (
            &["--churn", "30", "--maintenance", "vacuum"][..],
            "is not one of: none, default, full",
        ),
        (
            &["--maintenance", "full"][..],
            "invalid maintenance 'full': it is what cleans up after a churn",
        ),
        (
            &["--churn", "30", "--engines", "fs,sqlite"][..],
            "invalid churn '30': fs's store cannot change rows yet",
        ),
    ] {
        let root = tempfile::tempdir().unwrap();
        let out = run(root.path(), &[&["measure"][..], args].concat());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(
            files_under(root.path()).is_empty(),
            "{args:?}: nothing written"
        );
    }
}

#[test]
fn write_rates_that_are_not_rates_and_engines_that_cannot_be_written() {
    for (args, says) in [
        (
            &["--write-rate", "-1"][..],
            "--write-rate \"-1\" is not a rate",
        ),
        (
            &["--write-rate", "nan"][..],
            "--write-rate \"nan\" is not a rate",
        ),
        (
            &["--write-rate", "2e6"][..],
            "is not a rate: give changes a second, 0 or more",
        ),
        (
            &["--write-rate", "50", "--engines", "fs,sqlite"][..],
            "invalid write-rate '50': fs's store cannot change rows yet",
        ),
    ] {
        let root = tempfile::tempdir().unwrap();
        let out = run(root.path(), &[&["measure"][..], args].concat());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(
            err.lines().filter(|l| l.starts_with("Error")).count(),
            1,
            "{err}"
        );
        assert!(
            files_under(root.path()).is_empty(),
            "{args:?}: nothing written"
        );
    }
}

#[test]
fn keeping_every_dataset_and_dropping_each_are_refused_together() {
    rejects(
        &[
            "--engines",
            "floor",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "1MiB",
            "--keep-all",
            "--drop-after",
        ],
        "choose one",
    );
}

/// `blobrace load` with `vars` set and no flags but `args`: its exit code and stderr.
fn with_variables(vars: &[(&str, &str)], args: &[&str]) -> (Option<i32>, String) {
    let root = tempfile::tempdir().unwrap();
    let mut cmd = crate::common::blobrace();
    cmd.arg("load")
        .args(args)
        .arg("--data-dir")
        .arg(root.path().join("data"));
    for (name, value) in vars {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    assert!(files_under(root.path()).is_empty(), "nothing written");
    (out.status.code(), stderr(&out))
}

#[test]
fn a_misspelt_variable_is_refused_naming_the_one_meant() {
    let (code, err) = with_variables(&[("BLOBRACE_ENGIENS", "sqlite")], &["--sizes", "1KiB"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("BLOBRACE_ENGIENS"), "{err}");
    assert!(err.contains("did you mean BLOBRACE_ENGINES?"), "{err}");
    assert_eq!(err.matches("Error:").count(), 1, "{err}");
}

#[test]
fn a_bad_value_in_a_variable_is_said_against_the_variable() {
    let (code, err) = with_variables(&[("BLOBRACE_SIZES", "12XB")], &["--engines", "floor"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("12XB"), "{err}");
    assert!(
        err.contains("BLOBRACE_SIZES (the variable of --sizes)"),
        "{err}"
    );
    // Typed as a flag, it is the flag's.
    let (_, typed) = with_variables(&[], &["--sizes", "12XB"]);
    assert!(typed.contains("'--sizes <SIZES>'"), "{typed}");
}

#[test]
fn a_measure_limit_below_the_measure_time_is_refused() {
    rejects(
        &[
            "--engines",
            "floor",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "1MiB",
            "--measure",
            "2s",
            "--measure-limit",
            "1s",
        ],
        "below the time each cell is measured",
    );
}

#[test]
fn a_cap_above_the_machines_memory_is_refused() {
    rejects(
        &[
            "--engines",
            "floor",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "1MiB",
            "--cap",
            "1000TiB",
        ],
        "above this machine's memory",
    );
}

/// Results are first written after the loads: a results directory that cannot be
/// written is said before anything is loaded.
#[test]
fn a_results_directory_that_cannot_be_written_is_refused_before_loading() {
    let root = tempfile::tempdir().unwrap();
    let not_a_dir = root.path().join("a-file");
    std::fs::write(&not_a_dir, b"x").unwrap();
    let out = crate::common::blobrace()
        .args([
            "measure",
            "--engines",
            "floor",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "1MiB",
        ])
        .args(["--cap", "none", "--cpus", "none"])
        .arg("--data-dir")
        .arg(root.path().join("data"))
        .arg("--results-dir")
        .arg(not_a_dir.join("results"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("results directory"), "{err}");
    assert!(err.contains("Nothing was loaded"), "{err}");
    assert!(files_under(&root.path().join("data")).is_empty(), "{err}");
}

/// `blobrace env | head -n 1`: the reader goes away, blobrace ends without a panic.
#[test]
fn output_to_a_closed_pipe_ends_quietly() {
    use std::process::Stdio;
    let root = tempfile::tempdir().unwrap();
    let mut child = crate::common::blobrace()
        .args(["env", "--engines", "floor,fs,sqlite"])
        .arg("--data-dir")
        .arg(root.path().join("data"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        matches!(out.status.code(), Some(0) | Some(141)),
        "{:?} {err}",
        out.status
    );
}

/// A data directory whose name is no URL ("my data", a '?', a '#', a ':') holds every
/// local store: SQLite's connection was once built by pasting the path into a URL, so
/// fs and the floor loaded and every SQLite engine failed.
#[test]
fn a_data_directory_whose_name_is_no_url_holds_every_local_store() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("my data?x=1#y:z");
    let args = |command: &str| {
        let mut cmd = crate::common::blobrace();
        cmd.args([
            command,
            "--engines",
            "sqlite,sqlite-raw,sqlite-blobio,redb,lmdb,lmdb-nordahead,rocksdb,fs,floor",
        ])
        .args([
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "256KiB",
            "--cap",
            "none",
            "--cpus",
            "none",
        ])
        .arg("--data-dir")
        .arg(&data)
        .arg("--results-dir")
        .arg(root.path().join("results"));
        cmd.output().unwrap()
    };
    let load = args("load");
    assert!(load.status.success(), "{}", stderr(&load));
    assert!(data.join("sqlite").read_dir().unwrap().count() > 0);
    let verify = args("verify");
    assert!(verify.status.success(), "{}", stderr(&verify));
}

/// A results file of another schema is refused naming both versions, not read with
/// whatever fields happen to match.
#[test]
fn a_results_file_of_another_schema_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let run_dir = root.path().join("results").join("20260101-000000-0000001");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::write(
        run_dir.join("results.json"),
        br#"{"schema_version": 99, "results": []}"#,
    )
    .unwrap();
    let out = crate::common::blobrace()
        .args(["report", "--results-dir"])
        .arg(root.path().join("results"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("schema 99") && err.contains("reads schema 1"),
        "{err}"
    );
}
