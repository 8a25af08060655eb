use super::*;

fn fake(kb: u64) -> (tempfile::TempDir, BlockDevice, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let queue = root.path().join("sys/dev/block/7:3/queue");
    fs::create_dir_all(&queue).unwrap();
    fs::write(queue.join("read_ahead_kb"), format!("{kb}\n")).unwrap();
    let device = BlockDevice {
        major_minor: "7:3".into(),
        name: "loop3".into(),
    };
    (root, device, queue.join("read_ahead_kb"))
}

#[test]
fn forms_parse_and_bad_ones_say_the_forms() {
    assert_eq!(parse_readahead("host").unwrap(), Readahead::Host);
    assert_eq!(parse_readahead("128").unwrap(), Readahead::Kib(128));
    assert_eq!(parse_readahead("0").unwrap(), Readahead::Kib(0));
    assert_eq!(parse_readahead("8MiB").unwrap(), Readahead::Kib(8192));
    assert_eq!(parse_readahead("128KiB").unwrap(), Readahead::Kib(128));
    for bad in ["-1", "hots", "1500B", "2GiB", ""] {
        let e = parse_readahead(bad).unwrap_err().to_string();
        assert!(e.contains("it takes \"host\""), "{bad}: {e}");
    }
    // Recorded as a string and read back the same.
    let json = serde_json::to_string(&Readahead::Kib(128)).unwrap();
    assert_eq!(json, "\"128KiB\"");
    assert_eq!(
        serde_json::from_str::<Readahead>(&json).unwrap(),
        Readahead::Kib(128)
    );
}

#[test]
fn a_hold_sets_reads_back_and_puts_the_host_value_back() {
    let (root, device, file) = fake(8192);
    let state = root.path().join("state");
    let (report, hold, _) = hold(
        Readahead::Kib(128),
        &device,
        &root.path().join("sys"),
        &state,
    )
    .unwrap();
    assert_eq!(report.host_kb, Some(8192));
    assert_eq!(report.in_force_kb, Some(128));
    assert_eq!(report.why_not, None);
    assert_eq!(read_kb(&file), Some(128));
    // A second holder at the same value shares it; at another it is refused.
    let (second, second_hold, _) = super::hold(
        Readahead::Kib(128),
        &device,
        &root.path().join("sys"),
        &state,
    )
    .unwrap();
    assert_eq!(second.host_kb, Some(8192));
    let refused = super::hold(
        Readahead::Kib(512),
        &device,
        &root.path().join("sys"),
        &state,
    )
    .err()
    .unwrap();
    assert!(
        refused.contains("holds the readahead of loop3 (7:3) at 128 KiB"),
        "{refused}"
    );
    let refused = super::hold(Readahead::Host, &device, &root.path().join("sys"), &state)
        .err()
        .unwrap();
    assert!(refused.contains("asks 8192 KiB"), "{refused}");
    drop(hold);
    assert_eq!(
        read_kb(&file),
        Some(128),
        "the other holder still reads at 128"
    );
    drop(second_hold);
    assert_eq!(read_kb(&file), Some(8192));
    assert!(!state.join("7_3").exists(), "nothing left behind");
}

#[test]
fn a_killed_runs_value_is_the_next_runs_to_put_back() {
    let (root, device, file) = fake(8192);
    let sys = root.path().join("sys");
    let state = root.path().join("state");
    // As a SIGKILLed run leaves it: its value in force, the host's kept, a dead holder.
    fs::write(&file, "128").unwrap();
    fs::create_dir_all(state.join("7_3")).unwrap();
    fs::write(state.join("7_3/host"), "8192").unwrap();
    fs::write(state.join("7_3/h-999999999-0"), "").unwrap();
    let (report, hold, notes) = hold(Readahead::Host, &device, &sys, &state).unwrap();
    assert_eq!(report.host_kb, Some(8192));
    assert_eq!(
        report.in_force_kb,
        Some(8192),
        "'host' is the host's value, not the leftover"
    );
    assert!(
        notes[0].contains("left by a run that was killed"),
        "{notes:?}"
    );
    drop(hold);
    assert_eq!(read_kb(&file), Some(8192));
    assert!(!state.join("7_3").exists());
}

#[test]
fn the_watchdog_puts_the_value_back_when_its_process_is_gone() {
    let (root, device, file) = fake(8192);
    let sys = root.path().join("sys");
    let state = root.path().join("state");
    let (_, hold, _) = hold(Readahead::Kib(64), &device, &sys, &state).unwrap();
    let mut hold = hold.unwrap();
    assert_eq!(read_kb(&file), Some(64));
    // As after a SIGKILL: no Drop runs, our holder file stays; the pipe closes. The
    // holder's pid is ours, alive, so stand in a dead one for it.
    let dead = "h-999999999-0";
    fs::rename(hold.dir.join(&hold.holder), hold.dir.join(dead)).unwrap();
    let mut watchdog = hold.watchdog.take().unwrap();
    drop(watchdog.stdin.take());
    assert!(watchdog.wait().unwrap().success());
    assert_eq!(read_kb(&file), Some(8192));
    assert!(!state.join("7_3").exists());
    let holder = hold.holder.clone();
    std::mem::forget(hold);
    HELD.lock().unwrap().retain(|(_, h, _)| *h != holder);
}

#[test]
fn a_disk_whose_readahead_cannot_be_read_is_said_and_left_alone() {
    let (root, device, file) = fake(8192);
    // A directory where the file should be: nothing to read, nothing set.
    fs::remove_file(&file).unwrap();
    fs::create_dir(&file).unwrap();
    let (report, hold, _) = hold(
        Readahead::Kib(128),
        &device,
        &root.path().join("sys"),
        &root.path().join("state"),
    )
    .unwrap();
    assert!(hold.is_none());
    assert_eq!(report.in_force_kb, None);
    assert!(report.why_not.unwrap().contains("cannot be read"));
}
