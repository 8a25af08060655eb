//! The disk cap (`--disk-cap`): set on the data's disk by the kernel's block throttle,
//! read back, recorded, and felt by the fetches; where it cannot be set, said and
//! recorded as not capped, never claimed.

use crate::common::{newest_run, only_run, run, stderr};
use serde_json::Value;

/// `blobrace env`'s JSON document (it is followed by the dataset table).
fn env_cap(root: &std::path::Path, args: &[&str]) -> Value {
    let out = run(root, &[&["env"][..], args].concat());
    crate::common::env_json(&out)["cap"].clone()
}

/// Whether this machine lets the process throttle its own disk: root on cgroup v1 with
/// blkio, or a v2 cgroup of its own with the io controller. Elsewhere the tests below
/// check that it says why not instead.
fn throttled(disk: &Value) -> bool {
    disk["in_force"]
        .as_object()
        .is_some_and(|limits| limits.values().any(|v| !v.is_null()))
}

#[test]
fn a_disk_cap_is_read_back_from_the_kernel_or_said_to_be_missing() {
    let root = tempfile::tempdir().unwrap();
    let cap = env_cap(
        root.path(),
        // Sizes the cap can serve: 10MiB/s cannot read one of the default's 32 MiB
        // blobs in a second, which is refused (the test below).
        &[
            "--cap",
            "256MiB",
            "--disk-cap",
            "riops=300,rbps=10MiB",
            "--sizes",
            "1KiB,4MiB",
        ],
    );
    let disk = &cap["disk"];
    assert_eq!(disk["asked"]["asked"], "riops=300,rbps=10MiB", "{disk}");
    let notes = disk["notes"].to_string();
    if throttled(disk) {
        // The figures the cgroup holds, not the ones asked for: the same here.
        assert_eq!(disk["in_force"]["read_iops"], 300, "{disk}");
        assert_eq!(disk["in_force"]["read_bytes_per_s"], 10 << 20, "{disk}");
        assert!(disk["in_force"]["write_iops"].is_null(), "{disk}");
        let device = disk["device"].as_str().unwrap();
        assert!(
            device.split(' ').next().unwrap().contains(':'),
            "MAJ:MIN name: {device}"
        );
        assert!(notes.contains("no time to each"), "{notes}");
    } else {
        assert!(disk["in_force"]["read_iops"].is_null(), "{disk}");
        assert!(notes.contains("disk not capped: "), "{notes}");
    }
    // Uncapped, nothing is said of a disk.
    let plain = env_cap(root.path(), &["--cap", "256MiB"]);
    assert!(plain["disk"].is_null(), "{plain}");
}

#[test]
fn the_floor_under_a_disk_cap_reads_at_the_capped_rate_and_its_results_say_so() {
    let root = tempfile::tempdir().unwrap();
    let base = [
        "--engines",
        "floor",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "128MiB",
        "--cap",
        "64MiB",
        "--cache",
        "cold",
        "--warmup",
        "100ms",
        "--measure",
        "2s",
    ];
    let out = run(
        root.path(),
        &[&["measure"][..], &base, &["--disk-cap", "riops=100"]].concat(),
    );
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("cap: disk "), "{said}");
    let (run_dir, json) = only_run(root.path());
    assert_eq!(json["config"]["disk_cap"]["asked"], "riops=100");
    let disk = &json["cap"]["disk"];
    let r = &json["results"][0];
    // Fetches of 64 KiB from a 128 MiB file under a 64 MiB cap: most miss.
    let mean_ms = r["measured"]["latency"]["mean_ns"].as_f64().unwrap() / 1e6;
    let page = std::fs::read_to_string(run_dir.join("index.html")).unwrap();
    if throttled(disk) {
        assert_eq!(disk["in_force"]["read_iops"], 100, "{disk}");
        // 100 reads a second: about 10 ms a miss on average, where this disk uncapped
        // reads 64 KiB in well under a millisecond. The mean, not the p50: the kernel's
        // throttle lets reads through at the disk's speed until its time slice's budget
        // is spent, then holds the next ones (p50 0.24 ms, p99 98 ms, mean 8.9 ms here).
        assert!(
            mean_ms >= 5.0,
            "mean {mean_ms} ms under 100 IOPS: {}",
            r["measured"]["latency"]
        );
        assert!(
            page.contains("the disk capped at read 100 IOPS"),
            "report header"
        );
    } else {
        assert!(page.contains("could not be set"), "report header");
    }
}

/// `rbps=1` (a bare number is bytes a second) held a read in uninterruptible sleep that
/// no signal ended: refused before anything is created, naming the least that serves.
#[test]
fn a_disk_cap_too_slow_to_read_one_blob_a_second_is_refused_before_any_work() {
    let root = tempfile::tempdir().unwrap();
    for (cap, least) in [("rbps=1", "1MiB"), ("riops=2", "50"), ("riops=1", "50")] {
        let out = run(
            root.path(),
            &[
                "measure",
                "--engines",
                "floor",
                "--sizes",
                "1MiB",
                "--dataset-bytes",
                "4MiB",
                "--disk-cap",
                cap,
            ],
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{cap}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.contains("in a second"), "{err}");
        assert!(err.contains(&format!("to {least} or more")), "{cap}: {err}");
        let written = crate::common::files_under(root.path());
        assert!(
            written.is_empty(),
            "a refused run writes nothing: {written:?}"
        );
    }
}

#[test]
fn a_bad_disk_cap_is_one_line_naming_the_forms() {
    let root = tempfile::tempdir().unwrap();
    for (bad, says) in [
        ("gp2", "neither a preset nor name=value"),
        ("riops=fast", "riops needs a whole number"),
        ("gp3:99999", "3000-16000 IOPS"),
        ("io2:50", "100-256000 IOPS"),
        ("pd-balanced", "needs the volume's size"),
        ("azure-p30:5", "takes no figures"),
    ] {
        let out = run(root.path(), &["env", "--disk-cap", bad]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert_eq!(err.matches("Error:").count(), 1, "one error: {err}");
        // What is wrong, then every form it takes, presets included.
        assert!(err.contains(says), "{bad}: {err}");
        for form in [
            "riops=N",
            "\"gp3\"",
            "\"io2:IOPS\"",
            "\"pd-balanced:SIZE\"",
            "\"azure-p30\"",
        ] {
            assert!(err.contains(form), "{bad}: {form} not in {err}");
        }
    }
}

/// This test process's own blkio cgroup directory on cgroup v1, where a sibling cgroup
/// for fio can be made (root); None elsewhere (cgroup v2, not root).
fn own_blkio_cgroup() -> Option<std::path::PathBuf> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroups.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "blkio")
            .then(|| path.to_string())
    })?;
    let dir = std::path::Path::new("/sys/fs/cgroup/blkio").join(path.trim_start_matches('/'));
    let probe = dir.join(format!("blobrace-fio-probe-{}", std::process::id()));
    std::fs::create_dir(&probe).ok()?;
    std::fs::remove_dir(&probe).ok()?;
    Some(dir)
}

/// fio's random O_DIRECT reads of `file` at queue depth 1 (`bs` each, `secs` long) in a
/// blkio cgroup of its own holding `limits` ("MAJ:MIN N" per throttle file): its read
/// IOPS and bytes a second.
fn fio_under(
    cgroups: &std::path::Path,
    limits: &[(&str, String)],
    file: &std::path::Path,
    bs: &str,
    secs: u32,
) -> (f64, f64) {
    /// The cgroup removed however the test ends (fio has exited by then).
    struct Removed(std::path::PathBuf);
    impl Drop for Removed {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let cg = cgroups.join(format!("blobrace-fio-{}", std::process::id()));
    std::fs::create_dir_all(&cg).unwrap();
    let _removed = Removed(cg.clone());
    for (knob, value) in limits {
        std::fs::write(cg.join(knob), value).unwrap_or_else(|e| panic!("{knob}: {e}"));
    }
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec fio --name=r --filename={} --rw=randread --bs={bs} --ioengine=psync --iodepth=1 --direct=1 --runtime={secs} --time_based --output-format=json",
            cg.display(),
            file.display()
        ))
        .output()
        .expect("fio runs");
    assert!(
        out.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("fio's JSON");
    let read = &json["jobs"][0]["read"];
    (
        read["iops"].as_f64().unwrap(),
        read["bw_bytes"].as_f64().unwrap(),
    )
}

/// Checked with the tool users trust: the floor measured under `--disk-cap gp3`, then fio
/// under the same limits, read back from the floor's results, on the floor's own file.
/// At 4 KiB the IOPS limit binds, at 1 MiB the bandwidth limit: the floor's disk reads
/// a second and fio's agree within 10% at both (on this project's machine, 2026-11-29:
/// 3,101 vs 2,999 a second, 125.8 vs 124.8 MiB/s, where uncapped fio read 9,160 and 699),
/// in one of up to three measurements (CI of 2026-12-07, beside other tests: 131.2 against
/// 116.9 MiB/s once).
/// CI installs fio (`scripts/setup.sh`) and sets BLOBRACE_REQUIRE_DOCKER=1: there a
/// missing fio fails the test instead of skipping it.
#[test]
fn fio_under_the_same_disk_cap_reads_at_the_floors_rate() {
    if std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            !crate::common::docker_required(),
            "no fio, and CI (BLOBRACE_REQUIRE_DOCKER=1) requires it: scripts/setup.sh installs it"
        );
        eprintln!("skipped: no fio (scripts/setup.sh installs it: apt-get install fio)");
        return;
    }
    let Some(cgroups) = own_blkio_cgroup() else {
        eprintln!("skipped: fio cannot be given a throttle here (needs root on cgroup v1's blkio)");
        return;
    };
    for (size, bytes) in [("4KiB", 4096.0), ("1MiB", 1048576.0)] {
        // The same dataset for every attempt: loaded once, measured again.
        let root = tempfile::tempdir().unwrap();
        // Other tests read the same disk meanwhile (three test threads on CI), and the
        // throttle lets a burst through after a pause: one minute's pair of rates can
        // differ by more than the cap's. Measured again, up to three times, the pair
        // must agree once; a cap not holding on the floor (or on fio) fails all three.
        let mut disagreed = Vec::new();
        for _attempt in 0..3 {
            match floor_and_fio(root.path(), &cgroups, size, bytes) {
                Pair::Skip(why) => {
                    eprintln!("skipped: {why}");
                    return;
                }
                Pair::NotCompared(why) => eprintln!("{why}"),
                Pair::Rates { floor, fio, what } => {
                    eprintln!("{size} under gp3: the floor {floor:.1} {what}, fio {fio:.1}");
                    if (floor / fio - 1.0).abs() <= 0.10 {
                        disagreed.clear();
                        break;
                    }
                    disagreed.push(format!("the floor {floor:.1} {what}, fio {fio:.1}"));
                }
            }
        }
        assert!(
            disagreed.len() < 3,
            "{size} under gp3, three times the floor's disk reads and fio's did not agree within 10%: {}",
            disagreed.join("; ")
        );
    }
}

/// One comparison of the floor's disk reads under `--disk-cap gp3` with fio's.
enum Pair {
    /// The cap cannot be had or seen here: the test says so and ends.
    Skip(String),
    /// The disk, not the cap, set a rate that minute.
    NotCompared(String),
    Rates {
        floor: f64,
        fio: f64,
        what: &'static str,
    },
}

fn floor_and_fio(
    root: &std::path::Path,
    cgroups: &std::path::Path,
    size: &str,
    bytes: f64,
) -> Pair {
    let out = run(
        root,
        &[
            "measure",
            "--engines",
            "floor",
            "--sizes",
            size,
            "--dataset-bytes",
            "1GiB",
            "--cap",
            "64MiB",
            "--cache",
            "cold",
            "--warmup",
            "100ms",
            "--measure",
            "4s",
            "--disk-cap",
            "gp3",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = newest_run(root).join("results.json");
    let json: Value = serde_json::from_slice(&std::fs::read(results).unwrap()).unwrap();
    let disk = &json["cap"]["disk"];
    if !throttled(disk) {
        return Pair::Skip(format!("the disk cap did not take here: {}", disk["notes"]));
    }
    let in_force = &disk["in_force"];
    let device = disk["device"].as_str().unwrap().split(' ').next().unwrap();
    let limit = |field: &str| format!("{device} {}", in_force[field].as_u64().unwrap());
    let limits = [
        ("blkio.throttle.read_iops_device", limit("read_iops")),
        ("blkio.throttle.read_bps_device", limit("read_bytes_per_s")),
    ];
    // The floor's disk reads a second: the bytes its process read from the disk in the
    // measurement's 200 ms windows, its first and last (partial) ones left out. Not
    // over the time its fetches took: the loop's bookkeeping between fetches (about a
    // millisecond a fetch at 1 MiB, outside the clock) gives the throttle's budget time
    // to build up, and bytes over busy time then read 15% above the cap.
    let m = &json["results"][0]["measured"];
    if m["disk_bytes_total"].as_f64().is_none() {
        return Pair::Skip(format!(
            "the floor's disk reads are not counted here: {}",
            json["results"][0]["disk_counter"]
        ));
    }
    let windows = m["windows"].as_array().expect("the measurement's windows");
    assert!(
        windows.len() >= 5,
        "a 4 s measurement in 200 ms windows: {windows:?}"
    );
    let full = &windows[1..windows.len() - 1];
    let disk_bytes: f64 = full
        .iter()
        .map(|w| w["disk_bytes"].as_f64().expect("a window's disk bytes"))
        .sum();
    let window_s = blobrace::stats::window::WINDOW_NS as f64 / 1e9;
    let start = |w: &Value| w["start_s"].as_f64().expect("a window's start");
    // Windows with no fetch are not kept: the span, not the count, is the time.
    let span_s = start(&full[full.len() - 1]) - start(&full[0]) + window_s;
    let floor_bytes_per_s = disk_bytes / span_s;
    let file = std::fs::read_dir(root.join("data/floor"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "bin"))
        .expect("the floor's file");
    let bs = if size == "4KiB" { "4k" } else { "1m" };
    let (fio_iops, fio_bytes_per_s) = fio_under(cgroups, &limits, &file, bs, 4);
    // This disk's own slow minutes (64 KiB p99 from 0.5 to 33 ms within an hour) can
    // hold fio below the cap: then the disk set both rates, at different moments,
    // and there is no cap to compare them under.
    // Other tests' reads of the same disk can do the same to the floor's minute.
    let (fio_share, floor_share) = if size == "4KiB" {
        let cap = in_force["read_iops"].as_f64().unwrap();
        (fio_iops / cap, floor_bytes_per_s / bytes / cap)
    } else {
        let cap = in_force["read_bytes_per_s"].as_f64().unwrap();
        (fio_bytes_per_s / cap, floor_bytes_per_s / cap)
    };
    if fio_share.min(floor_share) < 0.85 {
        return Pair::NotCompared(format!(
            "not compared at {size}: fio reached {:.0}% of the cap and the floor {:.0}%, so the disk, not the cap, set a rate that minute",
            fio_share * 100.0,
            floor_share * 100.0
        ));
    }
    if size == "4KiB" {
        Pair::Rates {
            floor: floor_bytes_per_s / bytes,
            fio: fio_iops,
            what: "reads a second",
        }
    } else {
        Pair::Rates {
            floor: floor_bytes_per_s / bytes,
            fio: fio_bytes_per_s / bytes,
            what: "MiB a second",
        }
    }
}

/// A server's container gets the run's disk cap on its volume's disk, written into its
/// own cgroup and again after each cold restart, recorded with its results as the cgroup
/// held it, felt by its fetches, and taken off when the run ends.
#[test]
fn a_servers_container_reads_under_the_disk_cap_and_it_is_taken_off_after() {
    let Some(url) = crate::common::server_url_or_skip("postgres", "the servers' disk cap") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    // An odd dataset size no other test uses; 64 KiB rows, cold: most fetches read
    // their TOAST chunks from the disk.
    let base = [
        "--engines",
        "postgres",
        "--sizes",
        "64KiB",
        "--dataset-bytes",
        "72MiB",
        "--postgres-url",
        url.as_str(),
    ];
    let out = run(
        root.path(),
        &[
            &["measure"][..],
            &base,
            &[
                "--cap",
                "256MiB",
                "--cache",
                "cold",
                "--warmup",
                "100ms",
                "--measure",
                "1s",
                "--disk-cap",
                "riops=100",
            ],
        ]
        .concat(),
    );
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    let (_, json) = only_run(root.path());
    if !throttled(&json["cap"]["disk"]) {
        assert!(said.contains("postgres: disk not capped: "), "{said}");
        eprintln!(
            "skipped: no disk cap here: {}",
            json["cap"]["disk"]["notes"]
        );
        return;
    }
    assert!(
        said.contains("postgres: disk capped at read 100 IOPS on "),
        "{said}"
    );
    let r = &json["results"][0];
    let disk = &r["cap"]["disk"];
    // Read back after the cold start's restart: written again into its new cgroup.
    // (Once, beside other tests, the result held no disk cap at all: the run's lines
    // and the whole cap are said, to find why if it comes back.)
    assert_eq!(
        disk["in_force"]["read_iops"], 100,
        "{}\nthe run said:\n{said}",
        r["cap"]
    );
    assert!(
        disk["method"].as_str().unwrap().starts_with("container's "),
        "{disk}"
    );
    let mean_ms = r["measured"]["latency"]["mean_ns"].as_f64().unwrap() / 1e6;
    assert!(mean_ms >= 5.0, "mean {mean_ms} ms under 100 IOPS");
    // Taken off: the container's cgroup holds no limit on the device now.
    let cgroup = disk["cgroup"].as_str().unwrap();
    let device = disk["device"].as_str().unwrap().split(' ').next().unwrap();
    let file = if disk["method"].as_str().unwrap().contains("v1") {
        "blkio.throttle.read_iops_device"
    } else {
        "io.max"
    };
    let held = std::fs::read_to_string(std::path::Path::new(cgroup).join(file)).unwrap_or_default();
    assert!(
        !held
            .lines()
            .any(|l| l.starts_with(device) && !l.contains("riops=max")),
        "still throttled after the run: {held}"
    );
    killed_runs_cap_is_taken_off_by_the_next(root.path(), &base, cgroup, device, file);
    let dropped = run(root.path(), &[&["drop"][..], &base].concat());
    assert!(dropped.status.success(), "{}", stderr(&dropped));
}

/// A run killed while it holds the disk cap on a server's container leaves the limit in
/// the container's cgroup (nothing ran to take it off); the next run, asking for no disk
/// cap, takes it off before it measures and says so, and its results record no cap.
fn killed_runs_cap_is_taken_off_by_the_next(
    root: &std::path::Path,
    base: &[&str],
    cgroup: &str,
    device: &str,
    file: &str,
) {
    use std::io::BufRead;
    let mut child = crate::common::blobrace()
        .args([&["measure"][..], base].concat())
        .args(["--cap", "256MiB", "--cache", "steady", "--measure", "60s"])
        .args(["--disk-cap", "riops=100", "--data-dir"])
        .arg(root.join("data"))
        .arg("--results-dir")
        .arg(root.join("killed"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = String::new();
    for line in lines {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.contains("postgres: disk capped at") {
            break;
        }
    }
    assert!(said.contains("postgres: disk capped at"), "{said}");
    child.kill().unwrap();
    child.wait().unwrap();
    let held = || std::fs::read_to_string(std::path::Path::new(cgroup).join(file)).unwrap();
    let limited = |text: &str| {
        text.lines()
            .any(|l| l.starts_with(device) && !l.contains("riops=max"))
    };
    // A steady cell restarts nothing: the killed run's cgroup is the container's still.
    assert!(limited(&held()), "the kill left no limit: {}", held());
    let out = run(
        root,
        &[
            &["measure"][..],
            base,
            &["--cap", "256MiB", "--cache", "steady", "--measure", "1s"],
        ]
        .concat(),
    );
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("postgres: its container's cgroup held a disk cap (read 100 IOPS on ")
            && said.contains("did not take off (stopped before its end): taken off"),
        "{said}"
    );
    assert!(!limited(&held()), "still throttled: {}", held());
    let json: Value = serde_json::from_slice(
        &std::fs::read(crate::common::newest_run(root).join("results.json")).unwrap(),
    )
    .unwrap();
    let r = &json["results"][0];
    assert!(r["cap"]["disk"].is_null(), "{}", r["cap"]);
}
