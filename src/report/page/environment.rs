//! The environment: machine, caps, images, settings, how long cells were measured.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::report::data::{engines, sizes};
use crate::results::{EngineResult, RunResults};
use crate::size::format_bytes;

use super::markup::{esc, relative};

/// Caps, counters and cold starts per result; engine settings; machine and run.
pub(super) fn environment(run: &RunResults, run_dir: &Path) -> String {
    let mut p = String::from(
        "<h2 id=environment>Environment</h2>\n<table><tr><th class=l>engine</th><th class=l>size</th><th class=l>memory cap</th><th class=l>CPU cap</th><th class=l>where the cap was read</th><th class=l>data / cap</th><th class=l>disk counter</th><th class=l>cold start</th><th class=l>criterion</th></tr>\n",
    );
    for size in sizes(run) {
        for engine in engines(run) {
            if let Some(r) = run.result(engine, size) {
                p.push_str(&environment_row(run, r, run_dir));
            }
        }
    }
    p.push_str("</table>\n<h3>Engine settings and versions</h3>\n<table><tr><th class=l>engine</th><th class=l>settings (read back from the engine)</th></tr>\n");
    for engine in engines(run) {
        if let Some(r) = run.results.iter().find(|r| r.engine == engine) {
            let settings: Vec<String> = r
                .settings
                .iter()
                .map(|(k, v)| format!("<b>{}</b>: {}", esc(k), esc(v)))
                .collect();
            let _ = writeln!(
                p,
                "<tr><td class=l>{}</td><td class=l>{}</td></tr>",
                engine.name(),
                settings.join("<br>")
            );
        }
    }
    let m = &run.machine;
    let _ = write!(
        p,
        "</table>\n<h3>Machine and run</h3><table>\n<tr><th class=l>CPU</th><td class=l>{} ({} logical CPUs)</td></tr>\n<tr><th class=l>RAM</th><td class=l>{}</td></tr>\n<tr><th class=l>kernel</th><td class=l>{}</td></tr>\n<tr><th class=l>data filesystem</th><td class=l>{} on {}</td></tr>\n<tr><th class=l>measuring process cap</th><td class=l>memory {}, CPU {} ({}; {}){}</td></tr>\n<tr><th class=l>servers set to the run's cap</th><td class=l>{}</td></tr>\n<tr><th class=l>runner image</th><td class=l>{}</td></tr>\n<tr><th class=l>seed</th><td class=l>{}</td></tr>\n<tr><th class=l>dataset layout</th><td class=l>{}</td></tr>\n<tr><th class=l>timings</th><td class=l>warm-up {:?}, {}</td></tr>\n<tr><th class=l>reproduce</th><td class=l><code>{}</code></td></tr>\n</table>\n",
        esc(&m.cpu_model),
        m.logical_cpus,
        format_bytes(m.ram_bytes),
        esc(&m.kernel),
        esc(&m.data_filesystem),
        esc(&m.data_device),
        run.cap.memory_label(),
        run.cap.cpu_label(),
        esc(&run.cap.how()),
        esc(&run.cap.cgroup),
        run.cap
            .housekeeping
            .iter()
            .map(|h| format!("<br>{}", esc(h)))
            .collect::<String>(),
        server_fits(run),
        esc(run
            .runner_image
            .as_deref()
            .unwrap_or("none (ran on the host)")),
        run.config.seed,
        esc(&run.config.layout_label()),
        run.config.warmup,
        esc(&measuring_label(&run.config)),
        esc(&run.command),
    );
    p
}

pub(super) fn environment_row(run: &RunResults, r: &EngineResult, run_dir: &Path) -> String {
    let bad = |label: String| format!("<span class=bad>{label}</span>");
    let (mem, cpu, where_) = match &r.cap {
        Some(c) if c.memory_limit_bytes.is_none() => {
            (bad(c.memory_label()), c.cpu_label(), c.cgroup.clone())
        }
        Some(c) => (c.memory_label(), c.cpu_label(), c.cgroup.clone()),
        None => (bad("unavailable".into()), "unavailable".into(), "—".into()),
    };
    let criterion = criterion_link(run, run_dir, r)
        .map(|href| format!("<a href=\"{}\">report</a>", esc(&href)))
        .unwrap_or_else(|| "<span class=muted>none</span>".into());
    format!(
        "<tr><td class=l>{}</td><td class=l>{}</td><td class=l>{mem}</td><td class=l>{}</td><td class=\"l w\">{}</td><td class=l>{}</td><td class=\"l w\">{}</td><td class=\"l w\">{}</td><td class=l>{criterion}</td></tr>\n",
        r.engine.name(),
        r.size,
        esc(&cpu),
        esc(&where_),
        esc(&r.regime.data_label()),
        esc(&r.disk_counter),
        esc(&r.eviction.method),
    )
}

/// How long each engine and size was measured: to a precision, or a fixed time.
pub(super) fn measuring_label(config: &crate::config::RunConfig) -> String {
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

/// One line per server whose container and cache this run changed; "none" when it
/// changed none (they already had the run's cap, or the run asked for no cap).
pub(super) fn server_fits(run: &RunResults) -> String {
    if run.server_fits.is_empty() {
        return "none changed".into();
    }
    run.server_fits
        .iter()
        .map(|fit| esc(&fit.line()))
        .collect::<Vec<_>>()
        .join("<br>")
}

/// criterion's own report for one benchmark, when `cargo bench` left one.
pub(super) fn criterion_link(run: &RunResults, run_dir: &Path, r: &EngineResult) -> Option<String> {
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
    report
        .is_file()
        .then(|| relative(run_dir, &report))
        .flatten()
}
