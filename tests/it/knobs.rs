//! Every knob a flag reads from the environment (`env = "BLOBRACE_..."`) reaches the
//! capped runner of `scripts/compose-run.sh` and is in docs/knobs.md. A knob missing
//! from the runner's environment is silently its default inside it: a user's
//! `BLOBRACE_ACCESS=zipfian scripts/compose-run.sh` measured uniform reads until the
//! workload knobs were passed.

use std::collections::BTreeSet;

fn read(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `BLOBRACE_*` names in `text` after each occurrence of `before`.
fn names_after(text: &str, before: &str) -> BTreeSet<String> {
    text.match_indices(before)
        .map(|(at, _)| {
            text[at + before.len()..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect::<String>()
        })
        .map(|rest| format!("BLOBRACE_{rest}"))
        .collect()
}

#[test]
fn every_flag_knob_reaches_the_compose_runner_and_the_docs() {
    let knobs = blobrace::config::flag_variables(
        &<blobrace::commands::cli::Cli as clap::CommandFactory>::command(),
    );
    for declared_in_its_folder in ["BLOBRACE_SQLITE_PAGE_SIZE", "BLOBRACE_PG_STORAGE"] {
        assert!(knobs.contains(declared_in_its_folder), "{knobs:?}");
    }
    assert!(knobs.len() > 30, "{knobs:?}");
    let compose = read("compose/compose.yaml");
    let runner = &compose[compose.find("\n  runner:").expect("a runner service")..];
    let runner = &runner[..runner.find("\nvolumes:").unwrap_or(runner.len())];
    let passed = names_after(runner, "\n      BLOBRACE_");
    let missing: Vec<_> = knobs.difference(&passed).collect();
    assert!(
        missing.is_empty(),
        "knobs the runner container never sees (add them to its environment in compose/compose.yaml): {missing:?}"
    );
    let docs = names_after(&read("docs/knobs.md"), "`BLOBRACE_");
    let undocumented: Vec<_> = knobs.difference(&docs).collect();
    assert!(
        undocumented.is_empty(),
        "knobs docs/knobs.md does not list: {undocumented:?}"
    );
}

/// The runner's environment as compose gives it when the user sets nothing (each
/// `${BLOBRACE_X:-default}` at its default, the empty ones unset as the runner's
/// run.sh does) is a valid run: every knob at once, the switches' "false" included. Two switches that exclude each other
/// both passed as "false" once stopped every `scripts/compose-run.sh` before its start.
#[test]
fn the_compose_runners_default_environment_is_a_valid_run() {
    let compose = read("compose/compose.yaml");
    let runner = &compose[compose.find("\n  runner:").expect("a runner service")..];
    let runner = &runner[runner.find("\n    environment:").expect("an environment")..];
    let root = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_blobrace"));
    for (key, _) in std::env::vars() {
        if key.starts_with("BLOBRACE_") {
            cmd.env_remove(key);
        }
    }
    let mut defaults = 0;
    for line in runner.lines().skip(2) {
        let line = line.trim();
        if !line.starts_with("BLOBRACE_") {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            break;
        }
        let (key, value) = line.split_once(": ").expect("KEY: value");
        // Where the runner's volumes are mounted, and the servers it reaches: here.
        let value = match key {
            "BLOBRACE_DATA_DIR" => root.path().join("data").display().to_string(),
            "BLOBRACE_RESULTS_DIR" => root.path().join("results").display().to_string(),
            _ if key.ends_with("_URL") => continue,
            _ => match value.strip_prefix(&format!("${{{key}:-")) {
                Some(default) => {
                    defaults += 1;
                    default.trim_end_matches('}').to_string()
                }
                None => value.to_string(),
            },
        };
        // compose/runner/run.sh unsets the empty ones: empty is not "default" to clap.
        if !value.is_empty() {
            cmd.env(key, value);
        }
    }
    assert!(defaults > 30, "the runner's knobs were read: {defaults}");
    cmd.env("BLOBRACE_COMPOSE_ENV", "/nonexistent/compose.env");
    let out = cmd.args(["measure", "--dry-run"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("cell(s)"),
        "a plan was printed:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Every `BLOBRACE_*` name the project's files use (its code, scripts, compose files,
/// chart, CI and docs) is one blobrace accepts: a flag's variable or one of
/// config::OTHER_VARIABLES. Any other is refused as a misspelling, so a name used here
/// and missing there would stop a user's run.
#[test]
fn every_variable_the_project_uses_is_one_blobrace_accepts() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = BTreeSet::new();
    let mut stack: Vec<_> = [
        "src",
        "benches",
        "scripts",
        "compose",
        "charts",
        "deploy",
        ".ci",
        "tests",
        "docs",
        "README.md",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            names.extend(
                names_after(&text, "BLOBRACE_")
                    .into_iter()
                    .filter(|n| n.len() > "BLOBRACE_".len() + 1 && !n.ends_with('_'))
                    // The misspelling the tests and docs show being refused.
                    .filter(|n| n != "BLOBRACE_ENGIENS"),
            );
        }
    }
    assert!(names.len() > 60, "{names:?}");
    for name in &names {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_blobrace"))
            .env(name, "1")
            .arg("--version")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("no flag or script of blobrace reads it"),
            "{name} is used in the project but refused (add it to config::OTHER_VARIABLES, or a database's own to its Database::variables): {err}"
        );
    }
}
