//! Datasets of documents (`--content`): loaded, verified and measured like random
//! ones, each content a dataset of its own, the run recording what it held;
//! PostgreSQL really compressing text (its own functions say so); bad forms refused
//! in one line before anything is made.

use crate::common::{only_run, run, run_s, server_url_or_skip, stderr};

pub(crate) fn small(content: &str, engines: &str) -> Vec<String> {
    [
        "--engines",
        engines,
        "--sizes",
        "4KiB",
        "--dataset-bytes",
        "1MiB",
        "--warmup",
        "50ms",
        "--measure",
        "200ms",
        "--precision",
        "off",
        "--content",
        content,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// `command` with `args`, then `more`.
pub(crate) fn with(command: &str, args: &[String], more: &[&str]) -> Vec<String> {
    std::iter::once(command.to_string())
        .chain(args.iter().cloned())
        .chain(more.iter().map(|s| s.to_string()))
        .collect()
}

#[test]
fn a_text_dataset_is_its_own_loaded_verified_and_measured_and_the_run_says_so() {
    let root = tempfile::tempdir().unwrap();
    let args = small("text", "floor,sqlite-raw,fs");
    let out = run_s(root.path(), &with("measure", &args, &[]));
    assert!(out.status.success(), "{}", stderr(&out));
    let (dir, json) = only_run(root.path());
    assert_eq!(json["config"]["content"], "text", "{}", json["config"]);
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    for r in results {
        assert_eq!(r["dataset"]["content"], "text", "{}", r["engine"]);
        assert!(r["measured"]["count"].as_u64().unwrap() > 0);
    }
    // Its files are named for it, and a file per blob holds text after the id stamp.
    let data = root.path().join("data");
    let fs_dir = std::fs::read_dir(data.join("fs"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with("-text"))
        .expect("fs's dataset named -text")
        .path();
    let mut files = walk(&fs_dir);
    files.sort();
    let blob = std::fs::read(files.first().expect("a blob file")).unwrap();
    assert_eq!(blob.len(), 4096);
    assert!(
        std::str::from_utf8(&blob[8..]).is_ok_and(|t| t.contains(' ')),
        "text after the stamp"
    );
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        page.contains("text content, ") && page.contains(":1 under deflate"),
        "the Measured line"
    );
    // Measured, not assumed: what deflate made of its rows.
    let measured = &json["compressibility"][0];
    assert_eq!(measured["content"], "text", "{measured}");
    assert!(measured["deflate6"].as_f64().unwrap() > 2.0, "{measured}");
    assert!(measured["zstd3"].as_f64().unwrap() > 2.0, "{measured}");

    // Verified whole, every row against its regenerated text.
    let out = run_s(
        root.path(),
        &with("verify", &small("text", "sqlite-raw,fs"), &[]),
    );
    assert!(out.status.success(), "{}", stderr(&out));

    // The random dataset of the same size is another, loaded beside it.
    let out = run_s(
        root.path(),
        &with("load", &small("random", "sqlite-raw"), &[]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let sqlite: Vec<String> = std::fs::read_dir(data.join("sqlite"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sqlite"))
        .collect();
    assert_eq!(sqlite.len(), 2, "{sqlite:?}");
    assert!(sqlite.iter().any(|n| n.contains("-text")), "{sqlite:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if !p.to_string_lossy().ends_with(".json") {
            out.push(p);
        }
    }
    out
}

#[test]
fn bad_content_forms_are_refused_in_one_line_before_anything_is_made() {
    for (bad, says) in [
        ("xml", "unknown content"),
        ("ratio:0", "out of range"),
        ("ratio:-1", "out of range"),
        ("ratio:1e9", "out of range"),
        ("ratio:", "not a number"),
    ] {
        let root = tempfile::tempdir().unwrap();
        let out = run(
            root.path(),
            &["measure", "--engines", "floor", "--content", bad],
        );
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(says), "{bad}: {err}");
        assert!(
            !root.path().join("data").exists(),
            "{bad}: a data dir was made"
        );
        assert!(
            !root.path().join("results").exists(),
            "{bad}: results were made"
        );
    }
}

/// PostgreSQL's default storage (EXTENDED) compresses a text dataset with pglz, as it
/// would its users' documents: `pg_column_compression` names it and the stored values
/// take fewer bytes than the blobs.
#[test]
fn postgres_compresses_a_text_dataset_with_its_default() {
    let Some(url) = server_url_or_skip("postgres", "PostgreSQL compressing text") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let mut args = with("load", &small("text", "postgres-raw"), &[]);
    args.extend(["--postgres-url".to_string(), url]);
    let out = run_s(root.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = psql(
        "select pg_column_compression(data), sum(pg_column_size(data))::float / sum(octet_length(data)) from blobs_4kib_x256_text.blobs group by 1",
    );
    let (method, share) = said.split_once('|').expect(&said);
    assert_eq!(method, "pglz", "{said}");
    let share: f64 = share.parse().unwrap();
    assert!(share < 0.7, "text stored in {share} of its bytes");
}

/// What `psql` says to `sql` inside the compose PostgreSQL, trimmed.
pub(crate) fn psql(sql: &str) -> String {
    let container = crate::common::service_container("postgres");
    let out = std::process::Command::new("docker")
        .args([
            "exec", &container, "psql", "-U", "blobrace", "-d", "blobrace", "-Atc", sql,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
