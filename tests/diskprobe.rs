//! The disk probe on a real file. Its own test binary: its O_DIRECT reads would show
//! in /proc/self/io and upset the unit test that counts a read there.

use std::time::Duration;

use blobrace::diskprobe::probe;

#[test]
fn a_probe_reads_a_real_file_or_says_why_not() {
    // Not on tmpfs (no O_DIRECT there): beside the build, on the real disk.
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let path = dir.path().join("probe.bin");
    std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
    match probe(&path, 64 << 10, Duration::from_millis(20), 1) {
        Ok(p) => {
            assert!(p.reads >= 5, "{p:?}");
            assert!(p.p50_ns > 0 && p.p50_ns <= p.p99_ns, "{p:?}");
            assert_eq!(p.block_bytes, 64 << 10);
        }
        Err(why) => assert!(why.contains("O_DIRECT"), "{why}"),
    }
    let small = probe(&path, 4 << 20, Duration::from_millis(1), 1).unwrap_err();
    assert!(small.contains("less than one"), "{small}");
    let missing = probe(&dir.path().join("nope"), 4096, Duration::ZERO, 1).unwrap_err();
    assert!(missing.contains("cannot open"), "{missing}");
}
