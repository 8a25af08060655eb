//! `blobrace compare`: runs measured alike are compared cell by cell; runs measured
//! differently are refused unless `--vary` names the difference; and a run made slower
//! by a known cause (a disk throttled to 300 reads a second) fails the gate, naming its
//! cells.

use std::path::{Path, PathBuf};

use crate::common::{newest_run, run, stderr, stdout};

/// A small cold run of the floor and SQLite at `size`, with `extra` flags; its directory.
fn measure(root: &Path, size: &str, extra: &[&str]) -> PathBuf {
    let args = [
        &[
            "measure",
            "--engines",
            "floor,sqlite",
            "--sizes",
            size,
            "--dataset-bytes",
            "32MiB",
            "--warmup",
            "100ms",
            "--measure",
            "1s",
        ][..],
        extra,
    ]
    .concat();
    let out = run(root, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    newest_run(root)
}

fn compare(root: &Path, args: &[&str]) -> std::process::Output {
    crate::common::blobrace()
        .arg("compare")
        .args(args)
        .arg("--results-dir")
        .arg(root.join("results"))
        .output()
        .unwrap()
}

fn name(dir: &Path) -> &str {
    dir.file_name().unwrap().to_str().unwrap()
}

#[test]
fn runs_are_compared_when_alike_refused_when_not_and_a_slower_disk_fails_the_gate() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let first = measure(root, "4KiB", &[]);
    let again = measure(root, "4KiB", &[]);
    // A second at another size: no cell in common.
    let other_size = measure(root, "8KiB", &[]);
    let throttled = measure(root, "4KiB", &["--disk-cap", "riops=300"]);
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(throttled.join("results.json")).unwrap()).unwrap();
    let in_force = results["cap"]["disk"]["in_force"]["read_iops"] == 300;

    // A run against itself: every cell compared, none slower, the gate passes.
    let same = compare(
        root,
        &[name(&first), name(&first), "--fail-on-regression", "10%"],
    );
    assert!(same.status.success(), "{}", stderr(&same));
    let table = stdout(&same);
    assert!(
        table.contains("floor") && table.contains("sqlite"),
        "{table}"
    );
    assert!(table.contains("p50") && table.contains("p99"), "{table}");
    assert!(
        stderr(&same).contains("no cell slower"),
        "{}",
        stderr(&same)
    );

    // Two runs alike, minutes apart, differing by noise only: compared, not refused,
    // every cell of both in the table (whether noise crossed 10% is not asserted).
    let alike = compare(root, &[name(&first), name(&again)]);
    assert!(alike.status.success(), "{}", stderr(&alike));
    assert!(!stderr(&alike).contains("differs"), "{}", stderr(&alike));
    assert!(stdout(&alike).contains(&format!(
        "{} against baseline {}",
        name(&again),
        name(&first)
    )));
    assert_eq!(
        stdout(&alike).matches(" p50 ").count(),
        2,
        "{}",
        stdout(&alike)
    );

    // No cell in common: said, and not a pass.
    let apart = compare(root, &[name(&first), name(&other_size)]);
    assert_eq!(apart.status.code(), Some(2), "{}", stderr(&apart));
    assert!(
        stderr(&apart).contains("no cell in common"),
        "{}",
        stderr(&apart)
    );

    // Measured under another disk cap: two experiments, refused, the fix named.
    let refused = compare(root, &[name(&first), name(&throttled)]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(said.contains("disk-cap: none | riops=300"), "{said}");
    assert!(said.contains("--vary disk-cap"), "{said}");
    assert!(
        stdout(&refused).is_empty(),
        "nothing compared: {}",
        stdout(&refused)
    );

    // Told the disk cap is the point: compared, and the gate names what got slower.
    let gated = compare(
        root,
        &[
            name(&first),
            name(&throttled),
            "--vary",
            "disk-cap",
            "--fail-on-regression",
            "10%",
        ],
    );
    let said = stderr(&gated);
    assert!(said.contains("disk-cap differs, as --vary asks"), "{said}");
    if in_force {
        // 300 reads a second: a cold read waits about 3 ms for its turn, not microseconds.
        assert_eq!(gated.status.code(), Some(1), "{said}");
        assert!(
            said.contains("slower beyond noise and by more than 10%"),
            "{said}"
        );
        assert!(said.contains("floor 4KiB p50"), "{said}");
    } else {
        eprintln!(
            "the disk cap is not in force here (not root, or no blkio): the gate's exit is not checked"
        );
    }
    // Without the gate, the same cells are said and the exit is 0.
    let told = compare(
        root,
        &[name(&first), name(&throttled), "--vary", "disk-cap"],
    );
    assert!(told.status.success(), "{}", stderr(&told));

    // A dimension that does not exist: clap's one line, exit 2.
    let bogus = compare(root, &[name(&first), name(&first), "--vary", "colour"]);
    assert_eq!(bogus.status.code(), Some(2));
    assert!(
        stderr(&bogus).contains("engine-version"),
        "{}",
        stderr(&bogus)
    );
}

/// A cell one run measured too briefly for an interval is not judged, and the gate says
/// so cell by cell with its raw ratio; `--fail-on-unjudged` fails on it.
#[test]
fn cells_the_gate_cannot_judge_are_named_and_fail_it_when_asked() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let long = measure(root, "4KiB", &[]);
    // Under one 200 ms window: no interval for any percentile.
    let args = [
        "measure",
        "--engines",
        "floor,sqlite",
        "--sizes",
        "4KiB",
        "--dataset-bytes",
        "32MiB",
        "--warmup",
        "100ms",
        "--measure",
        "100ms",
        "--precision",
        "off",
    ];
    let out = run(root, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let short = newest_run(root);
    assert_ne!(short, long);
    let gate = |extra: &[&str]| {
        compare(
            root,
            &[
                &[name(&long), name(&short), "--fail-on-regression", "10%"][..],
                extra,
            ]
            .concat(),
        )
    };
    let passed = gate(&[]);
    let said = stderr(&passed);
    assert!(said.contains("not judged: too few fetches"), "{said}");
    assert!(
        said.contains("4KiB p99: ") && said.contains("x the baseline, not judged"),
        "each cell named with its ratio: {said}"
    );
    let failed = gate(&["--fail-on-unjudged"]);
    let said = stderr(&failed);
    assert_eq!(failed.status.code(), Some(1), "{said}");
    assert!(said.contains("not judged (--fail-on-unjudged)"), "{said}");
}
