//! Everything a run sets up on the machine outside its own files (its cgroups, the data
//! disk's readahead, the servers' memory and disk caps, the network proxy), killed with
//! SIGKILL at each step of that setup and of the work after it: the same command again
//! finds what was left, takes it down or puts it back, and runs clean, and after it the
//! machine is as it was before the first run. (The emulated disk has its own, in
//! slow_disk.rs: its steps are devices and mounts.)

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::common::{blobrace, docker, newest_run, run_s, server_url_or_skip, stderr};
use crate::network::proxies_of;
use crate::readahead::LoopDisk;

/// The host's readahead on the test's disk, which every run sets to 128 KiB.
const HOST_READAHEAD_KB: u64 = 4096;

fn args(url: &str, data: &Path, results: &Path, measure: &str) -> Vec<String> {
    let (data, results) = (data.display().to_string(), results.display().to_string());
    [
        "measure",
        "--engines",
        "floor,postgres-raw",
        "--sizes",
        "64KiB",
        // An odd size no other test loads: its own PostgreSQL dataset.
        "--dataset-bytes",
        "24MiB",
        "--cap",
        "256MiB",
        // Linux's default, as every run here asks unless told: the servers' volume
        // disk is held by the tests beside this one at it.
        "--readahead",
        "128",
        "--network-rtt",
        "0ms",
        "--disk-cap",
        "riops=5000",
        "--warmup",
        "50ms",
        "--no-wait",
        "--measure",
        measure,
        "--postgres-url",
        url,
        "--data-dir",
        &data,
        "--results-dir",
        &results,
    ]
    .iter()
    .chain(&crate::common::ONE_STEADY_CLIENT)
    .map(|s| s.to_string())
    .collect()
}

/// The cgroups named for one of `pids` (`blobrace-<pid>`, a run's own) anywhere in the
/// mounted hierarchies, a few levels down.
fn cgroups_of(pids: &[u32]) -> Vec<PathBuf> {
    let names: Vec<String> = pids.iter().map(|p| format!("blobrace-{p}")).collect();
    let mut found = Vec::new();
    let mut level = vec![PathBuf::from("/sys/fs/cgroup")];
    for _ in 0..5 {
        let mut next = Vec::new();
        for dir in level {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                let name = entry.file_name().to_string_lossy().into_owned();
                if names.contains(&name) {
                    found.push(entry.path());
                }
                next.push(entry.path());
            }
        }
        level = next;
    }
    found
}

/// Whether `pid` runs (a zombie, reaped by nobody yet, does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .split_once(") ")
            .is_some_and(|(_, r)| r.starts_with('Z'))
    })
}

fn in_own_cgroup(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|text| {
        text.lines()
            .any(|l| l.ends_with(&format!("/blobrace-{pid}")))
    })
}

/// The memory limit Docker holds for `container`, in bytes (0: none).
fn container_memory(container: &str) -> u64 {
    docker(&["inspect", "-f", "{{.HostConfig.Memory}}", container])
        .parse()
        .unwrap()
}

/// Whether the container's cgroup (as the run recorded it) holds a read limit.
fn container_disk_limited(result: &Value) -> Option<String> {
    let disk = &result["cap"]["disk"];
    let cgroup = disk["cgroup"].as_str()?;
    let device = disk["device"].as_str()?.split(' ').next()?;
    let text = ["blkio.throttle.read_iops_device", "io.max"]
        .iter()
        .find_map(|f| std::fs::read_to_string(Path::new(cgroup).join(f)).ok())?;
    text.lines()
        .any(|l| l.starts_with(device) && !l.contains("riops=max"))
        .then_some(text)
}

#[test]
fn a_run_killed_at_each_step_of_its_setup_leaves_the_machine_as_it_was_after_the_next() {
    if !crate::cap::is_root() {
        eprintln!("skipped: cgroups, readahead and container caps need root");
        return;
    }
    let Some(url) = server_url_or_skip("postgres", "the setup killed at each step") else {
        return;
    };
    let Some(disk) = LoopDisk::new() else { return };
    disk.set_readahead(HOST_READAHEAD_KB);
    let container = crate::common::service_container("postgres");
    let own_memory = container_memory(&container);
    let root = disk.mount.join("run");
    let data = root.join("data");
    let killed = root.join("killed");
    // `newest_run(&root)` reads root/results.
    let kept = root.join("results");

    // Each step as the machine shows it, given the run's pid.
    type Step<'a> = (&'static str, Box<dyn Fn(u32) -> bool + 'a>);
    let steps: Vec<Step> = vec![
        ("its own cgroup entered", Box::new(in_own_cgroup)),
        ("the readahead set", Box::new(|_| disk.readahead() == 128)),
        (
            "the server's memory capped",
            Box::new(|_| container_memory(&container) != own_memory),
        ),
        (
            "the proxy started",
            Box::new(|pid| !proxies_of(pid).is_empty()),
        ),
        ("the floor loading", {
            let p = data.join("floor");
            Box::new(move |_| p.exists())
        }),
        ("measuring, the loads recorded", {
            let p = killed.clone();
            Box::new(move |_| {
                std::fs::read_dir(&p)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .any(|run| run.path().join("results.json").is_file())
            })
        }),
    ];
    let (mut reached, mut clean) = (Vec::new(), 0);
    for (name, step) in &steps {
        // The loading step exists only while the floor's dataset is being made.
        if *name == "the floor loading" {
            let _ = std::fs::remove_dir_all(data.join("floor"));
        }
        let mut child = blobrace()
            .args(args(&url, &data, &killed, "60s"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut proxies = Vec::new();
        let hit = loop {
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            proxies.extend(proxies_of(pid));
            if step(pid) {
                break true;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        proxies.extend(proxies_of(pid));
        let _ = child.kill();
        child.wait().unwrap();
        proxies.sort_unstable();
        proxies.dedup();
        if hit {
            reached.push(*name);
        }

        let rerun = blobrace()
            .args(args(&url, &data, &kept, "300ms"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let rerun_pid = rerun.id();
        let out = rerun.wait_with_output().unwrap();
        let said = stderr(&out);
        assert!(out.status.success(), "after a kill at {name}: {said}");
        // The killed run's cgroups, and the next run's own.
        let left = cgroups_of(&[pid, rerun_pid]);
        assert!(
            left.is_empty(),
            "after a kill at {name}: {left:?} left\n{said}"
        );
        assert_eq!(
            disk.readahead(),
            HOST_READAHEAD_KB,
            "after a kill at {name}: the host's readahead not put back\n{said}"
        );
        let running: Vec<u32> = proxies.iter().copied().filter(|p| alive(*p)).collect();
        assert!(
            running.is_empty(),
            "after a kill at {name}: the killed run's proxy {running:?} runs"
        );
        assert_eq!(
            container_memory(&container),
            own_memory,
            "after a kill at {name}: the server's container not at its own cap\n{said}"
        );
        let json: Value =
            serde_json::from_slice(&std::fs::read(newest_run(&root).join("results.json")).unwrap())
                .unwrap();
        let results = json["results"].as_array().unwrap();
        assert_eq!(results.len(), 2, "after a kill at {name}: {json:#}");
        for r in results {
            assert!(
                r["measured"]["count"].as_u64().unwrap_or(0) > 0,
                "after a kill at {name}: {r:#}"
            );
            if let Some(held) = container_disk_limited(r) {
                panic!("after a kill at {name}: the container is still throttled: {held}");
            }
        }
        clean += 1;
    }
    eprintln!(
        "killed at {} of {} steps ({}); {clean} runs after them clean",
        reached.len(),
        steps.len(),
        reached.join(", ")
    );
    assert!(reached.len() >= 5, "{reached:?}");
    // `run_s` gives it root/data, the runs' data directory.
    let dropped = run_s(
        &root,
        &[
            "drop",
            "--engines",
            "floor,postgres-raw",
            "--sizes",
            "64KiB",
            "--dataset-bytes",
            "24MiB",
            "--postgres-url",
            &url,
        ]
        .map(String::from),
    );
    assert!(dropped.status.success(), "{}", stderr(&dropped));
}
