//! `--metrics-addr`: a run serves its progress as OpenMetrics while it goes, scraped
//! and parsed by the Prometheus client's own parser (scripts/openmetrics-check.sh); an
//! address it cannot listen on is one line and exit 2 before any work.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{blobrace, run, stderr};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn scrape(url: &str) -> Option<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/openmetrics-check.sh");
    let out = Command::new(script).arg(url).output().unwrap();
    if out.status.success() {
        return Some(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let why = stderr(&out);
    // Nothing listening yet (or any more) is a connection refused; anything else
    // (a parse error, no prometheus-client) is the test's failure.
    assert!(
        why.contains("Connection refused") || why.contains("Errno 111"),
        "the scrape failed: {why}"
    );
    None
}

#[test]
fn a_run_serves_its_progress_as_openmetrics_while_it_goes() {
    let root = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/metrics");
    // Sixteen cells of 1.5 s: once the first is measured, the run has more than 20 s
    // left to be scraped in, and it is stopped (SIGTERM) as soon as a scrape shows it.
    // Four cells once left 4.5 s, and each scrape starts Python: on a loaded 2-core
    // machine the run ended before a scrape saw a measured cell.
    let sizes = "4KiB,8KiB,16KiB,32KiB,64KiB,128KiB,256KiB,512KiB";
    let mut child = blobrace()
        .args(["measure", "--engines", "floor,sqlite", "--sizes", sizes])
        .args([
            "--dataset-bytes",
            "8MiB",
            "--warmup",
            "100ms",
            "--measure",
            "1500ms",
            "--cache",
            "cold",
        ])
        .args(["--cap", "none", "--cpus", "none"])
        .arg("--data-dir")
        .arg(root.path().join("data"))
        .arg("--results-dir")
        .arg(root.path().join("results"))
        .args(["--metrics-addr", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Scrape until a measured cell shows, however long the loads take; a run that ends
    // first never showed one, and fails below.
    let mut seen = None;
    while child.try_wait().unwrap().is_none() {
        if let Some(text) = scrape(&url)
            && text.contains("blobrace_fetches{")
        {
            seen = Some(text);
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let stopped = seen.is_some() && child.try_wait().unwrap().is_none();
    if stopped {
        // SAFETY: a plain kill(2) of our own child, which has not been reaped yet.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    }
    let out = child.wait_with_output().unwrap();
    let said = stderr(&out);
    assert!(
        said.contains(&format!(
            "metrics: OpenMetrics at http://127.0.0.1:{port}/metrics"
        )),
        "{said}"
    );
    let text = seen.unwrap_or_else(|| {
        panic!(
            "the run ended before a scrape showed a measured cell ({:?}): {said}",
            out.status
        )
    });
    // Stopped by the signal, it exits as a shell expects (128 + 15), saying so.
    if stopped {
        assert_eq!(out.status.code(), Some(143), "{said}");
    } else {
        assert!(out.status.success(), "{said}");
    }
    assert!(
        text.starts_with("content-type: application/openmetrics-text"),
        "{text}"
    );
    // Parsed back: the plan's 16 cells, one of them under way, a measured cell's p50.
    let value = |name: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(&format!("{name}{{")))
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {text}"))
    };
    assert_eq!(value("blobrace_cells"), 16.0, "{text}");
    assert!(value("blobrace_cell") >= 1.0, "{text}");
    assert!(value("blobrace_left_seconds") >= 0.0, "{text}");
    let p50 = text
        .lines()
        .find(|l| {
            l.starts_with("blobrace_fetch_latency_seconds{") && l.contains("percentile=\"p50\"")
        })
        .expect("a p50");
    let seconds: f64 = p50.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(seconds > 0.0 && seconds < 1.0, "{p50}");
    // The run is over: nothing listens there any more.
    assert!(scrape(&url).is_none());
}

#[test]
fn an_address_it_cannot_listen_on_is_one_line_before_any_work() {
    let root = tempfile::tempdir().unwrap();
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    for (addr, says) in [
        (format!("127.0.0.1:{port}"), "cannot listen there"),
        ("localhost:9464".to_string(), "a host name is not resolved"),
    ] {
        let out = run(
            root.path(),
            &[
                "measure",
                "--engines",
                "floor",
                "--sizes",
                "4KiB",
                "--metrics-addr",
                &addr,
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        assert!(
            !root.path().join("data/floor").exists(),
            "nothing loaded before the refusal"
        );
    }
}
