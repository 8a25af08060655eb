//! PostgreSQL and MariaDB engines. Without reachable servers the default engine
//! list skips them with the reason; the round trips need the compose servers
//! (skipped where absent, a failure under BLOBRACE_REQUIRE_DOCKER=1).

mod common;

use std::collections::HashMap;

use common::{docker_required, only_run, run, stderr};

/// Server URLs from BLOBRACE_*_URL, else from compose/.env, as `blobrace` builds them.
fn server_urls() -> Option<(String, String)> {
    let env: HashMap<String, String> = std::fs::read_to_string(
        std::env::var("BLOBRACE_COMPOSE_ENV").unwrap_or_else(|_| "compose/.env".into()),
    )
    .unwrap_or_default()
    .lines()
    .filter_map(|l| l.split_once('='))
    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
    .collect();
    let pg = std::env::var("BLOBRACE_POSTGRES_URL").ok().or_else(|| {
        env.get("POSTGRES_PASSWORD")
            .map(|pw| format!("postgres://blobrace:{pw}@127.0.0.1:15432/blobrace"))
    })?;
    let maria = std::env::var("BLOBRACE_MARIADB_URL").ok().or_else(|| {
        env.get("MARIADB_ROOT_PASSWORD")
            .map(|pw| format!("mysql://root:{pw}@127.0.0.1:13306"))
    })?;
    Some((pg, maria))
}

fn with_servers(args: &[&str], urls: &(String, String)) -> Vec<String> {
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    all.extend([
        "--postgres-url".into(),
        urls.0.clone(),
        "--mariadb-url".into(),
        urls.1.clone(),
    ]);
    all
}

fn run_s(root: &std::path::Path, args: &[String]) -> std::process::Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run(root, &refs)
}

#[test]
fn default_engines_skip_unreachable_servers_with_the_reason() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "measure",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "256KiB",
            "--warmup",
            "50ms",
            "--measure",
            "100ms",
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "skipping postgres, postgres-raw: no URL for postgres: set BLOBRACE_POSTGRES_URL"
        ),
        "{err}"
    );
    assert!(
        err.contains("skipping mariadb, mariadb-raw: no URL for mariadb"),
        "{err}"
    );
    assert!(
        err.contains("docker compose -f compose/compose.yaml"),
        "says how to start them: {err}"
    );
    let (_, json) = only_run(root.path());
    let engines: Vec<&str> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["engine"].as_str().unwrap())
        .collect();
    assert_eq!(engines, ["sqlite", "sqlite-raw", "fs", "floor"]);
}

#[test]
fn an_unreachable_server_asked_for_by_name_is_an_error_naming_the_url() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        root.path(),
        &[
            "load",
            "--engines",
            "postgres",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "64KiB",
            "--postgres-url",
            "postgres://blobrace:s3cret@127.0.0.1:1/blobrace",
        ],
    );
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot connect to postgres at postgres://blobrace@127.0.0.1:1/blobrace"),
        "{err}"
    );
    assert!(err.contains("docker compose"), "{err}");
    assert!(
        !err.contains("s3cret"),
        "the password must not be printed: {err}"
    );
}

/// The compose servers' URLs, or None after printing why (panics when they are required).
fn servers_or_skip(what: &str) -> Option<(String, String)> {
    let urls = server_urls();
    let reachable = urls.as_ref().is_some_and(|(pg, _)| {
        let port = pg
            .rsplit(':')
            .next()
            .and_then(|p| p.split('/').next())
            .unwrap_or("15432");
        std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_ok()
    });
    if !reachable {
        assert!(
            !docker_required(),
            "BLOBRACE_REQUIRE_DOCKER=1 but the compose servers are not reachable for {what}"
        );
        eprintln!(
            "skipped {what}: compose servers not reachable (compose/.env + docker compose up)"
        );
        return None;
    }
    urls
}

#[test]
fn servers_load_verify_and_measure_32mib_blobs_byte_equal() {
    let Some(urls) = servers_or_skip("the server round trip") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    // An odd dataset size gives namespaces no other run uses.
    let base = [
        "--engines",
        "postgres,postgres-raw,mariadb,mariadb-raw",
        "--sizes",
        "1KiB,32MiB",
        "--dataset-bytes",
        "65MiB",
    ];
    let load = run_s(
        root.path(),
        &with_servers(&[&["load"][..], &base].concat(), &urls),
    );
    assert!(load.status.success(), "{}", stderr(&load));
    let verify = run_s(
        root.path(),
        &with_servers(&[&["verify"][..], &base].concat(), &urls),
    );
    let err = stderr(&verify);
    assert!(verify.status.success(), "{err}");
    assert_eq!(err.matches("ok  ").count(), 4, "{err}");
    let measure = run_s(
        root.path(),
        &with_servers(
            &[
                &["measure"][..],
                &base,
                &["--warmup", "100ms", "--measure", "300ms"],
            ]
            .concat(),
            &urls,
        ),
    );
    assert!(measure.status.success(), "{}", stderr(&measure));
    let (_, json) = only_run(root.path());
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 8);
    for r in results {
        let name = format!("{} {}", r["engine"], r["size"]);
        assert!(r["measured"]["count"].as_u64().unwrap() > 0, "{name}");
        // This process cannot see the server's reads: unavailable, never 0.
        assert!(r["measured"]["disk_bytes_per_fetch"].is_null(), "{name}");
        assert!(r["measured"]["hit_ratio"].is_null(), "{name}");
        assert!(
            r["settings"]["server_version"].is_string(),
            "{name}: {}",
            r["settings"]
        );
        let eviction = r["eviction"]["method"].as_str().unwrap();
        assert!(
            eviction.starts_with("restart container") && eviction.contains("DONTNEED"),
            "{name}: {eviction}"
        );
        if r["cap"].is_object() {
            assert!(
                r["cap"]["cgroup"]
                    .as_str()
                    .unwrap()
                    .starts_with("container "),
                "{name}"
            );
        }
    }
    let json_text = serde_json::to_string(&json).unwrap();
    let secret = urls
        .0
        .split_once("://")
        .unwrap()
        .1
        .split('@')
        .next()
        .unwrap()
        .split(':')
        .nth(1)
        .unwrap();
    assert!(
        !json_text.contains(&format!(":{secret}@")),
        "results must not hold the password"
    );
    let drop = run_s(
        root.path(),
        &with_servers(&[&["drop"][..], &base].concat(), &urls),
    );
    assert!(drop.status.success(), "{}", stderr(&drop));
}

#[test]
fn a_wrong_server_password_is_one_clear_error() {
    let Some((pg, _)) = servers_or_skip("the wrong-password check") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let (scheme_user, rest) = pg.split_once('@').unwrap();
    let user = scheme_user.rsplit_once(':').unwrap().0;
    let wrong = format!("{user}:definitely-wrong@{rest}");
    let out = run(
        root.path(),
        &[
            "load",
            "--engines",
            "postgres",
            "--sizes",
            "1KiB",
            "--dataset-bytes",
            "64KiB",
            "--postgres-url",
            &wrong,
        ],
    );
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(err.contains("password authentication failed"), "{err}");
    assert!(!err.contains("definitely-wrong"), "{err}");
}
