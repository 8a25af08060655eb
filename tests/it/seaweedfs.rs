//! The SeaweedFS object store through its S3 gateway: loaded, verified byte-equal and
//! measured cold at 1 KiB and 4 MiB; a load killed with SIGKILL resumed and verified;
//! wrong credentials and a store that does not answer said in one line naming the
//! store and the fix. Needs the compose `seaweedfs` service (skipped where absent, a
//! failure under BLOBRACE_REQUIRE_DOCKER=1).

use crate::common::{BringBack, Servers, docker, only_run, service_container, stderr};

#[test]
fn seaweedfs_loads_verifies_and_measures_objects_byte_equal() {
    // One test at a time: a cold measurement restarts the store's container.
    let Some(weed) = Servers::reach(&["seaweedfs"], "the SeaweedFS round trip") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    // An odd dataset size gives buckets no other run uses.
    let base = [
        "--engines",
        "seaweedfs",
        "--sizes",
        "1KiB,4MiB",
        "--dataset-bytes",
        "9MiB",
    ];
    weed.ok(root.path(), &[&["drop"][..], &base].concat());
    let err = weed.ok(root.path(), &[&["load"][..], &base].concat());
    assert_eq!(err.matches(": loaded ").count(), 2, "{err}");
    // A bucket takes one volume slot while it fits one volume (1 GiB): at seven at once,
    // as SeaweedFS grows a collection by default, the store's 256 slots held 36 buckets
    // and CI's 38th bucket failed its first PUT with a bare 500.
    let volumes = docker(&[
        "exec",
        &service_container("seaweedfs"),
        "sh",
        "-c",
        "ls /data | grep -c '^blobs-1kib-x9216_.*[.]dat$' || true",
    ]);
    assert_eq!(volumes, "1", "volume files of the 1 KiB bucket");
    // A second load finds both loaded and writes nothing.
    let err = weed.ok(root.path(), &[&["load"][..], &base].concat());
    assert_eq!(err.matches("already loaded").count(), 2, "{err}");
    // Every object read back through S3 and checked against its seed.
    let err = weed.ok(root.path(), &[&["verify"][..], &base].concat());
    assert_eq!(err.matches("ok  ").count(), 2, "{err}");
    // Beside the floor of the same run, as the report sets them side by side.
    let measure = weed.run(
        root.path(),
        &[
            "measure",
            "--engines",
            "seaweedfs,floor",
            "--sizes",
            "1KiB,4MiB",
            "--dataset-bytes",
            "9MiB",
            "--warmup",
            "100ms",
            "--measure",
            "300ms",
        ],
    );
    let measured = stderr(&measure);
    assert!(measure.status.success(), "{measured}");
    let (run_dir, json) = only_run(root.path());
    let page = std::fs::read_to_string(run_dir.join("index.html")).unwrap();
    assert!(
        page.contains("Database or object store?") && page.contains("the floor"),
        "the report's object store line, with its ratio to the floor"
    );
    let results: Vec<&serde_json::Value> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["engine"] == "seaweedfs")
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    for r in results {
        let who = format!("{} {}", r["engine"], r["size"]);
        assert!(r["measured"]["count"].as_u64().unwrap() > 0, "{who}");
        // Cold: the container restarted and its volume files dropped from the page
        // cache; its processes' reads counted.
        assert!(
            r["eviction"]["method"]
                .as_str()
                .unwrap()
                .contains("restart container"),
            "{who}"
        );
        assert!(
            !r["measured"]["disk_bytes_per_fetch"].is_null(),
            "{who}: {}",
            r["disk_counter"]
        );
        let version = r["settings"]["server_version"].as_str().unwrap();
        assert!(
            version.contains("version"),
            "{who}: the store's own version: {version}"
        );
    }
    // 4 MiB objects streamed: the first body chunk before the end.
    let first = json["first_bytes"].as_array().unwrap();
    assert_eq!(first.len(), 2, "{first:?}\n{measured}");
    for f in first {
        let m = &f["measured"];
        assert!(
            m["first_p50_ns"].as_u64().unwrap() < m["whole_p50_ns"].as_u64().unwrap(),
            "{f}"
        );
    }
    for l in json["loads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["store"] == "seaweedfs")
    {
        // Its bucket's volume files: at least the data (9 KiB blobs of 1 KiB, two of 4 MiB).
        let bytes = l["disk_bytes"].as_u64().unwrap_or(0);
        assert!(bytes >= 8 << 20, "{l}");
    }
    weed.ok(root.path(), &[&["drop"][..], &base].concat());
}

#[test]
fn a_seaweedfs_load_killed_outright_resumes_and_every_object_verifies() {
    // One test at a time: a cold measurement restarts the store's container.
    let Some(weed) = Servers::reach(&["seaweedfs"], "the SeaweedFS killed load") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let base = [
        "--engines",
        "seaweedfs",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "41MiB",
    ];
    weed.ok(root.path(), &[&["drop"][..], &base].concat());
    // Killed once its first progress line is out: a line comes every 5 s and counts
    // rows already PUT and in the manifest's resume point (a fixed delay raced the
    // store's speed: at 2 MB/s in CI, 6 s could pass before the first batch was in).
    let mut child = crate::common::blobrace()
        .args(weed.args(&[&["load"][..], &base].concat()))
        .args(["--cap", "none", "--cpus", "none", "--data-dir"])
        .arg(root.path().join("data"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr_lines =
        std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    let mut progressed = false;
    for line in stderr_lines {
        if line.unwrap().starts_with("load seaweedfs 1KiB: ") {
            progressed = true;
            break;
        }
    }
    assert!(progressed, "the load ended before it showed progress");
    // SAFETY: a plain kill(2) of our own child, which has not been reaped yet.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGKILL) }, 0);
    child.wait().unwrap();
    let err = weed.ok(root.path(), &[&["load"][..], &base].concat());
    assert!(
        err.contains(": resumed "),
        "a partial load goes on where it stopped: {err}"
    );
    let err = weed.ok(root.path(), &[&["verify"][..], &base].concat());
    assert!(err.contains("ok  "), "{err}");
    weed.ok(root.path(), &[&["drop"][..], &base].concat());
}

#[test]
fn wrong_credentials_and_a_store_that_does_not_answer_are_said_with_the_fix() {
    // One test at a time: a cold measurement restarts the store's container.
    let Some(weed) = Servers::reach(&["seaweedfs"], "SeaweedFS's bad inputs") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let base = [
        "--engines",
        "seaweedfs",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "5MiB",
    ];
    let (credentials, address) = weed.url("seaweedfs").rsplit_once('@').unwrap();
    let key = credentials
        .trim_start_matches("s3://")
        .split(':')
        .next()
        .unwrap();
    let wrong = format!("s3://{key}:not-the-secret@{address}");
    let load = Servers::at("seaweedfs", &wrong).run(root.path(), &[&["load"][..], &base].concat());
    let err = stderr(&load);
    assert!(!load.status.success(), "{err}");
    assert!(
        err.contains("seaweedfs") && err.contains("refused the credentials"),
        "{err}"
    );
    assert!(
        !err.contains("not-the-secret"),
        "the secret is never printed: {err}"
    );
    let nowhere = format!("s3://{key}:secret@127.0.0.1:9");
    let load =
        Servers::at("seaweedfs", &nowhere).run(root.path(), &[&["load"][..], &base].concat());
    let err = stderr(&load);
    assert!(!load.status.success(), "{err}");
    assert!(
        err.contains("seaweedfs") && err.contains("127.0.0.1:9"),
        "{err}"
    );
    assert!(err.contains("nothing answers"), "{err}");
}

#[test]
fn the_store_killed_mid_measurement_fails_its_step_and_the_floor_is_kept() {
    // One test at a time: a cold measurement restarts the store's container.
    let Some(weed) = Servers::reach(&["seaweedfs"], "the SeaweedFS killed mid-measurement") else {
        return;
    };
    let _back = BringBack("seaweedfs");
    let root = tempfile::tempdir().unwrap();
    let base = [
        "--engines",
        "floor,seaweedfs",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "6MiB",
    ];
    weed.ok(root.path(), &[&["load"][..], &base].concat());
    let store = service_container("seaweedfs");
    let mut child = crate::common::blobrace()
        .args(
            weed.args(
                &[
                    &["measure"][..],
                    &base,
                    &["--warmup", "1s", "--measure", "8s"],
                ]
                .concat(),
            ),
        )
        .args(["--cap", "none", "--cpus", "none", "--data-dir"])
        .arg(root.path().join("data"))
        .arg("--results-dir")
        .arg(root.path().join("results"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its cold start restarts the store and waits until it serves the dataset again,
    // then says so: kill it 2.5 s later, inside the 1 s warm-up + 8 s measurement.
    let (lines, said) = std::sync::mpsc::channel();
    let reader = std::io::BufReader::new(child.stderr.take().unwrap());
    let collected = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufRead::lines(reader) {
            let line = line.unwrap();
            if line.starts_with("seaweedfs 64KiB: server started cold in ") {
                let _ = lines.send(());
            }
            all += &line;
            all += "\n";
        }
        all
    });
    let cold = said.recv_timeout(std::time::Duration::from_secs(180));
    if cold.is_ok() {
        std::thread::sleep(std::time::Duration::from_millis(2500));
        docker(&["kill", &store]);
    }
    let status = child.wait().unwrap();
    let err = collected.join().unwrap();
    assert!(cold.is_ok(), "seaweedfs was never started cold: {err}");
    assert!(!status.success(), "a failed engine fails the run: {err}");
    assert!(
        err.contains("measure of seaweedfs at 64KiB failed")
            && err.contains("is not running")
            && err.contains("1 step(s) failed"),
        "one line names the store and what to look at: {err}"
    );
    let failure = err
        .lines()
        .find(|l| l.starts_with("error: measure of seaweedfs"))
        .unwrap();
    assert!(failure.len() < 600, "one readable line: {failure}");
    let (dir, json) = only_run(root.path());
    assert_eq!(json["complete"], true, "the run went on to its end");
    let failures = json["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(
        (&failures[0]["stage"], &failures[0]["who"]),
        (&"measure".into(), &"seaweedfs".into())
    );
    let measured: Vec<&str> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["measured"]["count"].as_u64() > Some(0))
        .map(|r| r["engine"].as_str().unwrap())
        .collect();
    assert_eq!(measured, ["floor"], "what was measured before it is kept");
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(page.contains("<b>Failed</b>: measure of seaweedfs at 64KiB"));
}
