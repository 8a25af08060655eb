//! The run's progress served as OpenMetrics (Prometheus' text format) while it runs
//! (`--metrics-addr`): a long run on a cluster or in CI can be watched by a scraper, not
//! only on its terminal. A sink like the others (it sees the same findings and
//! progress), and a thread of its own that answers `GET /metrics`; nothing of it is on
//! the timed path, and the figures are those already recorded.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};

use super::progress::Progress;
use super::sinks::{Finding, Sink};
use crate::records::results::RunResults;

/// What a scrape reads: the last state the sink saw.
#[derive(Default)]
struct State {
    run_id: String,
    cell: usize,
    cells: usize,
    /// Seconds left, from this part's pace (or the presets until it has one).
    left_seconds: Option<f64>,
    /// (engine, size, cache) → (fetches measured, p50 s, p99 s).
    cells_measured: BTreeMap<(String, String, String), (u64, f64, f64)>,
    datasets_loaded: usize,
    failures: usize,
    complete: bool,
}

pub struct Metrics {
    state: Arc<Mutex<State>>,
    /// Where it answers (the port the system picked for port 0).
    pub addr: SocketAddr,
}

impl Metrics {
    /// Listen on `addr`: first of all, so that an address that cannot be had is the
    /// run's error before anything is set up (the cap, the readahead, an emulated disk).
    pub fn bind(addr: SocketAddr) -> Result<TcpListener> {
        Ok(TcpListener::bind(addr).map_err(|e| crate::error::InputError::Value {
            what: "--metrics-addr (BLOBRACE_METRICS_ADDR)",
            input: addr.to_string(),
            why: format!("cannot listen there ({e}): choose another port (in use?), an address of this machine, or port 0 for one the system picks"),
        })?)
    }

    /// Answer scrapes on `listener` until the process ends, each on a thread of its
    /// own: a client that stalls (cut off after 5 s) holds up no other scrape.
    pub fn serve(listener: TcpListener, run_id: &str) -> Result<Self> {
        let addr = listener
            .local_addr()
            .context("the metrics listener's address")?;
        let state = Arc::new(Mutex::new(State {
            run_id: run_id.to_string(),
            ..State::default()
        }));
        let shared = Arc::clone(&state);
        std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || {
                // At most SCRAPES at once: a flood of clients on an open address cannot
                // grow the run's memory inside its own cap.
                let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
                for stream in listener.incoming().flatten() {
                    use std::sync::atomic::Ordering;
                    if open.fetch_add(1, Ordering::AcqRel) >= SCRAPES {
                        open.fetch_sub(1, Ordering::AcqRel);
                        continue; // dropped: the client sees its connection closed
                    }
                    let (shared, done) = (Arc::clone(&shared), Arc::clone(&open));
                    let spawned = std::thread::Builder::new()
                        .name("metrics scrape".into())
                        .spawn(move || {
                            let _ = answer(stream, &shared);
                            done.fetch_sub(1, Ordering::AcqRel);
                        });
                    if spawned.is_err() {
                        open.fetch_sub(1, Ordering::AcqRel);
                    }
                }
            })
            .context("cannot start the metrics thread")?;
        Ok(Self { state, addr })
    }

    fn update(&self, change: impl FnOnce(&mut State)) {
        if let Ok(mut state) = self.state.lock() {
            change(&mut state);
        }
    }
}

impl Sink for Metrics {
    fn found(&mut self, run: &RunResults, finding: &Finding<'_>) -> Result<()> {
        self.update(|s| match finding {
            Finding::Result(r) => {
                let l = &r.measured.latency;
                s.cells_measured.insert(
                    (
                        r.engine.name().to_string(),
                        crate::size::format_bytes(r.size_bytes),
                        r.scenario.cache.name().to_string(),
                    ),
                    (l.count, l.p50_ns as f64 / 1e9, l.p99_ns as f64 / 1e9),
                );
            }
            Finding::Loads => s.datasets_loaded = run.loads.len(),
            Finding::Failure(_) => s.failures = run.failures.len(),
            _ => {}
        });
        Ok(())
    }

    fn finished(&mut self, run: &RunResults) -> Result<()> {
        self.update(|s| {
            s.complete = run.complete;
            s.left_seconds = Some(0.0);
        });
        Ok(())
    }

    fn progress(&self, event: &Progress<'_>) {
        if let Progress::Cell(cell) = event {
            self.update(|s| {
                s.cell = cell.n;
                s.cells = cell.of;
                s.left_seconds = Some(
                    cell.left
                        .unwrap_or_else(|| cell.presets_left.middle())
                        .as_secs_f64(),
                );
            });
        }
    }
}

/// Answer one request: the metrics for `GET /metrics`, 404 for anything else.
/// Scrapes answered at once; more are closed until one ends.
const SCRAPES: usize = 8;

/// The most of a request read: a scraper's request line and headers fit in far less.
const REQUEST_BYTES: u64 = 16 << 10;

fn answer(stream: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(std::io::Read::take(&stream, REQUEST_BYTES));
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers, up to the blank line (a scraper sends a few).
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let mut stream = &stream;
    let path = request.split_whitespace().nth(1).unwrap_or("");
    if !request.starts_with("GET ") || path.split('?').next() != Some("/metrics") {
        let body = "blobrace serves GET /metrics only\n";
        return write!(
            stream,
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    }
    let body = match state.lock() {
        Ok(state) => render(&state),
        Err(_) => String::from("# EOF\n"),
    };
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A label value as OpenMetrics escapes it.
fn escape(value: &str) -> String {
    value
        .replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

fn render(s: &State) -> String {
    let mut out = String::new();
    let run = format!("run_id=\"{}\"", escape(&s.run_id));
    let family = |out: &mut String, name: &str, kind: &str, help: &str, unit: Option<&str>| {
        let _ = writeln!(out, "# TYPE {name} {kind}");
        if let Some(unit) = unit {
            let _ = writeln!(out, "# UNIT {name} {unit}");
        }
        let _ = writeln!(out, "# HELP {name} {help}");
    };
    family(
        &mut out,
        "blobrace_cells",
        "gauge",
        "Cells the run measures in all.",
        None,
    );
    let _ = writeln!(out, "blobrace_cells{{{run}}} {}", s.cells);
    family(
        &mut out,
        "blobrace_cell",
        "gauge",
        "The cell being measured, counted from 1 (0 before the first).",
        None,
    );
    let _ = writeln!(out, "blobrace_cell{{{run}}} {}", s.cell);
    if let Some(left) = s.left_seconds {
        family(
            &mut out,
            "blobrace_left_seconds",
            "gauge",
            "Time the run has left, from its pace so far (the presets' figure until it has one).",
            Some("seconds"),
        );
        let _ = writeln!(out, "blobrace_left_seconds{{{run}}} {left:.1}");
    }
    family(
        &mut out,
        "blobrace_complete",
        "gauge",
        "1 once the run has measured every cell.",
        None,
    );
    let _ = writeln!(out, "blobrace_complete{{{run}}} {}", u8::from(s.complete));
    family(
        &mut out,
        "blobrace_datasets_loaded",
        "gauge",
        "Datasets loaded, or found loaded, for the run.",
        None,
    );
    let _ = writeln!(
        out,
        "blobrace_datasets_loaded{{{run}}} {}",
        s.datasets_loaded
    );
    family(
        &mut out,
        "blobrace_failures",
        "gauge",
        "Steps that failed for one engine or store (the run goes on).",
        None,
    );
    let _ = writeln!(out, "blobrace_failures{{{run}}} {}", s.failures);
    if let Some((verb, label, done, total)) = crate::load::progress::in_progress() {
        family(
            &mut out,
            "blobrace_rows_pass_bytes",
            "gauge",
            "The load or verify in progress: its bytes done.",
            Some("bytes"),
        );
        let labels = format!("{run},pass=\"{verb}\",dataset=\"{}\"", escape(&label));
        let _ = writeln!(out, "blobrace_rows_pass_bytes{{{labels}}} {done}");
        family(
            &mut out,
            "blobrace_rows_pass_total_bytes",
            "gauge",
            "The load or verify in progress: its bytes in all.",
            Some("bytes"),
        );
        let _ = writeln!(out, "blobrace_rows_pass_total_bytes{{{labels}}} {total}");
    }
    if !s.cells_measured.is_empty() {
        family(
            &mut out,
            "blobrace_fetches",
            "gauge",
            "Fetches measured in a cell (one client, warm-up left out).",
            None,
        );
        for ((engine, size, cache), (fetches, _, _)) in &s.cells_measured {
            let _ = writeln!(
                out,
                "blobrace_fetches{{{run},engine=\"{}\",size=\"{size}\",cache=\"{cache}\"}} {fetches}",
                escape(engine)
            );
        }
        family(
            &mut out,
            "blobrace_fetch_latency_seconds",
            "gauge",
            "A measured cell's fetch latency at a percentile (p50, p99).",
            Some("seconds"),
        );
        for ((engine, size, cache), (_, p50, p99)) in &s.cells_measured {
            for (q, v) in [("p50", p50), ("p99", p99)] {
                let _ = writeln!(
                    out,
                    "blobrace_fetch_latency_seconds{{{run},engine=\"{}\",size=\"{size}\",cache=\"{cache}\",percentile=\"{q}\"}} {v:e}",
                    escape(engine)
                );
            }
        }
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scrape_reads_the_state_and_anything_else_is_404() {
        let listener = Metrics::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let metrics = Metrics::serve(listener, "run-1").unwrap();
        metrics.update(|s| {
            s.cell = 2;
            s.cells = 5;
            s.cells_measured.insert(
                ("sqlite".into(), "64KiB".into(), "cold".into()),
                (1200, 0.000_35, 0.0021),
            );
        });
        let get = |path: &str| {
            let mut stream = TcpStream::connect(metrics.addr).unwrap();
            write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            let mut body = String::new();
            std::io::Read::read_to_string(&mut stream, &mut body).unwrap();
            body
        };
        let scraped = get("/metrics");
        assert!(scraped.starts_with("HTTP/1.1 200 OK"), "{scraped}");
        assert!(
            scraped.contains("blobrace_cell{run_id=\"run-1\"} 2"),
            "{scraped}"
        );
        assert!(
            scraped.contains("blobrace_cells{run_id=\"run-1\"} 5"),
            "{scraped}"
        );
        assert!(
            scraped.contains(
                "engine=\"sqlite\",size=\"64KiB\",cache=\"cold\",percentile=\"p99\"} 2.1e-3"
            ),
            "{scraped}"
        );
        assert!(scraped.ends_with("# EOF\n"), "{scraped}");
        assert!(get("/").starts_with("HTTP/1.1 404"));
    }
}
