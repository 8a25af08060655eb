//! No secret a run is given is written where results are published: a password in a
//! URL's user info or in its query parameters, on the command line or in a
//! `BLOBRACE_*_URL`, is found in no file the run, its report or `blobrace site` write,
//! nor in what it says; the server each URL names still is.

use std::path::Path;

use crate::common::{blobrace, stderr};

/// Every file under `dir` holding any of `secrets`, with the first one it holds.
fn files_holding(dir: &Path, secrets: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_holding(&path, secrets));
            continue;
        }
        let bytes = std::fs::read(&path).unwrap_or_default();
        for secret in secrets {
            if bytes.windows(secret.len()).any(|w| w == secret.as_bytes()) {
                found.push(format!("{} holds {secret}", path.display()));
            }
        }
    }
    found
}

#[test]
fn no_secret_a_run_is_given_is_written_where_results_are_published() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let secrets = [
        "pw-in-user-info",
        "pw-in-query",
        "pw-in-sslpassword",
        "pw-in-variable",
        "pw-in-variable-query",
        "pw-in-s3-url",
    ];
    let out = blobrace()
        .current_dir(root)
        .env(
            "BLOBRACE_MARIADB_URL",
            format!("mysql://root:{}@127.0.0.1:1/x?password={}", secrets[3], secrets[4]),
        )
        .args(["measure", "--engines", "floor", "--sizes", "4KiB"])
        .args(["--dataset-bytes", "4MiB", "--warmup", "50ms", "--measure", "200ms"])
        .args(["--cap", "none", "--cpus", "none", "--data-dir", "data"])
        .args(["--results-dir", "results"])
        .arg(format!(
            "--postgres-url=postgres://blobrace:{}@127.0.0.1:1/db?sslmode=disable&password={}&sslpassword={}",
            secrets[0], secrets[1], secrets[2]
        ))
        .arg("--seaweedfs-url")
        .arg(format!("s3://access:{}@127.0.0.1:1", secrets[5]))
        .output()
        .unwrap();
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    let site = blobrace()
        .current_dir(root)
        .args(["site", "results", "--out", "site"])
        .output()
        .unwrap();
    assert!(site.status.success(), "{}", stderr(&site));
    // The report drawn again from the stored run, as a user publishing it does.
    let report = blobrace()
        .current_dir(root)
        .args(["report", "--results-dir", "results"])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let mut found = files_holding(&root.join("results"), &secrets);
    found.extend(files_holding(&root.join("site"), &secrets));
    for secret in secrets {
        assert!(!said.contains(secret), "the run said {secret}: {said}");
    }
    assert!(found.is_empty(), "{found:#?}");
    // What is left still names the servers: the redaction took the secrets only.
    let run = std::fs::read_dir(root.join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("results.json").is_file())
        .unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("results.json")).unwrap()).unwrap();
    let command = json["command"].as_str().unwrap();
    assert!(
        command.contains("postgres://blobrace@127.0.0.1:1/db?sslmode=disable&password=<redacted>"),
        "{command}"
    );
    let variables = &json["provenance"]["variables"];
    assert_eq!(
        variables["BLOBRACE_MARIADB_URL"], "mysql://root@127.0.0.1:1/x?password=<redacted>",
        "{variables}"
    );
}
