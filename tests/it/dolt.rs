//! Dolt through the MySQL-wire code it shares with MariaDB and MySQL: loaded in
//! batches and committed, verified byte-equal, measured cold, with its version and
//! Go's memory limit recorded. Needs the compose `dolt` service (skipped where absent,
//! a failure under BLOBRACE_REQUIRE_DOCKER=1).

use crate::common::{Servers, only_run, run, service_container, stderr, with_flags};
use blobrace::db::server::Server;

/// Whether the compose Dolt container answers on Go's pprof port (127.0.0.1:6060 inside
/// it): the offline stand-in starts `dolt --pprof-server sql-server`.
/// False where no Docker runs it (a Dolt reached by URL alone).
fn dolt_serves_pprof() -> bool {
    crate::common::running_container("dolt").is_some_and(|id| {
        std::process::Command::new("docker")
            .args(["exec", &id, "bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/6060"])
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// One value from a query in one of Dolt's databases (the test's own connection,
/// set up as blobrace's: Dolt 0.40 refuses sqlx's default `SET NAMES`).
fn query_i64(url: &str, database: &str, sql: &str) -> i64 {
    use sea_orm::{ConnectionTrait, Statement};
    crate::common::block_on(async {
        let dolt = Server::named("dolt").unwrap();
        let db = dolt.connect(url, Some(database)).await.unwrap();
        let row = db
            .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
            .await
            .unwrap()
            .unwrap();
        let n: i64 = row.try_get("", "n").unwrap();
        db.close().await.unwrap();
        n
    })
}

#[test]
fn dolt_loads_commits_verifies_and_measures_blobs_byte_equal() {
    // One test at a time: each load restarts the container (`restart_after_load`).
    let Some(dolt) = Servers::reach(&["dolt"], "the Dolt round trip") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    // An odd dataset size gives namespaces no other run uses.
    let base = [
        "--engines",
        "dolt,dolt-raw",
        "--sizes",
        "1KiB,4MiB",
        "--dataset-bytes",
        "9MiB",
    ];
    // From nothing, whatever an earlier failed run left.
    dolt.ok(root.path(), &[&["drop"][..], &base].concat());
    dolt.ok(root.path(), &[&["load"][..], &base].concat());
    let url = dolt.url("dolt");
    // Committed: Dolt's log has the load's commit, and nothing is left uncommitted.
    let db = "blobs_1kib_x9216";
    assert!(
        query_i64(url, db, "SELECT COUNT(*) AS n FROM dolt_log") >= 2,
        "the load's commit after the database's first"
    );
    assert_eq!(
        query_i64(url, db, "SELECT COUNT(*) AS n FROM dolt_status"),
        0,
        "no uncommitted change after a load"
    );
    assert_eq!(query_i64(url, db, "SELECT COUNT(*) AS n FROM blobs"), 9216);
    // A second load finds it loaded and writes nothing.
    let err = dolt.ok(root.path(), &[&["load"][..], &base].concat());
    assert_eq!(err.matches("already loaded").count(), 2, "{err}");
    let err = dolt.ok(root.path(), &[&["verify"][..], &base].concat());
    assert_eq!(err.matches("ok  ").count(), 2, "{err}");
    dolt.ok(
        root.path(),
        &[
            &["measure"][..],
            &base,
            &[
                "--warmup",
                "100ms",
                "--measure",
                "300ms",
                "--profile-fetches",
                "1s",
            ],
        ]
        .concat(),
    );
    let (run_dir, json) = only_run(root.path());
    // The server's own CPU profile over the client's seconds: taken wherever the Dolt
    // container answers on its pprof port (the stand-in does), else said why not.
    let pprof_served = dolt_serves_pprof();
    let profiles = json["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 4, "{profiles:?}");
    for p in profiles {
        let name = format!("{} {}", p["engine"], p["size"]);
        match (&p["server"], pprof_served) {
            (server, true) if server.is_object() => {
                let graph = server["flamegraph"].as_str().unwrap();
                let svg = std::fs::read_to_string(run_dir.join(graph)).unwrap();
                assert!(
                    svg.contains("<svg") && svg.contains("dolthub"),
                    "{name}: {graph}"
                );
                assert!(server["samples"].as_u64().unwrap() > 0, "{name}: {server}");
                assert!(
                    server["cpu_per_wall"].as_f64().unwrap() > 0.0,
                    "{name}: {server}"
                );
                let parts = server["parts"].as_array().unwrap();
                let total: f64 = parts.iter().map(|x| x["share"].as_f64().unwrap()).sum();
                assert!((total - 1.0).abs() < 1e-6, "{name}: {parts:?}");
                let storage = parts
                    .iter()
                    .find(|x| x["part"].as_str().unwrap().starts_with("storage"));
                assert!(
                    storage.unwrap()["share"].as_f64().unwrap() > 0.0,
                    "{name}: a fetch reads Dolt's chunks: {parts:?}"
                );
            }
            (_, served) => {
                assert!(
                    !served,
                    "{name}: the endpoint answers, the profile is missing: {p}"
                );
                let why = p["server_unavailable"].as_str().unwrap_or_default();
                assert!(why.contains("--pprof-server"), "{name}: {p}");
            }
        }
    }
    let page = std::fs::read_to_string(run_dir.join("index.html")).unwrap();
    assert!(
        page.contains("The server's own CPU profile"),
        "the report shows it"
    );
    // What each database takes on disk: its directory in the container, at least the
    // blobs' bytes (random bytes do not compress).
    let loads = json["loads"].as_array().unwrap();
    assert_eq!(loads.len(), 2, "{loads:?}");
    for l in loads {
        let disk = l["disk_bytes"].as_u64().unwrap_or_else(|| panic!("{l}"));
        let blobs = l["rows"].as_u64().unwrap() * l["size_bytes"].as_u64().unwrap();
        assert!(disk >= blobs, "{l}");
    }
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for r in results {
        let name = format!("{} {}", r["engine"], r["size"]);
        assert!(r["measured"]["count"].as_u64().unwrap() > 0, "{name}");
        let settings = &r["settings"];
        assert!(
            settings["dolt_version"]
                .as_str()
                .is_some_and(|v| !v.is_empty()),
            "{name}: {settings}"
        );
        assert!(settings["server_version"].is_string(), "{name}: {settings}");
        // The stand-in sets GOMEMLIMIT from its cap; an official image without it says
        // "unset". Either way it is recorded, never left out.
        let limit = settings["GOMEMLIMIT"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: {settings}"));
        assert!(
            limit == "unset" || limit.parse::<u64>().is_ok(),
            "{name}: {limit}"
        );
        let eviction = r["eviction"]["method"].as_str().unwrap();
        assert!(
            eviction.starts_with("restart container") && eviction.contains("/var/lib/dolt"),
            "{name}: {eviction}"
        );
        let c = &r["container"];
        assert!(
            c["after"]["cpu_time_ns"].as_u64() > c["before"]["cpu_time_ns"].as_u64(),
            "{name}: the server did work: {c}"
        );
    }
    let json_text = serde_json::to_string(&json).unwrap();
    let secret = url.split('@').next().unwrap().rsplit(':').next().unwrap();
    assert!(
        !json_text.contains(&format!(":{secret}@")),
        "results must not hold the password"
    );
    dolt.ok(root.path(), &[&["drop"][..], &base].concat());
}

#[test]
fn a_cap_dolt_cannot_load_32mib_blobs_under_is_refused_before_anything_changes() {
    // One test at a time: each load restarts the container (`restart_after_load`).
    let Some(dolt) = Servers::reach(&["dolt"], "Dolt's smallest cap") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let args = [
        "load",
        "--engines",
        "dolt-raw",
        "--sizes",
        "32MiB",
        "--dataset-bytes",
        "32MiB",
        // Measured: Dolt was OOM-killed on the first 32 MiB row under 512 MiB.
        "--cap",
        "512MiB",
    ];
    let out = dolt.run(root.path(), &args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("dolt needs at least 864MiB with blobs of 32MiB"),
        "{err}"
    );
    assert!(err.contains("raise --cap"), "the fix: {err}");
    assert!(
        !err.contains("set to the run's cap"),
        "nothing changed: {err}"
    );
}

#[test]
fn a_wrong_dolt_password_is_one_clear_error() {
    // One test at a time: each load restarts the container (`restart_after_load`).
    let Some(dolt) = Servers::reach(&["dolt"], "the Dolt wrong-password check") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let (user, host) = dolt.url("dolt").rsplit_once('@').unwrap();
    let user = user.rsplit_once(':').unwrap().0;
    let wrong = format!("{user}:definitely-wrong@{host}");
    let out = Servers::at("dolt", &wrong).run(
        root.path(),
        &[
            "load",
            "--engines",
            "dolt",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "64KiB",
        ],
    );
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot connect to dolt at mysql://root@"),
        "{err}"
    );
    assert_eq!(
        err.trim()
            .lines()
            .filter(|l| l.starts_with("Error: "))
            .count(),
        1,
        "{err}"
    );
    assert!(!err.contains("definitely-wrong"), "{err}");
}

#[test]
fn a_dolt_server_that_is_down_is_an_error_naming_the_url_and_the_fix() {
    let root = tempfile::tempdir().unwrap();
    let out = Servers::at("dolt", "mysql://root:s3cret@127.0.0.1:1").run(
        root.path(),
        &[
            "load",
            "--engines",
            "dolt-raw",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "64KiB",
        ],
    );
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot connect to dolt at mysql://root@127.0.0.1:1"),
        "{err}"
    );
    assert!(err.contains("scripts/servers.sh up"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
}

#[test]
fn mysql_without_its_image_is_skipped_or_refused_saying_how_to_get_it() {
    // No MySQL where its image cannot be pulled: the default list skips it with the
    // reason; asking for it by name is that error.
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "load",
            "--engines",
            "mysql",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "64KiB",
            "--mysql-url",
            "mysql://root:pw@127.0.0.1:1",
        ],
    );
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(err.contains("docker pull mysql:8.4"), "{err}");
}

/// SIGTERM and SIGKILL at 5 moments each of a load into Dolt, whose rows sit in its
/// working set until the load commits: each time the next `load` resumes (or starts
/// afresh), commits, and every row verifies, 1 to N exactly.
#[test]
fn dolt_loads_stopped_by_sigterm_or_sigkill_at_10_moments_resume_to_exactly_1_to_n() {
    // One test at a time: each load restarts the container (`restart_after_load`).
    let Some(dolt) = Servers::reach(&["dolt"], "the Dolt resume test") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    // 64 KiB blobs, an odd dataset size no other test uses: 1597 rows, 100 MiB, a
    // second or two of loading in 25 batches.
    let base = [
        "--engines",
        "dolt",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "102208KiB",
    ];
    let url = dolt.url("dolt");
    let with = |cmd: &'static str| {
        let mut all = vec![cmd];
        all.extend(base);
        all.extend(["--dolt-url", url]);
        all
    };
    let (mut stopped, mut resumed) = (0, 0);
    // Moments by the rows in Dolt's working set, read while the load goes, not by time:
    // a load's pace beside other tests moves, its rows do not.
    let moments: Vec<i64> = (1..=5).map(|k| 1597 * k / 6).collect();
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        for &at in &moments {
            dolt.ok(root.path(), &with_flags("drop", &base, &[]));
            let namespace = "blobs_64kib_x1597";
            let load = with("load");
            if crate::common::signal_at_rows(
                root.path(),
                &load,
                signal,
                ("dolt", url),
                namespace,
                at,
            ) {
                stopped += 1;
            }
            let finish = run(root.path(), &with("load"));
            let err = stderr(&finish);
            assert!(
                finish.status.success(),
                "signal {signal} at {at} rows, then load: {err}"
            );
            resumed += err.matches(": resumed ").count();
            let verify = run(root.path(), &with("verify"));
            let verified = stderr(&verify);
            assert!(
                verify.status.success(),
                "signal {signal} at {at} rows: {verified}"
            );
            assert!(verified.contains("ids 1..=1597"), "{verified}");
            assert_eq!(
                query_i64(
                    url,
                    "blobs_64kib_x1597",
                    "SELECT COUNT(*) AS n FROM dolt_status"
                ),
                0,
                "signal {signal} at {at} rows: committed, nothing left in the working set"
            );
        }
    }
    eprintln!(
        "{stopped} of {} Dolt loads stopped mid-way; the next load resumed {resumed}",
        2 * moments.len()
    );
    assert!(
        stopped >= 5,
        "the load finished too fast to interrupt ({stopped} stops)"
    );
    // A run that starts while Dolt's container restarts (another run's load or cold
    // start; Docker's proxy accepts on the port meanwhile, and hangs up) waits for it.
    // Stopped first, then started a second after the run began: with `docker restart`
    // alone the run sometimes connected after Dolt already answered (health still
    // "starting"), and had nothing to wait for.
    let id = service_container("dolt");
    let docker = |verb: &str| {
        std::process::Command::new("docker")
            .args([verb, &id])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap()
    };
    assert!(docker("stop").success());
    let verify = {
        let args: Vec<String> = with("verify").into_iter().map(String::from).collect();
        let root = root.path().to_path_buf();
        std::thread::spawn(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run(&root, &args)
        })
    };
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert!(docker("start").success());
    let verify = verify.join().unwrap();
    let verified = stderr(&verify);
    assert!(
        verify.status.success(),
        "verify during a restart: {verified}"
    );
    assert!(
        verified.contains("waiting for dolt: its container is starting"),
        "{verified}"
    );
    dolt.ok(root.path(), &with_flags("drop", &base, &[]));
}
