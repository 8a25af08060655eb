//! A server blobrace does not manage (`db::server::place`): a PostgreSQL started by
//! hand outside compose, from the compose server's own image, reached through a port
//! it publishes and through its address behind Docker's bridge (its own network
//! namespace, a veth pair: not loopback's round trip). Its results claim no cap, say
//! their cold start only opened a connection, have no disk bytes, and carry the round
//! trip; the compose container is left alone. And a SeaweedFS started the same way:
//! its buckets made and dropped through S3, as no `weed shell` can be run in it.
//! Skipped (the reason printed) without the compose servers; a failure when
//! BLOBRACE_REQUIRE_DOCKER=1, as CI sets it.

use crate::common::{docker, run, server_url_or_skip, service_container, stderr};
use serde_json::Value;

const PASSWORD: &str = "remote-secret";

/// A server's container of its own, one port published on loopback, removed with its
/// data when the test ends however it ends.
struct HandStarted {
    name: String,
}

impl HandStarted {
    /// `docker run -d` with `port` published on 127.0.0.1 and `run` after it (options,
    /// the image, its command), named for `what`.
    fn run(what: &str, port: u16, run: &[&str]) -> HandStarted {
        let name = format!("blobrace-remote-{what}-test-{}", std::process::id());
        let _ = std::process::Command::new("docker")
            .args(["rm", "-f", "-v", &name])
            .output();
        let published = format!("127.0.0.1::{port}");
        let mut args = vec!["run", "-d", "--name", &name, "-p", &published];
        args.extend(run);
        docker(&args);
        HandStarted { name }
    }

    /// The port on 127.0.0.1 its `port` is published on.
    fn published_port(&self, port: u16) -> String {
        let out = docker(&["port", &self.name, &format!("{port}/tcp")]);
        out.lines()
            .next()
            .unwrap()
            .rsplit(':')
            .next()
            .unwrap()
            .to_string()
    }

    /// A PostgreSQL from `image`, once it answers.
    fn postgres(image: &str) -> HandStarted {
        let started = HandStarted::run(
            "postgres",
            5432,
            &[
                "-e",
                "POSTGRES_USER=blobrace",
                "-e",
                &format!("POSTGRES_PASSWORD={PASSWORD}"),
                "-e",
                "POSTGRES_DB=blobrace",
                image,
                "postgres",
            ],
        );
        for _ in 0..240 {
            let ready = std::process::Command::new("docker")
                .args([
                    "exec",
                    &started.name,
                    "pg_isready",
                    "-h",
                    "127.0.0.1",
                    "-U",
                    "blobrace",
                ])
                .output()
                .is_ok_and(|o| o.status.success());
            if ready {
                // The image's entry point restarts the server once after initdb.
                std::thread::sleep(std::time::Duration::from_secs(2));
                return started;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        panic!("the hand-started PostgreSQL is not ready after 120 s");
    }

    /// Its URL through the port published on 127.0.0.1.
    fn published_url(&self) -> String {
        let port = self.published_port(5432);
        format!("postgres://blobrace:{PASSWORD}@127.0.0.1:{port}/blobrace")
    }

    /// Its URL at its address on Docker's bridge.
    fn bridge_url(&self) -> String {
        let ip = docker(&[
            "inspect",
            "-f",
            "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
            &self.name,
        ]);
        format!("postgres://blobrace:{PASSWORD}@{ip}:5432/blobrace")
    }
}

impl Drop for HandStarted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("docker")
            .args(["rm", "-f", "-v", &self.name])
            .output();
    }
}

fn started_at(container: &str) -> String {
    docker(&["inspect", "-f", "{{.State.StartedAt}}", container])
}

/// Measure postgres-raw at `url` in `cache` (cold, steady, both); the run's results.
fn measure(root: &std::path::Path, url: &str, cache: &str) -> Value {
    let out = run(
        root,
        &[
            "measure",
            "--engines",
            "postgres-raw",
            "--sizes",
            "64KiB",
            "--dataset-bytes",
            "4MiB",
            "--warmup",
            "100ms",
            "--measure",
            "300ms",
            "--cache",
            cache,
            "--steady-limit",
            "5s",
            "--postgres-url",
            url,
        ],
    );
    let text = stderr(&out);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains(PASSWORD), "the password was printed: {text}");
    let (_, results) = crate::common::only_run(root);
    results
}

fn assert_remote(results: &Value, shown: &str) {
    let measured = results["results"].as_array().unwrap();
    assert_eq!(measured.len(), 2, "cold and steady");
    for r in measured {
        let remote = r["remote"].as_str().expect("recorded as remote");
        assert!(remote.starts_with(shown), "{remote}");
        assert!(remote.contains("is not the compose container"), "{remote}");
        assert!(r["cap"].is_null(), "no cap claimed: {}", r["cap"]);
        assert_eq!(r["regime"]["verdict"], "unknown");
        assert_eq!(r["regime"]["basis"], "memory not controlled (remote)");
        assert!(
            r["eviction"]["method"]
                .as_str()
                .unwrap()
                .starts_with("not controlled (remote server): a fresh connection only"),
            "{}",
            r["eviction"]["method"]
        );
        assert!(r["measured"]["disk_bytes_per_fetch"].is_null());
        assert!(
            r["disk_counter"].as_str().unwrap().contains("not seen"),
            "{}",
            r["disk_counter"]
        );
        assert!(r["container"].is_null());
        let rt = &r["round_trip"];
        assert_eq!(rt["query"], "SELECT 1");
        let (min, p50, p99) = (
            rt["min_ns"].as_u64().unwrap(),
            rt["p50_ns"].as_u64().unwrap(),
            rt["p99_ns"].as_u64().unwrap(),
        );
        assert!(rt["count"].as_u64().unwrap() > 0);
        assert!(0 < min && min <= p50 && p50 <= p99, "{rt}");
        // A round trip is part of every fetch, so no fetch beats the fastest one. Not its
        // median: the round trip is timed in 2 s before the cell, and on a busy machine
        // (CI runs three tests at once on 2 cores) those 2 s can queue every query while
        // the cell's minutes do not (a 64 KiB fetch's p50 fell below a quarter of it).
        assert!(
            r["measured"]["latency"]["p50_ns"].as_u64().unwrap() > min / 2,
            "{r}"
        );
    }
}

#[test]
fn a_server_started_by_hand_is_measured_as_remote_and_the_compose_one_is_left_alone() {
    let Some(compose_url) = server_url_or_skip("postgres", "remote servers") else {
        return;
    };
    let compose = service_container("postgres");
    let image = docker(&["inspect", "-f", "{{.Config.Image}}", &compose]);
    let hand = HandStarted::postgres(&image);
    let compose_started = started_at(&compose);

    // Through the port it publishes on loopback.
    let url = hand.published_url();
    let root = tempfile::tempdir().unwrap();
    let results = measure(root.path(), &url, "both");
    let shown = url.replace(&format!(":{PASSWORD}@"), "@");
    assert_remote(&results, &shown);
    let (dir, _) = crate::common::only_run(root.path());
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        page.contains("<b>remote server</b>"),
        "the yellow box flags it"
    );
    assert!(page.contains("not controlled (remote)"));
    assert!(!page.contains(PASSWORD));
    // A cold start of a remote server restarted nothing of compose's.
    assert_eq!(started_at(&compose), compose_started);

    // Through its address behind the bridge (a veth pair, its own namespace).
    let url = hand.bridge_url();
    let root = tempfile::tempdir().unwrap();
    let results = measure(root.path(), &url, "both");
    assert_remote(&results, &url.replace(&format!(":{PASSWORD}@"), "@"));
    assert_eq!(started_at(&compose), compose_started);

    // `blobrace env` says the same.
    let out = crate::common::blobrace()
        .args([
            "env",
            "--sizes",
            "1KiB",
            "--engines",
            "postgres-raw",
            "--data-dir",
        ])
        .arg(root.path())
        .args(["--postgres-url", &url])
        .output()
        .unwrap();
    let env = crate::common::env_json(&out);
    let postgres = env["servers"]["postgres"].as_str().unwrap();
    assert!(postgres.starts_with("not controlled: remote"), "{postgres}");

    // The compose server's URL is the compose container: capped, no remote note,
    // its round trip measured all the same.
    let root = tempfile::tempdir().unwrap();
    let results = measure(root.path(), &compose_url, "steady");
    let r = &results["results"][0];
    assert!(r["remote"].is_null(), "{}", r["remote"]);
    assert!(
        r["cap"]["memory_limit_bytes"].as_u64().is_some(),
        "{}",
        r["cap"]
    );
    assert!(r["round_trip"]["p50_ns"].as_u64().unwrap() > 0);
}

#[test]
fn a_remote_url_that_does_not_answer_is_one_line_naming_it_without_its_password() {
    if server_url_or_skip("postgres", "an unanswering remote URL").is_none() {
        return;
    }
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://blobrace:{PASSWORD}@127.0.0.1:{port}/blobrace");
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "measure",
            "--engines",
            "postgres-raw",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "1MiB",
            "--postgres-url",
            &url,
        ],
    );
    assert!(!out.status.success());
    let text = stderr(&out);
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("Error")).collect();
    assert_eq!(errors.len(), 1, "{text}");
    assert!(
        errors[0].contains(&format!("postgres://blobrace@127.0.0.1:{port}/blobrace")),
        "{text}"
    );
    assert!(errors[0].contains("does not manage"), "{text}");
    assert!(!text.contains(PASSWORD), "{text}");
}

/// The S3 identity's key of the hand-started SeaweedFS (its secret is PASSWORD).
const S3_KEY: &str = "remotekey";

impl HandStarted {
    /// A SeaweedFS from the compose store's image and entry point, once it answers: the
    /// S3 store blobrace does not manage, as a cluster's pod or another host's store is.
    fn seaweedfs(image: &str) -> HandStarted {
        let entrypoint = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/compose/seaweedfs/entrypoint.sh"
        );
        let started = HandStarted::run(
            "s3",
            8333,
            &[
                "-e",
                &format!("SEAWEEDFS_ACCESS_KEY={S3_KEY}"),
                "-e",
                &format!("SEAWEEDFS_SECRET_KEY={PASSWORD}"),
                "-v",
                &format!("{entrypoint}:/blobrace/entrypoint.sh:ro"),
                "--entrypoint",
                "/bin/sh",
                image,
                "/blobrace/entrypoint.sh",
            ],
        );
        for _ in 0..240 {
            if started.buckets().is_some() {
                return started;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        panic!("the hand-started SeaweedFS is not ready after 120 s");
    }

    fn s3_url(&self) -> String {
        let port = self.published_port(8333);
        format!("s3://{S3_KEY}:{PASSWORD}@127.0.0.1:{port}")
    }

    /// Its buckets and collections as its own shell lists them; None until it answers.
    fn buckets(&self) -> Option<String> {
        let out = std::process::Command::new("docker")
            .args(["exec", &self.name, "sh", "-c"])
            .arg("wget -q -O /dev/null http://127.0.0.1:8333/healthz && printf 's3.bucket.list\\ncollection.list\\n' | weed shell 2>&1")
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.success() && text.contains("collections")).then_some(text)
    }
}

#[test]
fn an_s3_store_blobrace_does_not_manage_is_loaded_measured_and_dropped_through_s3() {
    if server_url_or_skip("seaweedfs", "a remote S3 store").is_none() {
        return;
    }
    let compose = service_container("seaweedfs");
    let image = docker(&["inspect", "-f", "{{.Config.Image}}", &compose]);
    let store = HandStarted::seaweedfs(&image);
    let url = store.s3_url();
    let bucket = "blobs-64kib-x64";
    /// `command` on the test's one dataset, through the store at `url`.
    fn on_dataset<'a>(command: &'a str, url: &'a str) -> Vec<&'a str> {
        vec![
            command,
            "--engines",
            "seaweedfs",
            "--sizes",
            "64KiB",
            "--dataset-bytes",
            "4MiB",
            "--seaweedfs-url",
            url,
        ]
    }
    let root = tempfile::tempdir().unwrap();
    let mut args = on_dataset("measure", &url);
    args.extend(["--warmup", "100ms", "--measure", "300ms", "--cache", "cold"]);
    let out = run(root.path(), &args);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains(PASSWORD), "the secret was printed: {said}");
    // The bucket was made through S3 and is a collection of its own, as the shell makes
    // it for the compose store.
    let listed = store.buckets().unwrap();
    assert!(
        listed.contains(&format!("collection:\"{bucket}\"")),
        "{listed}"
    );
    let (_, results) = crate::common::only_run(root.path());
    let r = &results["results"][0];
    assert!(
        r["remote"]
            .as_str()
            .unwrap()
            .contains("s3://remotekey@127.0.0.1:"),
        "{}",
        r["remote"]
    );
    assert_eq!(
        r["measured"]["count"].as_u64().map(|n| n > 0),
        Some(true),
        "{r}"
    );
    assert!(
        r["dataset"]["location"].as_str().unwrap().ends_with(bucket),
        "{}",
        r["dataset"]
    );
    // Not in a pod: no cap claimed, no regime judged, no cold start but a connection.
    assert!(r["cap"].is_null(), "{}", r["cap"]);
    assert_eq!(r["regime"]["basis"], "memory not controlled (remote)");
    let evicted = r["eviction"]["method"].as_str().unwrap();
    assert!(
        evicted.starts_with("not controlled (remote server): a fresh connection only"),
        "{evicted}"
    );
    let version = r["settings"]["server_version"].as_str().unwrap();
    assert!(
        version.starts_with("unavailable (a remote store"),
        "{version}"
    );

    // A wrong secret is one error naming the store, without the secret.
    let wrong = url.replace(PASSWORD, "not-the-secret");
    let out = run(root.path(), &on_dataset("verify", &wrong));
    let said = stderr(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("refused the credentials"), "{said}");
    assert!(said.contains("127.0.0.1:"), "{said}");
    assert!(!said.contains("not-the-secret"), "{said}");

    // The loaded bucket read back through the right secret; `blobrace drop` empties it
    // and deletes it (S3 deletes only empty buckets), its collection with it.
    let out = run(root.path(), &on_dataset("verify", &url));
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("verified"), "{said}");
    let out = run(root.path(), &on_dataset("drop", &url));
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("1 dataset(s) removed"), "{said}");
    let listed = store.buckets().unwrap();
    assert!(!listed.contains(bucket), "{listed}");
}
