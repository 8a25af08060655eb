//! A network between the engines and their servers (`--network-rtt`): PostgreSQL's
//! engine fetches through Toxiproxy, the round trip recorded beside each result is
//! measured through it and holds the asked latency, the fetches pay it, and the proxy
//! is gone when the run ends, even by SIGKILL. Refusals are one line before any work.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{blobrace, only_run, run, server_url_or_skip, stderr};

fn args(url: &str) -> Vec<String> {
    [
        "measure",
        "--engines",
        "postgres-raw",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "8MiB",
        "--warmup",
        "100ms",
        "--postgres-url",
        url,
    ]
    .iter()
    .chain(&crate::common::ONE_STEADY_CLIENT)
    .map(|s| s.to_string())
    .collect()
}

/// toxiproxy-server processes whose parent is `pid`.
pub(crate) fn proxies_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some((comm, rest)) = stat.split_once(") ") else {
            continue;
        };
        let ppid = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if comm.contains("(toxiproxy-serv") && ppid == Some(pid) {
            found.push(child);
        }
    }
    found
}

#[test]
fn servers_fetched_through_a_round_trip_pay_it_and_the_proxy_dies_with_the_run() {
    let Some(url) = server_url_or_skip("postgres", "a network round trip") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let base = args(&url);
    let base: Vec<&str> = base.iter().map(String::as_str).collect();
    let out = run(
        root.path(),
        &[&base[..], &["--measure", "1s", "--network-rtt", "4ms"]].concat(),
    );
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("adding a round trip of 4 ms"), "{said}");
    let (dir, json) = only_run(root.path());
    assert_eq!(json["config"]["network_rtt"], "4ms");
    let proxied = &json["network"]["servers"][0];
    assert_eq!(proxied["server"], "postgres", "{json:#}");
    assert_eq!(
        proxied["upstream"].as_str().unwrap(),
        blobrace::deploy::network::host_port(&url).unwrap(),
        "{proxied}"
    );
    let r = &json["results"][0];
    // The round trip measured through the proxy holds the 4 ms asked (2 each way) and
    // every fetch pays at least it.
    let rt = r["round_trip"]["min_ns"].as_u64().unwrap();
    assert!(
        (4_000_000..40_000_000).contains(&rt),
        "round trip through the proxy: {rt} ns"
    );
    // One round trip, not two: the measure holds its connection, where a query through
    // sqlx's pool pays the release's ping too (8 ms and more here).
    let rt50 = r["round_trip"]["p50_ns"].as_u64().unwrap();
    assert!(rt50 < 6_000_000, "round trip p50 {rt50} ns for 4 ms asked");
    // The raw engine holds its connection too: each fetch pays the 4 ms once. Through
    // sqlx's pool it paid the release's ping as well (8 ms and more, until 2026-12-05).
    let p50 = r["measured"]["latency"]["p50_ns"].as_f64().unwrap();
    assert!(
        (4e6..7e6).contains(&p50),
        "fetch p50 {p50} ns: one 4 ms round trip"
    );
    let password = url.split_once("://").unwrap().1.split_once('@').unwrap().0;
    let password = password.split_once(':').unwrap().1;
    assert!(!json.to_string().contains(password), "no password recorded");
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        page.contains("id=verdict-network"),
        "the verdict says the network is the difference"
    );

    // Without it, the same cell on loopback: a round trip far below.
    let plain = tempfile::tempdir().unwrap();
    let out = run(plain.path(), &[&base[..], &["--measure", "300ms"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, json) = only_run(plain.path());
    assert!(json["network"].is_null());
    let rt = json["results"][0]["round_trip"]["p50_ns"].as_u64().unwrap();
    assert!(rt < 4_000_000, "loopback round trip {rt} ns");

    // Killed outright, the run takes its proxy with it.
    let killed = tempfile::tempdir().unwrap();
    let mut cmd = blobrace();
    cmd.args(&base)
        .args([
            "--measure",
            "60s",
            "--network-rtt",
            "1ms",
            "--cap",
            "none",
            "--cpus",
            "none",
        ])
        .arg("--data-dir")
        .arg(killed.path().join("data"))
        .arg("--results-dir")
        .arg(killed.path().join("results"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let proxy = crate::common::kill_once_ready(cmd, "no proxy started", |pid| {
        proxies_of(pid).first().copied()
    });
    let started = Instant::now();
    while std::path::Path::new(&format!("/proc/{proxy}")).exists()
        && !std::fs::read_to_string(format!("/proc/{proxy}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the proxy outlived its killed run"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_round_trip_that_cannot_be_had_is_one_line_before_any_work() {
    let root = tempfile::tempdir().unwrap();
    let floor = [
        "measure",
        "--engines",
        "floor",
        "--sizes",
        "1KiB",
        "--dataset-bytes",
        "1MiB",
    ];
    for bad in ["0.25ms", "1", "fast"] {
        let flag = format!("--network-rtt={bad}");
        let out = run(root.path(), &[&floor[..], &[flag.as_str()]].concat());
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{bad}: {said}");
        assert!(said.contains("it takes \"none\""), "{bad}: {said}");
    }
    // Without the proxy's program: said, with how to install it, and nothing loaded.
    let out = blobrace()
        .args(floor)
        .args(["--network-rtt", "1ms", "--cap", "none", "--cpus", "none"])
        .arg("--data-dir")
        .arg(root.path().join("data"))
        .arg("--results-dir")
        .arg(root.path().join("results"))
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("toxiproxy-server cannot run"), "{said}");
    assert!(said.contains("scripts/setup.sh installs it"), "{said}");
    assert!(!root.path().join("data").exists(), "nothing loaded");
}
