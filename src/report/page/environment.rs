//! The environment: machine, caps, images, settings, how long cells were measured
//! (`templates/report/environment.html`).

use std::path::{Path, PathBuf};

use askama::Template;

use crate::records::results::{EngineResult, RunResults};
use crate::report::data::{engines, sizes};
use crate::size::format_bytes;

use super::markup::{Marked, relative};

/// One result's cap, counter and cold start.
pub(super) struct ResultEnvironment {
    engine: &'static str,
    size: String,
    memory_cap: Marked,
    cpu_cap: String,
    cap_read_at: String,
    data_per_cap: String,
    disk_counter: String,
    cold_start: String,
    /// A server's round trip (`SELECT 1` p50 / p99); "—" for an embedded engine.
    round_trip: String,
    /// criterion's own report, where `cargo bench` left one.
    criterion: Option<String>,
    /// In a merged run: the runs (and machines) whose fetches this holds.
    ran_in: String,
}

impl ResultEnvironment {
    fn of(run: &RunResults, r: &EngineResult, run_dir: &Path) -> Self {
        let (memory_cap, cpu_cap, cap_read_at) = match &r.cap {
            // A remote server's cap is not blobrace's; a pod's limits read from the
            // Kubernetes API are shown as read (the cgroup column names the pod).
            Some(c) if r.remote.is_some() && c.is_pod_limits() => (
                match c.memory_limit_bytes {
                    Some(_) => Marked::Plain(format!("{} (its pod's limit)", c.memory_label())),
                    None => Marked::Bad("uncapped (its pod has no memory limit)".into()),
                },
                c.cpu_label(),
                c.cgroup.clone(),
            ),
            _ if r.remote.is_some() => (
                Marked::Bad("not controlled (remote)".into()),
                "not controlled (remote)".into(),
                "—".into(),
            ),
            Some(c) if c.memory_limit_bytes.is_none() => (
                Marked::Bad(c.memory_label()),
                c.cpu_label(),
                c.cgroup.clone(),
            ),
            Some(c) => (
                Marked::Plain(c.memory_label()),
                c.cpu_label(),
                c.cgroup.clone(),
            ),
            None => (
                Marked::Bad("unavailable".into()),
                "unavailable".into(),
                "—".into(),
            ),
        };
        ResultEnvironment {
            engine: r.engine.name(),
            size: r.size.clone(),
            memory_cap,
            cpu_cap,
            cap_read_at,
            data_per_cap: r.regime.data_label(),
            disk_counter: r.disk_counter.clone(),
            cold_start: r.eviction.method.clone(),
            round_trip: match (&r.round_trip, r.engine.store().is_server()) {
                (Some(rt), _) => format!(
                    "{} / {}",
                    crate::stats::format_ns(rt.p50_ns as f64),
                    crate::stats::format_ns(rt.p99_ns as f64)
                ),
                (None, true) => "unavailable".into(),
                (None, false) => "—".into(),
            },
            criterion: criterion_link(run, run_dir, r),
            ran_in: if r.runs.is_empty() {
                part_of(run, r)
            } else {
                r.runs
                    .iter()
                    .map(
                        |id| match run.merged_from.iter().find(|m| &m.run_id == id) {
                            Some(m) => format!("{id} on {}", m.machine.hostname),
                            None => id.clone(),
                        },
                    )
                    .collect::<Vec<_>>()
                    .join(" + ")
            },
        }
    }
}

/// `part 2, 2026-11-27T17:02:11Z`: which part of a run measured in parts measured
/// `r` (`run_parts`); empty in a run of one part.
fn part_of(run: &RunResults, r: &EngineResult) -> String {
    if run.parts.len() < 2 {
        return String::new();
    }
    run.done_cells
        .iter()
        .find(|d| {
            d.cell.engine == r.engine
                && d.cell.size.bytes() == r.size_bytes
                && (d.cell.cache, d.cell.repeat) == (r.scenario.cache, r.scenario.repeat)
        })
        .map(|d| format!("part {}, {}", d.part + 1, r.finished_at))
        .unwrap_or_else(|| format!("the last part, {}", r.finished_at))
}

/// An engine's settings, read back from the engine.
pub(super) struct EngineSettings {
    engine: &'static str,
    settings: Vec<(String, String)>,
}

/// Caps, counters and cold starts per result; engine settings; machine and run.
#[derive(Template)]
#[template(path = "report/environment.html")]
pub(super) struct Environment {
    results: Vec<ResultEnvironment>,
    settings: Vec<EngineSettings>,
    cpu_model: String,
    logical_cpus: usize,
    ram: String,
    kernel: String,
    data_filesystem: String,
    data_device: String,
    process_memory_cap: String,
    process_cpu_cap: String,
    process_cap_how: String,
    process_cgroup: String,
    /// The disk cap in force and what it leaves out, or that none was asked.
    process_disk_cap: String,
    process_disk_notes: Vec<String>,
    housekeeping: Vec<String>,
    /// One line per server whose container and cache this run changed; empty when
    /// it changed none (they already had the run's cap, or the run asked for none).
    server_fits: Vec<String>,
    runner_image: String,
    /// blobrace's version and commit, or that the run did not record them.
    build: String,
    /// The `BLOBRACE_*` variables set when it started, `NAME=value` (secrets redacted).
    variables: Vec<String>,
    /// The disk under the data directory: model, scheduler, rotational.
    data_disk: String,
    seed: u64,
    layout: String,
    warmup: String,
    measuring: String,
    command: String,
    /// A merged run's runs: id, machine, share, times, the measuring process's cap.
    merged_from: Vec<String>,
    /// Whether results name where they were measured: a merged run's runs, or the
    /// parts of a run continued after a stop.
    show_ran_in: bool,
    /// A run measured in parts (stopped, then continued by the same command): one
    /// line per part; empty for a run of one part.
    parts: Vec<String>,
}

impl Environment {
    pub fn of(run: &RunResults, run_dir: &Path) -> Self {
        let mut results = Vec::new();
        for size in sizes(run) {
            for engine in engines(run) {
                if let Some(r) = run.result(engine, size) {
                    results.push(ResultEnvironment::of(run, r, run_dir));
                }
            }
        }
        let settings = engines(run)
            .into_iter()
            .filter_map(|engine| {
                let r = run.results.iter().find(|r| r.engine == engine)?;
                Some(EngineSettings {
                    engine: engine.name(),
                    settings: r
                        .settings
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                })
            })
            .collect();
        let m = &run.machine;
        Environment {
            results,
            settings,
            cpu_model: m.cpu_model.clone(),
            logical_cpus: m.logical_cpus,
            ram: format_bytes(m.ram_bytes),
            kernel: m.kernel.clone(),
            data_filesystem: m.data_filesystem.clone(),
            data_device: {
                let device = match (&run.readahead, m.data_read_ahead_kb) {
                    (Some(r), _) => format!("{} ({})", m.data_device, r.label()),
                    (None, Some(kb)) => {
                        format!("{} (readahead {kb} KiB, the host's)", m.data_device)
                    }
                    (None, None) => m.data_device.clone(),
                };
                // The emulated disk under it, and what it leaves out.
                match &run.slow_disk {
                    Some(d) => format!("{device}; {}; {}", d.label(), d.notes.join("; ")),
                    None => device,
                }
            },
            process_memory_cap: run.cap.memory_label(),
            process_cpu_cap: run.cap.cpu_label(),
            process_cap_how: run.cap.how(),
            process_cgroup: run.cap.cgroup.clone(),
            process_disk_cap: run
                .cap
                .disk
                .as_ref()
                .map(|d| d.line())
                .unwrap_or_else(|| "disk not capped: none asked (the machine's own disk)".into()),
            // A preset's published figures and what it leaves out, then what the run saw.
            process_disk_notes: {
                let mut notes: Vec<String> = run
                    .config
                    .deployment
                    .iter()
                    .map(|d| format!("deployment {}: {}", d.name, d.source))
                    .collect();
                if let Some(d) = &run.cap.disk {
                    notes.extend(d.asked.source.iter().map(|s| format!("preset: {s}")));
                    notes.extend(d.notes.iter().cloned());
                }
                notes.extend(run.network.as_ref().map(|n| n.label()));
                notes
            },
            housekeeping: run.cap.housekeeping.clone(),
            server_fits: run.server_fits.iter().map(|fit| fit.line()).collect(),
            runner_image: run
                .runner_image
                .clone()
                .unwrap_or_else(|| "none (ran on the host)".into()),
            build: run.provenance.as_ref().map_or_else(
                || "not recorded (a run made before blobrace recorded its build, or a merged run: each of its runs says its own)".into(),
                |p| p.label(),
            ),
            variables: run
                .provenance
                .iter()
                .flat_map(|p| p.variables.iter().map(|(k, v)| format!("{k}={v}")))
                .collect(),
            data_disk: m.data_disk.as_ref().map_or_else(
                || "unavailable: no block device under the data directory, or its queue is not readable".into(),
                |d| d.label(),
            ),
            seed: run.config.seed,
            layout: run.config.layout_label(),
            warmup: format!("{:?}", run.config.warmup),
            measuring: measuring_label(&run.config),
            command: run.command.clone(),
            show_ran_in: !run.merged_from.is_empty() || run.parts.len() > 1,
            parts: if run.parts.len() > 1 {
                part_lines(run)
            } else {
                Vec::new()
            },
            merged_from: run
                .merged_from
                .iter()
                .map(|m| {
                    format!(
                        "{}: {}, {} logical CPUs, {} RAM; measuring process memory {}, CPU {}; {}",
                        m.label(),
                        m.machine.cpu_model,
                        m.machine.logical_cpus,
                        format_bytes(m.machine.ram_bytes),
                        m.cap.memory_label(),
                        m.cap.cpu_label(),
                        m.provenance
                            .as_ref()
                            .map_or_else(|| "build not recorded".into(), |p| p.label())
                    )
                })
                .collect(),
        }
    }
}

/// `part 1: 2026-11-27T15:02:00Z – stopped without a word (killed?), 37 cell(s); loads
/// 40 min 00 s, measuring 1 h 02 min, 1 h 50 min in all`.
fn part_lines(run: &RunResults) -> Vec<String> {
    let minutes = |s: f64| format!("{:.1} min", s / 60.0);
    run.parts
        .iter()
        .zip(crate::records::run_parts::cells_per_part(&run.parts, &run.done_cells))
        .enumerate()
        .map(|(i, (p, cells))| {
            format!(
                "part {}: {} – {} ({}), pid {} on {}: {cells} cell(s) measured; loads {}, measuring {}, {} in all",
                i + 1,
                p.started_at,
                p.finished_at.as_deref().unwrap_or("?"),
                p.ended.as_deref().unwrap_or("stopped without a word: killed, or the machine stopped"),
                p.pid,
                p.host,
                minutes(p.load_seconds),
                minutes(p.measure_seconds),
                minutes(p.total_seconds)
            )
        })
        .collect()
}

/// How long each engine and size was measured: to a precision, or a fixed time.
fn measuring_label(config: &crate::config::RunConfig) -> String {
    match config.precision {
        Some(targets) => format!(
            "measured until {} (95% intervals), for at least {:?}{} and at most {:?} ({:?} while a p99 lacks the 500 fetches an interval needs); each result says how precise it got",
            targets.label(),
            config.measure,
            match config.min_fetches {
                0 => String::new(),
                n => format!(" and {n} fetches"),
            },
            config.measure_limit,
            config.measure_limit * 2
        ),
        None => format!(
            "measurement {:?} per engine and size{}",
            config.measure,
            match config.min_fetches {
                0 => String::new(),
                n => format!(", or until {n} fetches within twice that"),
            }
        ),
    }
}

/// criterion's own report for one benchmark, when `cargo bench` left one.
fn criterion_link(run: &RunResults, run_dir: &Path, r: &EngineResult) -> Option<String> {
    // Where criterion writes: $CRITERION_HOME (the compose runner sets it), else
    // <target dir>/criterion.
    let base = std::env::var_os("CRITERION_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("target"))
                .join("criterion")
        });
    let report = base
        .join(format!("fetch-{}", r.size))
        .join(
            r.scenario
                .label(r.engine, &run.config.cache, run.config.repeat),
        )
        .join(&r.size)
        .join("report/index.html");
    // Only one this result wrote: criterion keeps the last report per benchmark, and one
    // from an earlier run (or a later one, plots off) is not of these fetches.
    let written = std::fs::metadata(&report).and_then(|m| m.modified()).ok()?;
    let from = |at: &str| chrono::DateTime::parse_from_rfc3339(at).ok();
    let (started, finished) = (from(&r.started_at)?, from(&r.finished_at)?);
    let written = chrono::DateTime::<chrono::Utc>::from(written);
    // The report is drawn just after the cell's fetches end: a minute's slack.
    (written >= started && written <= finished + chrono::Duration::minutes(1))
        .then(|| relative(run_dir, &report))
        .flatten()
}
