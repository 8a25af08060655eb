//! A load killed with SIGKILL at any moment, then re-run, ends with exactly
//! ids 1..=N and the right content in every store.

use std::os::unix::process::ExitStatusExt;

use crate::common::{blobrace, run, signal_after, stderr};

/// Start `blobrace <args>` uncapped on `root`'s data, and SIGKILL it after `delay_ms`
/// unless it has finished; whether it was killed.
fn sigkill_after(root: &std::path::Path, args: &[&str], delay_ms: u64) -> bool {
    signal_after(root, args, libc::SIGKILL, delay_ms)
}

#[test]
fn kill_9_mid_load_then_rerun_gives_exactly_1_to_n() {
    let root = tempfile::tempdir().unwrap();
    // Big enough that every store is mid-write at one of the kill points.
    let load = ["load", "--sizes", "1KiB", "--dataset-bytes", "24MiB"];
    let mut killed_mid_load = 0;
    for delay_ms in [150u64, 400, 700, 1100, 1600, 2300, 3200] {
        if sigkill_after(root.path(), &load, delay_ms) {
            killed_mid_load += 1;
        }
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
    assert_eq!(err.matches("ok  ").count(), 6, "{err}");
    assert!(err.contains("ids 1..=24576"), "{err}");
}

/// `fs` deletes its 1-file-per-blob tree in parallel threads. A drop killed at any
/// moment leaves either the whole dataset (it verifies) or none under its name; what a
/// cut-short drop left aside is deleted by the next load or drop.
#[test]
fn an_fs_drop_killed_at_any_moment_never_leaves_a_partial_dataset_under_its_name() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "fs",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "24MiB",
    ];
    let with = |cmd: &'static str| -> Vec<&str> { [&[cmd][..], &flags[..]].concat() };
    let dataset = root.path().join("data/fs/1KiB-x24576");
    let aside = root.path().join("data/fs/1KiB-x24576.removing");
    let mut cut_short = 0;
    for delay_ms in [0u64, 5, 20, 60, 150] {
        let load = run(root.path(), &with("load"));
        assert!(load.status.success(), "{}", stderr(&load));
        assert!(!aside.exists(), "the load deletes what a drop left aside");
        sigkill_after(root.path(), &with("drop"), delay_ms);
        if aside.exists() {
            cut_short += 1;
        }
        if dataset.exists() {
            let verify = run(root.path(), &with("verify"));
            assert!(
                verify.status.success(),
                "killed after {delay_ms} ms: {}",
                stderr(&verify)
            );
        }
    }
    eprintln!("{cut_short} of 5 drops were cut short mid-delete");
    let drop = run(root.path(), &with("drop"));
    assert!(drop.status.success(), "{}", stderr(&drop));
    let left = crate::common::files_under(&root.path().join("data/fs"));
    assert!(
        left.is_empty(),
        "files left after drop: {:?}",
        &left[..left.len().min(5)]
    );
    assert!(!aside.exists() && !dataset.exists());
}

/// SIGTERM (a CI timeout, a service manager) and SIGKILL at 12 moments each of a load
/// of every local store, SQLite's bulk mode included: each time the next `load`
/// resumes the dataset, or starts it again saying why, and it verifies.
#[test]
fn loads_stopped_by_sigterm_or_sigkill_at_24_moments_resume_or_restart_and_verify() {
    let root = tempfile::tempdir().unwrap();
    // 64 KiB blobs: a few hundred files for fs (ext4 slows down creating files where
    // many were just deleted, which this loop does 24 times), eight SQLite batches.
    let flags = ["--sizes", "64KiB", "--dataset-bytes", "32MiB"];
    let with = |cmd: &'static str| -> Vec<&str> { [&[cmd][..], &flags[..]].concat() };
    let delays = [5u64, 10, 20, 30, 45, 60, 80, 100, 130, 170, 220, 300];
    let (mut stopped, mut resumed, mut restarted) = (0, 0, 0);
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        for delay_ms in delays {
            if signal_after(root.path(), &with("load"), signal, delay_ms) {
                stopped += 1;
            }
            let load = run(root.path(), &with("load"));
            let err = stderr(&load);
            assert!(
                load.status.success(),
                "signal {signal} after {delay_ms} ms, then load: {err}"
            );
            resumed += err.matches(": resumed ").count();
            restarted += err.matches("loading it again from the start").count();
            let verify = run(root.path(), &with("verify"));
            let verified = stderr(&verify);
            assert!(
                verify.status.success(),
                "signal {signal} after {delay_ms} ms: {verified}"
            );
            assert_eq!(verified.matches("ok  ").count(), 6, "{verified}");
            let drop = run(root.path(), &with("drop"));
            assert!(drop.status.success(), "{}", stderr(&drop));
        }
    }
    eprintln!(
        "{stopped} of {} loads stopped mid-way; the next load resumed {resumed} datasets and started {restarted} again",
        2 * delays.len()
    );
    assert!(
        stopped >= 12,
        "the load finished too fast to interrupt ({stopped} stops)"
    );
    assert!(resumed > 0, "no stop left a dataset to resume");
}

/// A load killed between writing the fs store's first manifest and renaming it into place
/// leaves a directory holding only `manifest.json.tmp` (seen once in about 100 SIGKILLs
/// 80 ms into a load): nothing was loaded, so the next load starts it, never calling the
/// directory foreign.
#[test]
fn an_fs_dataset_killed_before_its_first_manifest_landed_is_loaded() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "fs",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "2MiB",
    ];
    let with = |cmd: &'static str| -> Vec<&str> { [&[cmd][..], &flags[..]].concat() };
    let dir = root.path().join("data/fs/64KiB-x32");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("manifest.json.tmp"), b"{\"seed\":").unwrap();
    let load = run(root.path(), &with("load"));
    assert!(load.status.success(), "{}", stderr(&load));
    assert!(dir.join("manifest.json").is_file());
    let verify = run(root.path(), &with("verify"));
    assert!(verify.status.success(), "{}", stderr(&verify));
    // Anything else in it is still not blobrace's to take over.
    let other = root.path().join("data/fs/64KiB-x64");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), b"mine").unwrap();
    let foreign = run(
        root.path(),
        &[
            "load",
            "--engines",
            "fs",
            "--sizes",
            "64KiB",
            "--dataset-bytes",
            "4MiB",
        ],
    );
    assert_eq!(foreign.status.code(), Some(2), "{}", stderr(&foreign));
    assert!(stderr(&foreign).contains("not a blobrace dataset"));
    assert!(other.join("notes.txt").is_file());
}

/// The schema is created one statement at a time, so a load killed 5 ms in (CI, once)
/// can leave an SQLite file holding only an empty `blobs` table: a load begun, which
/// the next `load` finishes. The same table holding a row, or any other table, is
/// someone else's database: refused, exit 2, left as it was.
#[test]
fn an_sqlite_file_killed_before_its_manifest_table_is_loaded() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "sqlite",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "1MiB",
    ];
    let with = |cmd: &'static str| -> Vec<&str> { [&[cmd][..], &flags[..]].concat() };
    let dir = root.path().join("data/sqlite");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("1KiB-x1024.sqlite");
    let table = "CREATE TABLE blobs (id bigint NOT NULL PRIMARY KEY, data blob NOT NULL)";
    crate::common::sql_exec(&crate::common::sqlite_url(&file), &[table]);
    let load = run(root.path(), &with("load"));
    assert!(load.status.success(), "{}", stderr(&load));
    let verify = run(root.path(), &with("verify"));
    assert!(verify.status.success(), "{}", stderr(&verify));

    for (name, statements) in [
        (
            "1KiB-x2048.sqlite",
            vec![table, "INSERT INTO blobs VALUES (7, x'00')"],
        ),
        (
            "1KiB-x4096.sqlite",
            vec![table, "CREATE TABLE notes (t text)"],
        ),
    ] {
        let other = dir.join(name);
        crate::common::sql_exec(&crate::common::sqlite_url(&other), &statements);
        let before = std::fs::read(&other).unwrap();
        let rows = name
            .trim_start_matches("1KiB-x")
            .trim_end_matches(".sqlite");
        let bytes = format!("{}KiB", rows);
        let foreign = run(
            root.path(),
            &[
                "load",
                "--engines",
                "sqlite",
                "--sizes",
                "1KiB",
                "--dataset-bytes",
                &bytes,
            ],
        );
        assert_eq!(foreign.status.code(), Some(2), "{}", stderr(&foreign));
        assert!(
            stderr(&foreign).contains("not a blobrace dataset"),
            "{}",
            stderr(&foreign)
        );
        assert_eq!(std::fs::read(&other).unwrap(), before, "{name} was changed");
    }
}

/// A file with SQLite's header that SQLite cannot read (what a bulk load killed
/// mid-write can leave) is never a dead end: `env` and `verify` say it is not
/// loaded, `load` starts it again saying why, and `drop` removes it.
#[test]
fn a_torn_sqlite_file_is_loaded_again_or_dropped() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "sqlite",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "4MiB",
    ];
    let with = |cmd: &'static str| -> Vec<&str> { [&[cmd][..], &flags[..]].concat() };
    let file = root.path().join("data/sqlite/1KiB-x4096.sqlite");
    let tear = || {
        // Page 1 past the 100-byte header: the schema's b-tree, garbage now.
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[100..4096].fill(0xA5);
        std::fs::write(&file, bytes).unwrap();
    };
    assert!(run(root.path(), &with("load")).status.success());
    tear();
    let verify = run(root.path(), &with("verify"));
    let err = stderr(&verify);
    assert!(!verify.status.success());
    assert!(
        err.contains("database disk image is malformed")
            && err.contains("`blobrace load` loads it again")
            && err.contains("`blobrace drop` removes it")
            && err.contains("not loaded"),
        "{err}"
    );
    let load = run(root.path(), &with("load"));
    let err = stderr(&load);
    assert!(load.status.success(), "{err}");
    assert!(err.contains("loading it again from the start"), "{err}");
    let verify = run(root.path(), &with("verify"));
    assert!(verify.status.success(), "{}", stderr(&verify));
    tear();
    let drop = run(root.path(), &with("drop"));
    assert!(drop.status.success(), "{}", stderr(&drop));
    assert!(!file.exists());
}

/// A process stopped inside a transaction in SQLite's rollback-journal mode (while
/// creating the file, or while switching its journal mode) leaves a hot `-journal`
/// beside it: SQLite must roll it back before anyone reads the file, and a read-only
/// connection cannot (SQLITE_READONLY_ROLLBACK, seen once in CI on a SIGTERM 10 ms
/// into a load). `verify` and `load` roll it back, and every row is as committed.
#[test]
fn an_sqlite_file_left_with_a_hot_journal_is_rolled_back_and_verifies() {
    use sea_orm::ConnectionTrait;
    let loaded = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "sqlite",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "1MiB",
    ];
    let with = |cmd: &'static str| -> Vec<&str> { [&[cmd][..], &flags[..]].concat() };
    let load = run(loaded.path(), &with("load"));
    assert!(load.status.success(), "{}", stderr(&load));
    let file = loaded.path().join("data/sqlite/1KiB-x1024.sqlite");

    // Copy the file and its journal while a transaction that overwrote every row
    // is open: the copies have a hot journal, and the file holds uncommitted pages
    // (a cache of two pages spills them).
    let stopped = tempfile::tempdir().unwrap();
    let dir = stopped.path().join("data/sqlite");
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("1KiB-x1024.sqlite");
    crate::common::block_on(async {
        let url = format!("sqlite://{}", file.display());
        let mut opts = sea_orm::ConnectOptions::new(url);
        opts.max_connections(1).sqlx_logging(false);
        let db = sea_orm::Database::connect(opts).await.unwrap();
        for statement in [
            "PRAGMA journal_mode = DELETE",
            "PRAGMA cache_size = 2",
            "BEGIN",
            "UPDATE blobs SET data = zeroblob(1024)",
        ] {
            db.execute_unprepared(statement).await.unwrap();
        }
        let journal = format!("{}-journal", file.display());
        assert!(std::fs::metadata(&journal).unwrap().len() > 0);
        std::fs::copy(&journal, format!("{}-journal", copy.display())).unwrap();
        std::fs::copy(&file, &copy).unwrap();
        db.execute_unprepared("ROLLBACK").await.unwrap();
        db.close().await.unwrap();
    });
    assert_ne!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&file).unwrap(),
        "the copy holds uncommitted pages"
    );

    let verify = run(stopped.path(), &with("verify"));
    assert!(verify.status.success(), "{}", stderr(&verify));
    assert!(
        stderr(&verify).contains("ids 1..=1024"),
        "{}",
        stderr(&verify)
    );
    let load = run(stopped.path(), &with("load"));
    let err = stderr(&load);
    assert!(load.status.success(), "{err}");
    assert!(
        err.contains("0 dataset(s) loaded, 1 already complete"),
        "{err}"
    );
}

/// Start `blobrace <args>` (its data and results under `root`, uncapped), wait for the
/// first line of its standard error holding `at`, send `signal`, and return what it
/// printed and its exit status; None where it finished before saying `at`.
fn stop_when(
    root: &std::path::Path,
    args: &[&str],
    at: &str,
    signal: i32,
) -> Option<(String, std::process::ExitStatus)> {
    use std::io::{BufRead, BufReader};
    let mut child = blobrace()
        .args(args)
        .args(["--cap", "none", "--cpus", "none", "--data-dir"])
        .arg(root.join("data"))
        .arg("--results-dir")
        .arg(root.join("results"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = String::new();
    let mut signalled = false;
    for line in lines.by_ref() {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.contains(at) {
            // SAFETY: a plain kill(2) of our own child, not reaped yet.
            assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
            signalled = true;
            break;
        }
    }
    for line in lines {
        said.push_str(&line.unwrap());
        said.push('\n');
    }
    let status = child.wait().unwrap();
    signalled.then_some((said, status))
}

/// A run stopped during its bulk loads, during a cold cell and during a steady cell, by
/// SIGKILL, SIGINT and SIGTERM, is continued by the same command each time: one run
/// directory, every cell measured once and kept from the part that measured it, one
/// report naming the parts; `--fresh` starts a new run, and other flags never continue it.
#[test]
fn a_run_stopped_at_three_moments_is_continued_and_every_cell_is_measured_once() {
    let root = tempfile::tempdir().unwrap();
    let measure = [
        "measure",
        "--engines",
        "sqlite,fs,floor",
        "--sizes",
        "1KiB,64KiB",
        "--dataset-bytes",
        "16MiB",
        "--cache",
        "both",
        "--warmup",
        "100ms",
        "--measure",
        "300ms",
    ];
    let saved = |root: &std::path::Path| -> Option<serde_json::Value> {
        let dir = std::fs::read_dir(root.join("results")).ok()?;
        let json = dir
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("results.json"))
            .find(|p| p.exists())?;
        Some(serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap())
    };
    // 1. Ctrl-C as the loads begin: what it says matches what is on disk. Each load is
    // saved as it ends, so whether the run has a results.json yet is a race with
    // SQLite's first load; either way the line says it truly.
    let (said, status) = stop_when(root.path(), &measure, "run: measuring", libc::SIGINT)
        .expect("the run said its plan");
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(said.contains("12 cell(s)"), "{said}");
    match saved(root.path()) {
        Some(_) => assert!(
            said.contains("interrupted by SIGINT: 0 of 12 cell(s) measured to their end and saved"),
            "{said}"
        ),
        None => assert!(
            said.contains("interrupted by SIGINT: nothing of this run was saved yet"),
            "{said}"
        ),
    }
    // 2. Killed outright during the bulk loads, just after one ended: that load is
    // saved (before its line is printed), the one under way is picked up by the next run.
    let (said, status) =
        stop_when(root.path(), &measure, "dataset /", libc::SIGKILL).expect("a load ended");
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{said}");
    let json = saved(root.path()).expect("the ended load saved the run");
    assert!(!json["loads"].as_array().unwrap().is_empty(), "{json}");
    // 3. During a cold cell: Ctrl-C says where the run stands and how to go on.
    let (said, status) = stop_when(
        root.path(),
        &measure,
        "[cell 3 of 12] fs.cold",
        libc::SIGINT,
    )
    .expect("the run reached its third cell");
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(said.contains("continuing run "), "{said}");
    assert!(
        said.contains("interrupted by SIGINT: 2 of 12 cell(s) measured to their end")
            && said.contains("The same command continues this run"),
        "{said}"
    );
    // 4. During a steady cell of the second size, by SIGTERM.
    let (said, status) = stop_when(
        root.path(),
        &measure,
        "[cell 8 of 12] sqlite.steady 64KiB",
        libc::SIGTERM,
    )
    .expect("the run reached its eighth cell");
    assert_eq!(status.code(), Some(143), "{said}");
    assert!(said.contains("continuing run "), "{said}");
    assert!(
        said.contains("2 measured by earlier parts, 10 to measure"),
        "{said}"
    );
    // Its first cell's time left comes from the cells the earlier parts measured, not
    // from the presets' range.
    let first_cell = said
        .lines()
        .find(|l| l.starts_with("[cell "))
        .unwrap_or_default();
    assert!(first_cell.contains("left (until"), "{first_cell}");
    // 5. Killed outright during a cold cell: no word, and still nothing lost.
    let (said, status) = stop_when(root.path(), &measure, "[cell 10 of 12]", libc::SIGKILL)
        .expect("the run reached its tenth cell");
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{said}");
    // The same command finishes it.
    let last = run(root.path(), &measure);
    let err = stderr(&last);
    assert!(last.status.success(), "{err}");
    assert!(
        err.contains("9 measured by earlier parts, 3 to measure"),
        "{err}"
    );
    assert_eq!(err.matches("[cell ").count(), 3, "{err}");
    let (dir, json) = crate::common::only_run(root.path());
    assert_eq!(json["complete"], true);
    let cells: std::collections::BTreeSet<String> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{} {} {}", r["engine"], r["size"], r["cache"]))
        .collect();
    assert_eq!(json["results"].as_array().unwrap().len(), 12, "{cells:?}");
    assert_eq!(cells.len(), 12, "every cell once: {cells:?}");
    assert_eq!(json["done_cells"].as_array().unwrap().len(), 12);
    let parts = json["parts"].as_array().unwrap();
    assert!(
        err.contains(&format!("the run's {} parts: ", parts.len())),
        "{err}"
    );
    // The parts stopped during the loads (1 saved, or 1 and 2) measured nothing.
    let loading = parts.len() - 4;
    assert!((1..=2).contains(&loading), "{parts:?}");
    let measured: Vec<u64> = parts
        .iter()
        .map(|p| p["cells_measured"].as_u64().unwrap())
        .collect();
    assert_eq!(measured[..loading], vec![0; loading], "{parts:?}");
    assert_eq!(measured[loading..], [2, 5, 2, 3], "{parts:?}");
    assert!(
        parts[loading - 1].get("ended").is_none(),
        "a SIGKILL says nothing"
    );
    let measuring = &parts[loading..];
    assert_eq!(measuring[0]["ended"], "interrupted by SIGINT");
    assert_eq!(measuring[1]["ended"], "interrupted by SIGTERM");
    assert!(
        measuring[2].get("ended").is_none(),
        "a SIGKILL says nothing"
    );
    assert_eq!(measuring[3]["ended"], "complete");
    // Each cell's result comes from the part that measured it to its end.
    for d in json["done_cells"].as_array().unwrap() {
        let part = d["part"].as_u64().unwrap();
        let r = json["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["engine"] == d["engine"]
                    && r["size_bytes"] == d["size"]
                    && r["cache"] == d["cache"]
            })
            .unwrap();
        let started = parts[part as usize]["started_at"].as_str().unwrap();
        assert!(r["started_at"].as_str().unwrap() >= started, "{r} {d}");
    }
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        page.contains("<h3>Parts</h3>") && page.contains("part 3, "),
        "the report names the parts"
    );
    // Finished: the same command starts a new run (--fresh and other flags: the unit
    // tests of `run::resume`).
    let again = run(root.path(), &measure);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        !stderr(&again).contains("continuing run"),
        "{}",
        stderr(&again)
    );
    let runs = std::fs::read_dir(root.path().join("results"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .count();
    assert_eq!(runs, 2);
}

/// A continued run loads only the datasets its cells left to measure read: stopped in
/// fs's cell after SQLite's was measured, both datasets gone (dropped, another disk),
/// the next part loads fs's and not SQLite's. (A full run continued for SQLite's two
/// 8 KiB cells loaded every store's 8 KiB dataset, 4 min 50 s of loads for nothing.)
#[test]
fn a_continued_run_loads_only_what_its_cells_left_read() {
    let root = tempfile::tempdir().unwrap();
    let measure = [
        "measure",
        "--engines",
        "sqlite,fs",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "8MiB",
        "--warmup",
        "100ms",
        "--measure",
        "300ms",
    ];
    let (said, _) = stop_when(root.path(), &measure, "[cell 2 of 2] fs", libc::SIGINT)
        .expect("the run reached fs's cell");
    assert!(
        said.contains("1 of 2 cell(s) measured to their end"),
        "{said}"
    );
    let data = root.path().join("data");
    std::fs::remove_file(data.join("sqlite/64KiB-x128.sqlite")).unwrap();
    std::fs::remove_dir_all(data.join("fs/64KiB-x128")).unwrap();
    let out = run(root.path(), &measure);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("continuing run ")
            && err.contains("1 measured by earlier parts, 1 to measure"),
        "{err}"
    );
    assert!(err.contains("1 dataset(s) to load"), "{err}");
    assert!(err.contains("fs/64KiB-x128: loaded"), "{err}");
    assert!(
        !err.contains("sqlite/64KiB-x128"),
        "SQLite's was not loaded: {err}"
    );
    assert!(!data.join("sqlite/64KiB-x128.sqlite").exists());
    let (_, json) = crate::common::only_run(root.path());
    assert_eq!(json["results"].as_array().unwrap().len(), 2);
}

/// A part that ends on an error of its own (here `--fail-fast` on a fetch that fails:
/// a blob file removed under fs) records how it ended, and the next part names it
/// instead of taking it for a kill.
#[test]
fn a_part_ended_by_an_error_is_named_by_the_next() {
    let root = tempfile::tempdir().unwrap();
    let flags = [
        "--engines",
        "fs,floor",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "1MiB",
    ];
    let loaded = run(root.path(), &[&["load"][..], &flags].concat());
    assert!(loaded.status.success(), "{}", stderr(&loaded));
    let blob = crate::common::files_under(&root.path().join("data/fs"))
        .into_iter()
        .find(|f| !f.ends_with(".json"))
        .unwrap();
    std::fs::remove_file(&blob).unwrap();
    let measure = [
        &["measure"][..],
        &flags,
        &["--warmup", "50ms", "--measure", "300ms", "--cache", "cold"],
    ]
    .concat();
    let first = run(root.path(), &[&measure[..], &["--fail-fast"]].concat());
    assert!(!first.status.success(), "{}", stderr(&first));
    let (_, json) = crate::common::only_run(root.path());
    let ended = json["parts"][0]["ended"].as_str().unwrap_or_default();
    assert!(
        ended.starts_with("ended by an error: "),
        "{}",
        json["parts"]
    );
    let next = run(root.path(), &measure);
    assert!(
        stderr(&next).contains("ended by an error: "),
        "{}",
        stderr(&next)
    );
}
