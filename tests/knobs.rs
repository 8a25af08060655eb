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
    let mut knobs = names_after(&read("src/config/args.rs"), "env = \"BLOBRACE_");
    knobs.extend(names_after(&read("src/main.rs"), "env = \"BLOBRACE_"));
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
