//! A disk that cannot hold every dataset the run needs: the run plans instead of
//! refusing. Size class by size class keeping what is dearest to load again where one
//! size class fits; one dataset at a time where even that does not; refused, with the
//! numbers, only where one dataset does not fit (`bad_input`).

use crate::common::{run, stderr};

/// A disk that holds one size class but not all of them: the run plans instead of
/// refusing. It says what it keeps (the dearest to load again, as far as the disk
/// allows, and the last size class whole) and what it drops once measured, measures
/// every cell, and leaves the kept datasets for the next run; `--keep-all` refuses.
#[test]
fn a_disk_too_small_for_every_size_class_gets_a_plan_of_what_to_keep() {
    let root = tempfile::tempdir().unwrap();
    let Some(_disk) = crate::common::SmallDisk::mount(root.path(), 300) else {
        return;
    };
    // Per size class about 41 MiB for each of SQLite, fs and the floor: 250 MiB for
    // both at once, more than 300 MiB less the 64 MiB + 1% kept free; one fits.
    let measure = [
        "measure",
        "--engines",
        "sqlite,fs,floor",
        "--sizes",
        "64KiB,1MiB",
        "--dataset-bytes",
        "40MiB",
        "--warmup",
        "50ms",
        "--measure",
        "200ms",
    ];
    let out = run(root.path(), &measure);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("so the run goes size class by size class: its peak is"),
        "{err}"
    );
    // 64 KiB: two of the three fit beside the 1 MiB class; the floor's is the cheapest
    // to write again (one file in order), so it goes.
    let kept = err
        .lines()
        .find(|l| l.starts_with("disk plan: kept once measured"))
        .unwrap();
    let dropped = err
        .lines()
        .find(|l| l.starts_with("disk plan: dropped once measured"))
        .unwrap();
    for store in [
        "sqlite 64KiB",
        "fs 64KiB",
        "sqlite 1MiB",
        "fs 1MiB",
        "floor 1MiB",
    ] {
        assert!(kept.contains(store), "{store}: {kept}");
    }
    assert!(
        dropped.contains("floor 64KiB") && !dropped.contains("sqlite"),
        "{dropped}"
    );
    let (_, json) = crate::common::only_run(root.path());
    assert_eq!(json["results"].as_array().unwrap().len(), 6);
    assert!(json["parts"][0]["disk_plan"].as_array().unwrap().len() >= 3);
    let data = root.path().join("data");
    assert!(
        !data.join("floor/64KiB-x640.bin").exists(),
        "dropped once measured"
    );
    assert!(data.join("sqlite/64KiB-x640.sqlite").exists() && data.join("fs/64KiB-x640").exists());
    assert!(
        data.join("floor/1MiB-x40.bin").exists(),
        "the last size class stays"
    );
    // The same command again: what the first run kept (the whole 1 MiB class, two
    // thirds of 64 KiB) leaves too little beside the floor's 64 KiB load plus the slack,
    // so the class already on disk is measured first and makes room once measured.
    // (Measured last, it refused: not even one size class at a time fitted.)
    let again = run(root.path(), &measure);
    let err = stderr(&again);
    assert!(again.status.success(), "{err}");
    assert!(
        err.contains(
            "disk plan: size classes in the order 1MiB, 64KiB: those already on disk first"
        ),
        "{err}"
    );
    for dataset in [
        "sqlite/1MiB-x40.sqlite",
        "fs/1MiB-x40",
        "floor/1MiB-x40.bin",
    ] {
        assert!(
            err.contains(&format!("{dataset}: already loaded")),
            "{dataset} reused: {err}"
        );
    }
    let first_cell = err
        .lines()
        .find(|l| l.contains("[cell 1 of 6]"))
        .unwrap_or("");
    assert!(first_cell.contains("1MiB"), "1 MiB measured first: {err}");
    // --keep-all: refused before loading, with the numbers.
    let keep_all = run(root.path(), &[&measure[..], &["--keep-all"]].concat());
    assert_eq!(keep_all.status.code(), Some(2), "{}", stderr(&keep_all));
    assert!(
        stderr(&keep_all).contains("not enough free disk"),
        "{}",
        stderr(&keep_all)
    );
}

/// A disk that cannot hold one size class: each store's dataset is loaded, its engines
/// measured (sqlite-raw beside sqlite, before the floor, whatever the engine list's
/// order) and dropped before the next store loads; every cell is measured and nothing
/// is left on the disk.
#[test]
fn a_disk_too_small_for_one_size_class_goes_one_dataset_at_a_time() {
    let root = tempfile::tempdir().unwrap();
    let Some(disk) = crate::common::SmallDisk::mount(root.path(), 300) else {
        return;
    };
    // About 121 MiB per store and size class: one size class (SQLite's and the floor's)
    // is 242 MiB, over 300 MiB less the 64 MiB + 1% kept free and what the results
    // take; one dataset is not.
    let measure = [
        "measure",
        "--engines",
        "sqlite,floor,sqlite-raw",
        "--sizes",
        "64KiB,1MiB",
        "--dataset-bytes",
        "120MiB",
        "--warmup",
        "50ms",
        "--measure",
        "200ms",
    ];
    let out = run(root.path(), &measure);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("so the run goes dataset by dataset")
            && err.contains("disk plan: nothing is kept for the next run"),
        "{err}"
    );
    // In each size class: SQLite's two engines, then the floor.
    let cells: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("[cell "))
        .map(|l| l.split_whitespace().nth(4).unwrap_or(""))
        .collect();
    assert_eq!(
        cells,
        [
            "sqlite",
            "sqlite-raw",
            "floor",
            "sqlite",
            "sqlite-raw",
            "floor"
        ],
        "{err}"
    );
    for (n, line) in err.lines().filter(|l| l.starts_with("[cell ")).enumerate() {
        assert!(
            line.starts_with(&format!("[cell {} of 6]", n + 1)),
            "{line}"
        );
    }
    // SQLite's 64 KiB dataset is gone before the floor's is loaded.
    let at = |needle: &str| {
        err.find(needle)
            .unwrap_or_else(|| panic!("{needle} not in: {err}"))
    };
    assert!(
        at("dropped") < at("floor/64KiB-x1920.bin: ")
            && err[..at("floor/64KiB-x1920.bin: ")]
                .contains("sqlite/64KiB-x1920.sqlite (the disk plan: one dataset at a time)"),
        "{err}"
    );
    let (_, json) = crate::common::only_run(root.path());
    assert_eq!(json["results"].as_array().unwrap().len(), 6);
    assert!(
        json["parts"][0]["disk_plan"][0]
            .as_str()
            .unwrap()
            .contains("dataset by dataset")
    );
    for dir in ["sqlite", "floor"] {
        let left: Vec<_> = std::fs::read_dir(root.path().join("data").join(dir))
            .map(|d| d.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{dir}: {left:?}");
    }
    assert!(disk.free_bytes() > 250 << 20);
}

/// A size class already on disk frees, once measured and dropped, what its datasets
/// take on disk, which can be far more than their blobs (fs: a 4 KiB page per 1 KiB
/// file). Counting only the blobs, a full run here was refused ("even one size class at
/// a time does not fit") that fits once they go.
#[test]
fn a_size_class_on_disk_frees_what_it_takes_not_only_its_blobs() {
    let root = tempfile::tempdir().unwrap();
    // The datasets' disk alone is small (results need 64 MiB of their own).
    std::fs::create_dir(root.path().join("data")).unwrap();
    let Some(disk) = crate::common::SmallDisk::mount(&root.path().join("data"), 400) else {
        return;
    };
    let data = ["--engines", "fs,sqlite", "--dataset-bytes", "24MiB"];
    let load = run(
        root.path(),
        &[&["load", "--sizes", "1KiB"][..], &data].concat(),
    );
    assert!(load.status.success(), "{}", stderr(&load));
    // fs's 24,576 files of 1 KiB take 96 MiB, SQLite's about 26: the blobs are 48.
    // Leave 40 MiB: less than the 64 MiB kept free beside any load, so counting only
    // the blobs, 64 KiB's loads (a little over 48 MiB) would not fit after 1 KiB goes.
    let filler = root.path().join("data/filler");
    let leave = 40u64 << 20;
    let fill = disk.free_bytes().saturating_sub(leave);
    std::fs::write(&filler, vec![7u8; fill as usize]).unwrap();
    let measure = [
        &[
            "measure",
            "--sizes",
            "1KiB,64KiB",
            "--warmup",
            "50ms",
            "--measure",
            "200ms",
        ][..],
        &data,
    ]
    .concat();
    let out = run(root.path(), &measure);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("so the run goes size class by size class"),
        "{err}"
    );
    assert!(
        err.contains("fs/1KiB-x24576: already loaded"),
        "1 KiB reused: {err}"
    );
    let (_, json) = crate::common::only_run(root.path());
    assert_eq!(json["results"].as_array().unwrap().len(), 4, "{err}");
    assert!(
        !root.path().join("data/fs/1KiB-x24576").exists(),
        "1 KiB dropped once measured, making the room 64 KiB took"
    );
    std::fs::remove_file(&filler).unwrap();
}
