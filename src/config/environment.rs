//! The `BLOBRACE_*` variables. clap reads each flag's own; any other name is either one
//! of the few below (read by the scripts, the tests or a lower layer) or a mistake: a
//! misspelt `BLOBRACE_ENGIENS=sqlite` was silently ignored and the run measured every
//! engine. Checked before the flags are parsed, for `blobrace` and `cargo bench` alike.

use std::collections::BTreeSet;

use crate::error::InputError;

/// Variables that are no flag's and no database's, with who reads them (a database's
/// own, its image and port among them, come from its folder: `Database::variables`).
/// tests/it/knobs.rs checks that every `BLOBRACE_*` name the project's files use is
/// a flag's, a database's or listed here.
pub const OTHER_VARIABLES: &[(&str, &str)] = &[
    ("BLOBRACE_DRY_RUN", "cargo bench: print the plan and stop"),
    (
        "BLOBRACE_COMPOSE_ENV",
        "where the servers' passwords are (default compose/.env)",
    ),
    (
        "BLOBRACE_COMPOSE_OVERRIDE",
        "scripts/servers.sh: a second compose file (the disk cap as blkio_config, from scripts/compose-run.sh)",
    ),
    (
        "BLOBRACE_COMPOSE_PROJECT",
        "the compose project whose servers a run uses",
    ),
    (
        crate::cap::SCOPE_MARKER,
        "set by blobrace itself inside the systemd scope it caps itself with",
    ),
    (
        crate::docker::RUNNER_IMAGE_VARIABLE,
        "scripts/compose-run.sh, the Helm chart: the runner's image (in a pod, recorded as its image)",
    ),
    (
        "BLOBRACE_CHARTS_DIR",
        "scripts/compose-run.sh: where results go",
    ),
    (
        "BLOBRACE_SHARES",
        "the runner's run.sh: how many shares (Helm)",
    ),
    ("BLOBRACE_BASE_IMAGE", "scripts: the stand-in images' base"),
    ("BLOBRACE_BIN", "scripts: the blobrace binary they run"),
    (
        "BLOBRACE_VARIANTS_LAYOUTS",
        "scripts/variants.sh: its layouts",
    ),
    (
        "BLOBRACE_DEPLOYMENTS",
        "scripts/deployments.sh: the deployments it measures, in order",
    ),
    (
        "BLOBRACE_CONTENTS",
        "scripts/contents.sh: the contents it measures, in order (random first: the reference)",
    ),
    (
        "BLOBRACE_PUBLISHED_SCALE",
        "scripts/published.sh: the share of the pages' data sizes it measures",
    ),
    (
        "BLOBRACE_REQUIRE_DOCKER",
        "tests: fail, not skip, without Docker",
    ),
    ("BLOBRACE_HDR_JAR", "tests: HdrHistogram's log processor"),
    (
        "BLOBRACE_CHROMIUM",
        "tests: the browser that opens the report",
    ),
    (
        "BLOBRACE_AXE",
        "tests: axe-core's axe.min.js, the report's accessibility check",
    ),
    ("BLOBRACE_V2_VM", "tests: run the cgroup v2 VM test"),
    (
        "BLOBRACE_CLIENTS_ROUNDS",
        "benches/clients.rs: rounds per client, engine and size",
    ),
    (
        "BLOBRACE_CLIENTS_FETCHES",
        "benches/clients.rs: cold fetches per client and round",
    ),
];

/// The `BLOBRACE_*` variables the flags of `command` and its subcommands read.
pub fn flag_variables(command: &clap::Command) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = command
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect();
    for sub in command.get_subcommands() {
        names.extend(flag_variables(sub));
    }
    names
}

/// Every `BLOBRACE_*` name `command` (its subcommands included) or the list above knows.
pub fn known_variables(command: &clap::Command) -> BTreeSet<String> {
    let mut known: BTreeSet<String> = OTHER_VARIABLES.iter().map(|(n, _)| n.to_string()).collect();
    known.extend(flag_variables(command));
    known.extend(database_variables().into_iter().map(|(name, _)| name));
    known
}

/// Every database's variables that are no flag's (`Database::variables`), from the
/// registry: the floor's pinned read, RocksDB's library, each server's port and image.
pub fn database_variables() -> Vec<(String, &'static str)> {
    crate::db::registry::StoreKind::all()
        .flat_map(|kind| kind.db().variables())
        .collect()
}

/// The value of a variable listed above that a lower layer reads when it gets there (the
/// floor's read pattern when the floor opens): checked with the names, before any work.
fn check_value(name: &str, value: &str) -> Result<(), InputError> {
    let why = crate::db::registry::StoreKind::all()
        .find_map(|kind| kind.db().check_variable(name, value));
    match why {
        Some(why) => Err(InputError::Value {
            what: "variable",
            input: format!("{name}={value}"),
            why,
        }),
        None => Ok(()),
    }
}

/// An error for the first `BLOBRACE_*` variable in `set` that nothing reads, naming the
/// closest known one, or whose value a lower layer would refuse later.
pub fn check_variables(
    command: &clap::Command,
    set: impl IntoIterator<Item = String>,
) -> Result<(), InputError> {
    let known = known_variables(command);
    let set: Vec<String> = set.into_iter().collect();
    for name in &set {
        if let Some(value) = std::env::var_os(name).and_then(|v| v.into_string().ok()) {
            check_value(name, &value)?;
        }
    }
    let Some(unknown) = set
        .into_iter()
        .filter(|name| name.starts_with("BLOBRACE_") && !known.contains(name))
        .min()
    else {
        return Ok(());
    };
    let closest = known
        .iter()
        .map(|k| (edit_distance(&unknown, k), k))
        .min()
        .filter(|(distance, _)| *distance <= 3)
        .map(|(_, k)| format!("did you mean {k}? "))
        .unwrap_or_default();
    let why = format!(
        "no flag or script of blobrace reads it, so it would be ignored; {closest}docs/knobs.md lists every variable (unset it: `unset {unknown}`)"
    );
    Err(InputError::Value {
        what: "variable",
        input: unknown,
        why,
    })
}

/// Levenshtein distance over bytes (the names are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, Command};

    fn command() -> Command {
        crate::config::RunArgs::augment_args(Command::new("blobrace"))
    }

    #[test]
    fn a_misspelt_variable_is_refused_naming_the_closest() {
        let err = check_variables(&command(), ["BLOBRACE_ENGIENS".to_string()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("BLOBRACE_ENGIENS"), "{err}");
        assert!(err.contains("did you mean BLOBRACE_ENGINES?"), "{err}");
        let far = check_variables(
            &command(),
            [concat!("BLOBRACE", "_SOMETHING_ELSE").to_string()],
        )
        .unwrap_err()
        .to_string();
        assert!(!far.contains("did you mean"), "{far}");
    }

    #[test]
    fn flags_variables_and_the_listed_ones_pass_and_others_are_not_ours() {
        let set = [
            "BLOBRACE_ENGINES",
            "BLOBRACE_POSTGRES_URL",
            "BLOBRACE_COMPOSE_PROJECT",
            "PATH",
            "BLOBRACEFOO",
        ];
        check_variables(&command(), set.map(String::from)).unwrap();
    }

    #[test]
    fn a_value_a_lower_layer_would_refuse_later_is_refused_with_the_names() {
        let floor = crate::db::floor::engine::PIN_VARIABLE;
        let err = check_value(floor, "bogus").unwrap_err().to_string();
        assert!(err.contains("BLOBRACE_FLOOR_READ=bogus"), "{err}");
        assert!(
            err.contains("not a read pattern") && err.contains("auto"),
            "{err}"
        );
        check_value(floor, "auto").unwrap();
        check_value(floor, "pread").unwrap();
        // A missing RocksDB library leaves RocksDB out with its reason, as it does
        // when none is installed: not refused here.
        check_value(
            crate::db::rocksdb::LIB_VARIABLE,
            "/nonexistent/librocksdb.so",
        )
        .unwrap();
        check_value("BLOBRACE_ENGINES", "whatever: clap's own").unwrap();
    }

    #[test]
    fn distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
