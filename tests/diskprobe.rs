//! The disk's own throughput at a queue depth (`diskprobe::throughput`). Its own
//! test process: its O_DIRECT reads would show in another test's /proc/self/io.

use std::time::Duration;

use blobrace::disk::probe::throughput;

#[test]
fn throughput_counts_every_reader_and_refuses_a_short_file() {
    // In the build tree, not /tmp: tmpfs has no O_DIRECT.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("data");
    std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
    let t = match throughput(&path, 64 << 10, 3, Duration::from_millis(100), 1) {
        Ok(t) => t,
        // tmpfs and some overlay filesystems have no O_DIRECT: nothing to measure.
        Err(why) if why.contains("O_DIRECT") => return eprintln!("skipped: {why}"),
        Err(why) => panic!("{why}"),
    };
    assert_eq!(t.queue_depth, 3);
    assert!(
        t.reads >= 15,
        "each of 3 readers reads at least 5 blocks: {t:?}"
    );
    let expected = t.reads as f64 / t.seconds;
    assert!((t.reads_per_s - expected).abs() < 1e-6 * expected, "{t:?}");
    assert!(
        (t.mb_per_s - expected * 65536.0 / 1e6).abs() < 1e-3,
        "{t:?}"
    );
    assert!(t.p50_ns > 0 && t.p99_ns >= t.p50_ns, "{t:?}");
    let short = throughput(&path, 2 << 20, 2, Duration::from_millis(10), 1).unwrap_err();
    assert!(short.contains("less than one"), "{short}");
}

/// The dataset's own files, read as the floor's file is (`probe_files`): a file
/// shorter than a block is read from its start; one that cannot be opened is said.
#[test]
fn a_dataset_s_own_files_are_probed_and_a_missing_one_is_said() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let files: Vec<std::path::PathBuf> = [1024usize, 256 << 10]
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            let path = dir.path().join(format!("f{i}"));
            std::fs::write(&path, vec![7u8; len]).unwrap();
            path
        })
        .collect();
    match blobrace::disk::probe::probe_files(&files, 4096, Duration::from_millis(20), 1) {
        Ok(probe) => {
            assert!(probe.reads >= 5, "{probe:?}");
            assert_eq!(probe.file, "2 of the dataset's files");
            assert!(
                probe.p50_ns > 0 && probe.p50_ns <= probe.p99_ns,
                "{probe:?}"
            );
        }
        Err(why) if why.contains("O_DIRECT") => return eprintln!("skipped: {why}"),
        Err(why) => panic!("{why}"),
    }
    let gone = dir.path().join("gone");
    let missing = blobrace::disk::probe::probe_files(&[gone], 4096, Duration::ZERO, 1);
    assert!(missing.unwrap_err().contains("cannot open"));
}
