//! Server containers through Docker's API. Skipped (with the reason printed) where
//! Docker is absent; a failure when BLOBRACE_REQUIRE_DOCKER=1, as CI sets it.

use std::process::Command;

use crate::common::{blobrace, docker_required, env_json, stderr, stdout};
use serde_json::Value;

/// False (after printing why) when the test cannot run here; panics if it must.
fn available(what: &str) -> bool {
    let ok = Command::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output();
    match ok {
        Ok(out) if out.status.success() => true,
        other => {
            let why = match other {
                Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
                Err(e) => e.to_string(),
            };
            assert!(
                !docker_required(),
                "BLOBRACE_REQUIRE_DOCKER=1 but Docker is unavailable for {what}: {why}"
            );
            eprintln!("skipped {what}: Docker is unavailable ({why})");
            false
        }
    }
}

fn servers(project: Option<&str>, cap: &[&str]) -> Value {
    let mut cmd = blobrace();
    cmd.args(["env", "--sizes", "1KiB", "--data-dir"])
        .arg(tempfile::tempdir().unwrap().path())
        .args(cap);
    if let Some(p) = project {
        cmd.env("BLOBRACE_COMPOSE_PROJECT", p);
    }
    let json = env_json(&cmd.output().unwrap());
    json["servers"].clone()
}

#[test]
fn compose_servers_report_the_cap_docker_enforces() {
    if !available("the compose server caps") {
        return;
    }
    // Read while no other test restarts them under another cap.
    crate::common::hold_servers();
    for service in ["postgres", "mariadb", "dolt"] {
        // What the Docker CLI says the running service's container is capped at (1 GiB
        // for the full profile, 256 MiB after a quick compose run): the API read must agree.
        let mut filter = vec![
            "ps".to_string(),
            "-q".into(),
            "--filter".into(),
            format!("label=com.docker.compose.service={service}"),
        ];
        if let Ok(project) = std::env::var("BLOBRACE_COMPOSE_PROJECT") {
            filter.extend([
                "--filter".into(),
                format!("label=com.docker.compose.project={project}"),
            ]);
        }
        let ps = Command::new("docker").args(&filter).output().unwrap();
        let id = stdout(&ps).lines().next().unwrap_or_default().to_string();
        if id.is_empty() {
            assert!(
                !docker_required(),
                "BLOBRACE_REQUIRE_DOCKER=1 but no {service} container runs"
            );
            eprintln!("skipped {service}: no container runs");
            continue;
        }
        let inspect = Command::new("docker")
            .args([
                "inspect",
                "--format",
                "{{.HostConfig.Memory}} {{.HostConfig.NanoCpus}} {{.Image}}",
                &id,
            ])
            .output()
            .unwrap();
        let fields: Vec<String> = stdout(&inspect)
            .split_whitespace()
            .map(String::from)
            .collect();
        let [memory, nano_cpus, image_id] = &fields[..] else {
            panic!("docker inspect {id}: {fields:?}");
        };
        let (memory, nano_cpus) = (
            memory.parse::<u64>().unwrap(),
            nano_cpus.parse::<u64>().unwrap(),
        );
        assert!(memory > 0, "the compose file caps {service}");
        let cpus = nano_cpus as f64 / 1e9;
        let seen = servers(
            None,
            &["--cap", &memory.to_string(), "--cpus", &cpus.to_string()],
        );
        let s = &seen[service];
        assert_eq!(s["memory_limit_bytes"], memory, "{service}: {s}");
        assert_eq!(s["cpu_limit"], cpus, "{service}: {s}");
        assert_eq!(s["notes"], serde_json::json!([]), "{service}: {s}");
        // The image id pins what ran, whatever its tag points at later.
        assert!(
            s["cgroup"].as_str().unwrap().contains(image_id.as_str()),
            "{service} names image {image_id}: {s}"
        );
        // Asked for another cap, the difference is named.
        let other = servers(None, &["--cap", &(memory * 2).to_string()]);
        assert!(
            other[service]["notes"]
                .to_string()
                .contains("was requested"),
            "{service}: {}",
            other[service]
        );
    }
}

/// An image with `sh` and `sleep`: the offline base, or the server images. None (after
/// printing why) when none is here; panics if Docker is required.
fn base_image() -> Option<&'static str> {
    let candidates = [
        "blobrace/debian-base:bookworm",
        "blobrace/postgres-offline:15",
        "postgres:17",
        "mariadb:11.4",
    ];
    let found = candidates.into_iter().find(|image| {
        Command::new("docker")
            .args(["image", "inspect", image])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        assert!(
            !docker_required(),
            "BLOBRACE_REQUIRE_DOCKER=1 but none of {candidates:?} is present: pull them or run scripts/offline-images.sh"
        );
        eprintln!("skipped: none of {candidates:?} is present");
    }
    found
}

#[test]
fn a_server_container_without_a_memory_cap_is_reported_loudly() {
    if !available("the uncapped-container check") {
        return;
    }
    let Some(image) = base_image() else {
        return;
    };
    // The stand-in is labelled as a compose postgres: a test reaching PostgreSQL beside
    // it would find it "in several compose projects" (disk_cap's failed so, once).
    crate::common::hold_server("postgres");
    let project = format!("blobrace-uncapped-{}", std::process::id());
    let started = Command::new("docker")
        .args(["run", "-d", "--rm", "--entrypoint", "sleep", "--label"])
        .arg(format!("com.docker.compose.project={project}"))
        .args([
            "--label",
            "com.docker.compose.service=postgres",
            image,
            "120",
        ])
        .output()
        .unwrap();
    assert!(started.status.success(), "{}", stderr(&started));
    let id = stdout(&started).trim().to_string();
    let servers = servers(Some(&project), &[]);
    let _ = Command::new("docker").args(["rm", "-f", &id]).output();
    let pg = &servers["postgres"];
    assert_eq!(pg["origin"], "uncapped", "{pg}");
    assert!(pg["memory_limit_bytes"].is_null(), "{pg}");
    assert!(pg["notes"].to_string().contains("UNCAPPED"), "{pg}");
    assert!(
        servers["mariadb"]
            .as_str()
            .unwrap()
            .starts_with("not running"),
        "{}",
        servers["mariadb"]
    );
}

#[test]
fn a_server_killed_by_its_cap_is_named_as_the_cause() {
    if !available("the OOM-kill diagnosis") {
        return;
    }
    let Some(image) = base_image() else {
        return;
    };
    // Alone beside the server tests, whose cold starts restart containers: once, in a
    // CI run beside them, the survivor's OOM event did not show within 30 s.
    crate::common::hold_servers();
    // `tail` of an endless line holds all of it: the kernel kills it at the 16MiB cap.
    let hog = Command::new("docker")
        .args(["run", "-d", "-m", "16m", "--memory-swap", "16m"])
        .args(["--entrypoint", "sh", image, "-c", "tail /dev/zero"])
        .output()
        .unwrap();
    assert!(hog.status.success(), "{}", stderr(&hog));
    let hog = stdout(&hog).trim().to_string();
    let sleeper = Command::new("docker")
        .args([
            "run",
            "-d",
            "-m",
            "64m",
            "--entrypoint",
            "sleep",
            image,
            "60",
        ])
        .output()
        .unwrap();
    assert!(sleeper.status.success(), "{}", stderr(&sleeper));
    let sleeper = stdout(&sleeper).trim().to_string();
    // A child killed inside a container that goes on, as a PostgreSQL backend is:
    // the container's own OOMKilled flag stays false. Its `tail` waits for the watch
    // to have begun, as a server's backend is killed well after the run watches it.
    let survivor = Command::new("docker")
        .args(["run", "-d", "-m", "16m", "--memory-swap", "16m"])
        .args([
            "--entrypoint",
            "sh",
            image,
            "-c",
            "until [ -f /tmp/go ]; do sleep 0.1; done; tail /dev/zero; sleep 60",
        ])
        .output()
        .unwrap();
    assert!(survivor.status.success(), "{}", stderr(&survivor));
    let survivor = stdout(&survivor).trim().to_string();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let docker = rt.block_on(blobrace::docker::connect()).unwrap();
    let watch = rt.block_on(blobrace::docker::OomWatch::start(&docker, &survivor));
    let sleeper_watch = rt.block_on(blobrace::docker::OomWatch::start(&docker, &sleeper));
    let go = Command::new("docker")
        .args(["exec", &survivor, "touch", "/tmp/go"])
        .output()
        .unwrap();
    assert!(go.status.success(), "{}", stderr(&go));
    let _ = Command::new("docker")
        .args(["wait", &hog])
        .output()
        .unwrap();
    // The survivor's `tail` meets the cap within a second or two.
    let started = std::time::Instant::now();
    while rt.block_on(blobrace::docker::kernel_oom_kills(&docker, &survivor)) == Some(0)
        && started.elapsed() < std::time::Duration::from_secs(30)
    {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // Docker keeps its last 256 events only: 100 `docker exec`s (three events each)
    // push the kill's `oom` event out, as five servers' health checks do in half a
    // minute. The kernel's count in the container's cgroup still names it.
    for _ in 0..100 {
        let _ = Command::new("docker")
            .args(["exec", &sleeper, "true"])
            .output();
    }
    let events_left = rt
        .block_on(blobrace::docker::oom_events_since(
            &docker,
            &survivor,
            watch.since_secs,
        ))
        .unwrap();

    let (killed, running, inside, inside_unasked) = rt.block_on(async {
        (
            blobrace::docker::why_down(&docker, &hog, None).await,
            blobrace::docker::why_down(&docker, &sleeper, Some(&sleeper_watch)).await,
            blobrace::docker::why_down(&docker, &survivor, Some(&watch)).await,
            blobrace::docker::why_down(&docker, &survivor, None).await,
        )
    });
    let survivor_state = Command::new("docker")
        .args([
            "inspect",
            "-f",
            "{{.State.Status}} oom-flag {{.State.OOMKilled}} exit {{.State.ExitCode}}",
            &survivor,
        ])
        .output()
        .map(|o| stdout(&o))
        .unwrap_or_default();
    let _ = Command::new("docker")
        .args(["rm", "-f", &hog, &sleeper, &survivor])
        .output();
    let inside = inside.unwrap_or_else(|| {
        panic!(
            "a process OOM-killed inside a running container is named (after {:.1} s; the container: {survivor_state})",
            started.elapsed().as_secs_f64()
        )
    });
    assert!(
        watch.kernel_kills.is_some(),
        "the container's cgroup is read from the host"
    );
    assert_eq!(
        events_left, 0,
        "Docker's own events still hold the kill (a Docker that keeps more than 256: exec more)"
    );
    // Once per kill: the kernel may act twice on one `tail` (seen: "acted 2 time(s)").
    assert!(inside.contains("OOM killer acted "), "{inside}");
    assert!(inside.contains("went on"), "{inside}");
    assert!(inside.contains("--clients"), "{inside}");
    assert_eq!(
        inside_unasked, None,
        "without a start time only the container counts"
    );
    let killed = killed.expect("a killed container is down");
    assert!(killed.contains("OOM-killed"), "{killed}");
    assert!(killed.contains("16MiB"), "{killed}");
    assert!(killed.contains("BLOBRACE_CAP"), "{killed}");
    assert_eq!(running, None, "a running container is not down");
}

/// A server that stops while starting under a smaller cap (Dolt holding a full run's
/// datasets under the quick 256 MiB) is said at once with Docker's reason, not after
/// the whole wait for its health; its stopped container is still found (its limits to
/// put back, its volume on the disk) and started again under its own cap.
#[test]
fn a_container_that_stops_while_starting_under_a_cap_is_said_at_once_and_put_back() {
    if !available("a container stopping under a cap") {
        return;
    }
    let Some(image) = base_image() else {
        return;
    };
    let service = format!("blobrace-stops-{}", std::process::id());
    // 48 MiB held at start (`tail -c` keeps what it will print): fine under 256 MiB,
    // killed under 16 MiB, and then the container exits.
    // Labelled with the project the run searches (CI sets BLOBRACE_COMPOSE_PROJECT),
    // else find_service would look for it in that project and not find it.
    let project = blobrace::docker::compose_project().unwrap_or_else(|| service.clone());
    let started = Command::new("docker")
        .args(["run", "-d", "-m", "256m", "--memory-swap", "256m"])
        .args(["--label", &format!("com.docker.compose.service={service}")])
        .args(["--label", &format!("com.docker.compose.project={project}")])
        // Healthy once its start is done (the file is made after the 48 MiB): a
        // health test that passed while `tail` still ran would hide the kill.
        .args(["--health-cmd", "test -f /tmp/ready", "--health-interval", "1s"])
        .args(["--stop-timeout", "1", "--entrypoint", "sh", image, "-c"])
        .arg("rm -f /tmp/ready; head -c 48m /dev/zero | tail -c 48m > /dev/null || exit 3; touch /tmp/ready; exec sleep 600")
        .output()
        .unwrap();
    assert!(started.status.success(), "{}", stderr(&started));
    let id = stdout(&started).trim().to_string();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let docker = rt.block_on(blobrace::docker::connect()).unwrap();
    let outcome = rt.block_on(async {
        let found = blobrace::docker::find_service_any(&docker, &service).await?;
        let timeout = std::time::Duration::from_secs(120);
        let began = std::time::Instant::now();
        let small =
            blobrace::docker::restart_with_limits(&docker, &id, 16 << 20, None, timeout).await;
        let took = began.elapsed();
        let running = blobrace::docker::find_service(&docker, &service).await?;
        let stopped = blobrace::docker::find_service_any(&docker, &service).await?;
        let back =
            blobrace::docker::restart_with_limits(&docker, &id, 256 << 20, None, timeout).await;
        anyhow::Ok((found, small, took, running, stopped, back))
    });
    let _ = Command::new("docker").args(["rm", "-f", &id]).output();
    let (found, small, took, running, stopped, back) = outcome.unwrap();
    assert_eq!(
        found.map(|f| f.0),
        Some(id.clone()),
        "the running container"
    );
    let why = format!("{:#}", small.expect_err("it cannot start under 16 MiB"));
    eprintln!("{why}");
    assert!(why.contains("stopped while starting"), "{why}");
    assert!(
        why.contains("OOM-killed") || why.contains("exit code 3"),
        "Docker's reason: {why}"
    );
    assert!(
        took < std::time::Duration::from_secs(60),
        "said after {took:?}, not at the end of the 120 s wait: {why}"
    );
    assert!(running.is_none(), "it is not running: {running:?}");
    assert_eq!(
        stopped.map(|f| f.0),
        Some(id),
        "the stopped container is found"
    );
    back.expect("started again under its own cap, a stopped container is not stopped first");
}
