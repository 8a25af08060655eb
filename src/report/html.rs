//! The report page: verdict first, then charts, tables and the environment, one
//! function per section. Self-contained: inline CSS, charts as files beside it,
//! no network. Charts land in the section they declare (`Chart::section`).

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use super::ReportOptions;
use super::charts::{AnyChart, Section};
use super::compare::{ChangeVerdict, Comparison};
use super::data::{SizeJudgement, engines, load_sizes, sizes, verdict as engine_verdict};
use crate::results::{EngineResult, LoadResult, RegimeVerdict, RunResults};
use crate::size::format_bytes;
use crate::stats::format_ns;
use crate::steady::CacheState;
use crate::summary::floor_ratio;
use crate::summary::{SummaryRow, rows};

// `td.w` may break anywhere: image digests and container paths are long unbroken
// words that would otherwise widen the environment table past the page.
pub(super) const CSS: &str = "body{font-family:DejaVu Sans,Verdana,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}td.w{overflow-wrap:anywhere}.warn{background:#fff3cd;border:2px solid #d39e00;padding:.8em 1.2em;margin:1em 0}
.warn li{margin:.3em 0}.bad{color:#b00020;font-weight:bold}.good{color:#1b7f3b;font-weight:bold}
figure{margin:1.5em 0}figure img{width:100%;border:1px solid #ddd}figcaption{font-size:.9em;color:#555}
code{background:#f3f3f3;padding:.1em .3em}.muted{color:#777}";

pub(super) fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn opt_label(v: Option<String>) -> String {
    v.unwrap_or_else(|| "<span class=bad>unavailable</span>".into())
}

/// Everything a reader must not miss: what failed, uncapped, unavailable, fits in
/// memory, incomplete. Said once each: a note that holds for several results names
/// them on one line, and the measuring process's own cap notes are said once for
/// every engine it runs (not per result). Housekeeping (stale cgroups removed) is
/// not here: it is in the run's details.
fn warnings(run: &RunResults) -> Vec<String> {
    let mut w = Vec::new();
    for f in &run.failures {
        w.push(format!(
            "<b>Failed</b>: {} of {} at {}, so it is missing below: {}",
            f.stage,
            esc(&f.who),
            f.size,
            esc(&f.why)
        ));
    }
    for beat in crate::floor_check::beating_the_floor(run) {
        w.push(format!(
            "<b>Beat the floor</b>: {}, so its \"÷ floor\" below 1 is a finding about the floor, not the engine: {}",
            esc(&format!("{} {}", beat.who, beat.by)),
            esc(&beat.why)
        ));
    }
    let short: Vec<String> = run
        .results
        .iter()
        .filter_map(|r| {
            let p = r.precision.as_ref().filter(|p| !p.met())?;
            Some(format!(
                "{} {} {} ({})",
                r.engine,
                r.size,
                r.scenario.cache.name(),
                p.label()
            ))
        })
        .collect();
    if !short.is_empty() {
        w.push(format!(
            "<b>Precision not reached</b> in {} of {} results (--precision, within --measure-limit): their intervals are wider than asked, so fewer differences are judged: {}",
            short.len(),
            run.results.len(),
            esc(&short.join("; "))
        ));
    }
    for pressed in crate::fs_pressure::pressed(run) {
        w.push(format!(
            "<b>Files under metadata pressure</b>: {}: {}",
            esc(&pressed.who),
            esc(&pressed.why)
        ));
    }
    if !run.complete {
        w.push("This run did not complete: some engines or sizes are missing.".into());
    }
    if run.cap.memory_limit_bytes.is_none() {
        w.push(format!(
            "The measuring process was <b>uncapped</b> ({}): the embedded engines could use all of the machine's memory.",
            esc(&run.cap.notes.join("; "))
        ));
    } else if !run.cap.notes.is_empty() {
        w.push(format!(
            "The measuring process's cap (SQLite, files, the floor): {}",
            esc(&run.cap.notes.join("; "))
        ));
    }
    // (note, results it holds for), in the order first seen.
    let mut per_result: Vec<(String, Vec<String>)> = Vec::new();
    let mut note = |text: String, who: &str| match per_result.iter_mut().find(|(t, _)| *t == text) {
        Some((_, whos)) => {
            if !whos.iter().any(|x| x == who) {
                whos.push(who.to_string());
            }
        }
        None => per_result.push((text, vec![who.to_string()])),
    };
    for r in &run.results {
        let who = format!("{} {}", r.engine.name(), r.size);
        match &r.cap {
            None => note("the cap is <b>unavailable</b> (the server container was not found through Docker).".into(), &who),
            Some(c) if c.memory_limit_bytes.is_none() => {
                note(format!("ran <b>uncapped</b> ({}).", esc(&c.cgroup)), &who)
            }
            // The process's own cap: said once above.
            Some(c) if c.notes == run.cap.notes => {}
            Some(c) if !c.notes.is_empty() => note(esc(&c.notes.join("; ")), &who),
            _ => {}
        }
        if r.measured.disk_bytes_per_fetch.is_none() {
            note(
                format!(
                    "disk bytes per fetch and hits/misses are <b>unavailable</b> ({}).",
                    esc(&r.disk_counter)
                ),
                &who,
            );
        }
        if let Some(changed) = r.disk_probes.as_ref().and_then(|p| p.changed()) {
            note(
                format!(
                    "{}: compare it with the floor of the same round, not across runs.",
                    esc(&changed)
                ),
                &who,
            );
        }
        if let Some(p) = &r.disk_probes
            && let (Err(why), _) | (_, Err(why)) = (&p.before, &p.after)
        {
            note(
                format!("the disk probe is <b>unavailable</b> ({}).", esc(why)),
                &who,
            );
        }
        if let Some(problem) = r.steady.as_ref().and_then(|s| s.problem()) {
            note(format!("{}.", esc(&problem)), &who);
        }
        if r.regime.verdict != RegimeVerdict::DiskBound {
            note(
                format!(
                    "the dataset ({}) <b>fits in memory</b> ({:.2}x {}): this measures the cache, not the disk.",
                    format_bytes(r.regime.dataset_bytes),
                    r.regime.ratio,
                    esc(&r.regime.basis.to_string())
                ),
                &who,
            );
        }
    }
    for (text, whos) in per_result {
        w.push(format!("{}: {text}", esc(&whos.join(", "))));
    }
    w
}

/// A path from `from_dir` to `to`, for links that work when the page opens from disk.
fn relative(from_dir: &Path, to: &Path) -> Option<String> {
    let from = from_dir.canonicalize().ok()?;
    let to = to.canonicalize().ok()?;
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut path = PathBuf::new();
    for _ in common..f.len() {
        path.push("..");
    }
    for c in &t[common..] {
        path.push(c.as_os_str());
    }
    Some(path.to_string_lossy().into_owned())
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
    report
        .is_file()
        .then(|| relative(run_dir, &report))
        .flatten()
}

/// A percentile with its 95% interval below it (or a note that it has none).
fn with_interval(ns: u64, interval: Option<crate::stats::Interval>) -> String {
    match interval {
        Some(i) => format!(
            "{}<br><small class=muted>{}–{}</small>",
            format_ns(ns as f64),
            format_ns(i.lo_ns),
            format_ns(i.hi_ns)
        ),
        None => format!(
            "{}<br><small class=muted title=\"too few fetches or windows for a 95% interval\">no interval</small>",
            format_ns(ns as f64)
        ),
    }
}

fn row(r: &SummaryRow) -> String {
    format!(
        "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        r.engine.name(),
        r.size,
        format_ns(r.mean_ns),
        with_interval(r.p50_ns, r.p50_interval),
        with_interval(r.p90_ns, r.p90_interval),
        with_interval(r.p99_ns, r.p99_interval),
        format_ns(r.p999_ns as f64),
        format_ns(r.max_ns as f64),
        opt_label(r.hit_ratio.map(|h| format!("{:.1}%", h * 100.0))),
        opt_label(r.disk_bytes_per_fetch.map(|d| format_bytes(d as u64))),
        match (r.floor_p50_ratio, r.floor_p99_ratio) {
            (Some(a), Some(b)) => format!("{a:.2}x / {b:.2}x"),
            _ => "<span class=muted>no floor</span>".into(),
        },
        esc(&r.disk_probe),
        match (r.orm_cost_ns, r.orm_cost_real) {
            (None, _) => "<span class=muted>—</span>".to_string(),
            (Some(d), real) => format!(
                "{}{}<br><small class=muted>{}</small>",
                if d < 0.0 { "−" } else { "+" },
                format_ns(d.abs()),
                match real {
                    Some(true) => "pooled over repeats, intervals apart: real",
                    Some(false) => "pooled intervals overlap: not a difference",
                    None => "cannot judge: needs --repeat 3 of ≥1 s each",
                }
            ),
        },
        match r.criterion_samples {
            Some(s) => format!("{} ({} criterion samples)", r.fetches, s),
            None => r.fetches.to_string(),
        },
    )
}

/// The measurement table of some rows.
fn table<'a>(rows: impl IntoIterator<Item = &'a SummaryRow>) -> String {
    let mut t = String::from(
        "<table><tr><th class=l>engine</th><th>size</th><th>mean</th><th>p50 (95% interval)</th><th>p90 (95% interval)</th><th>p99 (95% interval)</th><th>p99.9</th><th>max</th><th>hit ratio</th><th>disk/fetch</th><th>p50 / p99 vs floor</th><th>disk probe p50 before → after</th><th>ORM cost (p50)</th><th>fetches</th></tr>\n",
    );
    for r in rows {
        t.push_str(&row(r));
    }
    t.push_str("</table>\n");
    t
}

fn figure(chart: &AnyChart) -> String {
    let stem = chart.file_stem();
    format!(
        "<figure><img class=chart src=\"{stem}.svg\" alt=\"{}\"><figcaption>{} (<a href=\"{stem}.png\">PNG</a>)</figcaption></figure>\n",
        esc(&chart.caption()),
        esc(&chart.caption())
    )
}

/// Every chart of one section, in the order they were listed.
fn figures(charts: &[AnyChart], section: Section) -> String {
    charts
        .iter()
        .filter(|c| c.section() == section)
        .map(figure)
        .collect()
}

/// Where a page sits in its run: `page` draws one cache state's view of it.
pub struct PageContext<'a> {
    /// The whole run: every cache state and repeat.
    pub full: &'a RunResults,
    pub cache: CacheState,
    /// The cache state of the run directory's own page.
    pub primary: CacheState,
    /// From this page's directory to the run directory: "" or "../".
    pub to_run_dir: &'a str,
}

/// Which cache state this page shows, and links to the others.
fn scenario_line(context: &PageContext) -> String {
    let what = |c: CacheState| match c {
        CacheState::Cold => {
            "<b>cold</b>: each engine measured right after its dataset was evicted from every cache, so its cache fills while it is measured"
        }
        CacheState::Steady => {
            "<b>steady state</b>: each engine's cache prefilled until full, then warm-up fetches until its hit ratio was stable, before measuring (see the steady-state table)"
        }
    };
    let others: Vec<String> = context
        .full
        .caches()
        .into_iter()
        .filter(|&c| c != context.cache)
        .map(|c| {
            let href = if c == context.primary {
                format!("{}index.html", context.to_run_dir)
            } else {
                format!("{}{}/index.html", context.to_run_dir, c.name())
            };
            format!("<a href=\"{href}\">the {} report</a>", c.name())
        })
        .collect();
    let mut line = format!("<p id=cache-state>Cache: {}.", what(context.cache));
    if !others.is_empty() {
        let _ = write!(line, " Also measured in this run: {}.", others.join(", "));
    }
    line.push_str("</p>\n");
    line
}

/// Steady results: how the cache was filled and settled, the hit ratio reached
/// against the model's (cache held ÷ dataset).
fn steady_table(run: &RunResults) -> String {
    let steady: Vec<&EngineResult> = run.results.iter().filter(|r| r.steady.is_some()).collect();
    if steady.is_empty() {
        return String::new();
    }
    let mut p = String::from(
        "<h2 id=steady>Steady state</h2>\n<p>Before measuring, each engine's cache was prefilled with random chunks of its own data (read from inside its cap) until it stopped growing, then warmed up with fetches in rounds (≥1 s and ≥200 fetches each) until the hit ratio of the last three rounds agreed (within ±2 points, or two standard errors where rounds are small). The model: a uniform random read hits with probability cache held ÷ dataset.</p>\n<table><tr><th class=l>engine</th><th>size</th><th>prefill read</th><th>prefill s</th><th class=l>prefill stopped</th><th>settling fetches</th><th>settling s</th><th>steady?</th><th>hit ratio (last round)</th><th>measured hit ratio</th><th>model</th><th class=l>model's cache figure</th></tr>\n",
    );
    for size in sizes(run) {
        for r in steady.iter().filter(|r| r.size_bytes == size) {
            let st = r.steady.as_ref().expect("filtered");
            let pct = |v: Option<f64>| opt_label(v.map(|v| format!("{:.1}%", v * 100.0)));
            let converged = match st.converged {
                Some(true) => "<span class=good>yes</span>".to_string(),
                Some(false) => "<span class=bad>no (time limit)</span>".to_string(),
                None => "<span class=muted>not judged</span>".to_string(),
            };
            let _ = writeln!(
                p,
                "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td class=l>{}</td><td>{}</td><td>{:.1}</td><td>{converged}</td><td>{}</td><td>{}</td><td>{}{}</td><td class=\"l w\">{}</td></tr>",
                r.engine.name(),
                r.size,
                format_bytes(st.prefill.bytes_read),
                st.prefill.seconds,
                esc(&st.prefill.stopped),
                st.settle_fetches,
                st.settle_seconds,
                pct(st.round_hit_ratios.last().copied()),
                pct(r.measured.hit_ratio),
                pct(st.model_hit_ratio),
                if st.fits_in_memory {
                    " <span class=muted>(fits in memory)</span>"
                } else {
                    ""
                },
                esc(&st.model_basis),
            );
        }
    }
    p.push_str("</table>\n");
    p
}

/// With `--repeat K`: each result's p50 and p99 in every repeat, and their spread
/// (largest ÷ smallest − 1), from the whole run, for this page's cache state.
fn repeats_table(context: &PageContext) -> String {
    let full = context.full;
    if full.repeats() < 2 {
        return String::new();
    }
    let mut p = format!(
        "<h2 id=repeats>Repeats</h2>\n<p>The engine list was measured {} times, each repeat starting one engine later. The charts and tables above show repeat 1; here is how far the repeats spread (largest ÷ smallest − 1), and every repeat's fetches pooled, with 95% intervals that resample whole repeats as well as windows inside them: they cover how much runs differ, where one measurement's interval covers only the noise inside it. A difference between engines whose pooled intervals overlap is not a difference. <code>report --baseline</code> compares pooled figures when both runs have repeats.</p>\n<table><tr><th class=l>engine</th><th>size</th><th>p50 per repeat</th><th>p50 spread</th><th>pooled p50 (95% interval)</th><th>p99 per repeat</th><th>p99 spread</th><th>pooled p99 (95% interval)</th></tr>\n",
        full.repeats()
    );
    let view = full.view(context.cache);
    for size in sizes(&view) {
        for engine in engines(&view) {
            let all = full.repeats_of(engine, size, context.cache);
            if all.is_empty() {
                continue;
            }
            let cells = |pick: fn(&crate::stats::Summary) -> u64| {
                let values: Vec<u64> = all.iter().map(|r| pick(r)).collect();
                let list = values
                    .iter()
                    .map(|&v| format_ns(v as f64))
                    .collect::<Vec<_>>()
                    .join(" · ");
                let (lo, hi) = (
                    values.iter().min().copied().unwrap_or(0),
                    values.iter().max().copied().unwrap_or(0),
                );
                let spread = if lo > 0 {
                    format!("{:.0}%", (hi as f64 / lo as f64 - 1.0) * 100.0)
                } else {
                    "—".into()
                };
                (list, spread)
            };
            let (p50s, p50_spread) = cells(|m| m.latency.p50_ns);
            let (p99s, p99_spread) = cells(|m| m.latency.p99_ns);
            let pooled = full.pooled(engine, size, context.cache);
            let pooled_cell = |q: f64| match pooled.get(q) {
                Some(ns) => with_interval(ns.round() as u64, pooled.intervals.get(q)),
                None => "—".into(),
            };
            let (pooled_p50, pooled_p99) = (pooled_cell(0.5), pooled_cell(0.99));
            let _ = writeln!(
                p,
                "<tr><td class=l>{}</td><td>{}</td><td>{p50s}</td><td>{p50_spread}</td><td>{pooled_p50}</td><td>{p99s}</td><td>{p99_spread}</td><td>{pooled_p99}</td></tr>",
                engine.name(),
                format_bytes(size)
            );
        }
    }
    p.push_str("</table>\n");
    p
}

pub fn page(
    run: &RunResults,
    run_dir: &Path,
    charts: &[AnyChart],
    comparison: Option<&Comparison>,
    options: &ReportOptions,
    context: &PageContext,
) -> String {
    let rows = rows(run);
    let mut p = header(run);
    p.push_str(&scenario_line(context));
    p.push_str(&verdict(run, options));
    p.push_str(&sustainable_verdict(run, options));
    p.push_str(&warnings_box(run));
    if let Some(c) = comparison {
        p.push_str(&against_baseline(c));
    }
    p.push_str("<h2 id=headline>Latency against blob size</h2>\n");
    p.push_str(&figures(charts, Section::Headline));
    for size in sizes(run) {
        let label = format_bytes(size);
        let _ = writeln!(p, "<h2 id=size-{label}>{label} blobs</h2>");
        p.push_str(&figures(charts, Section::Size(size)));
        p.push_str(&table(rows.iter().filter(|r| r.size_bytes == size)));
    }
    p.push_str(&load_section(run, charts));
    p.push_str(&saturation_section(run));
    p.push_str("<h2 id=disk>Disk reads and loading</h2>\n");
    p.push_str(&figures(charts, Section::Disk));
    p.push_str(&loads(run));
    p.push_str(&steady_table(run));
    p.push_str(&profiles_section(run, context));
    p.push_str(&repeats_table(context));
    p.push_str("<h2 id=table>All measurements</h2>\n");
    p.push_str(&table(&rows));
    let _ = writeln!(
        p,
        "<p>Also as <a href=\"{to}summary.csv\">summary.csv</a> and <a href=\"{to}summary.json\">summary.json</a> (every cache state and repeat); everything in <a href=\"{to}results.json\">results.json</a>.</p>",
        to = context.to_run_dir
    );
    p.push_str(&environment(run, run_dir));
    p.push_str(&super::memory::section(run));
    // For people and for the report test: did every chart load and draw?
    p.push_str("<script>window.addEventListener('load',()=>{const imgs=[...document.querySelectorAll('img.chart')];const ok=imgs.filter(i=>i.complete&&i.naturalWidth>0);document.body.dataset.chartsLoaded=ok.length+'/'+imgs.length;document.body.dataset.chartBoxes=JSON.stringify(imgs.map(i=>{const r=i.getBoundingClientRect();return[Math.round(r.left),Math.round(r.top+window.scrollY),Math.round(r.width),Math.round(r.height)]}));});</script>\n</body></html>\n");
    p
}

/// `--profile-fetches`: per engine and size, where one client's time went, and its
/// flame graph.
fn profiles_section(run: &RunResults, context: &PageContext) -> String {
    if run.profiles.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<h2 id=profiles>Where the time goes</h2>\n<p>After its 1-client measurement each engine fetched on under a sampling CPU profiler (<code>--profile-fetches</code>; no clock, counter or content check around the fetches). <b>On CPU</b>: this process's CPU time ÷ wall time; the rest it waited, for the server's answer or the disk (a CPU profiler does not see waiting). <b>Kernel</b>: system time's share of that CPU time (reads, socket I/O). The samples are split by the innermost frame of a known part: SeaORM (ORM), sqlx (driver), SQLite's C code; <b>other</b> is the rest (tokio, allocation, copies, blobrace). A system call counts for the part that made it: the kernel column overlaps them. Each flame graph opens full size.</p>\n<table><tr><th class=l>engine</th><th>size</th><th class=l>cache</th><th>fetches</th><th>on CPU</th><th>kernel</th><th>samples</th><th>ORM</th><th>driver</th><th>SQLite</th><th>other</th><th class=l>flame graph</th></tr>\n",
    );
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    for f in &run.profiles {
        let _ = writeln!(
            s,
            "<tr><td class=l>{}</td><td>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=l><a href=\"{}{}\">{}</a></td></tr>",
            esc(&f.engine),
            esc(&f.size),
            esc(&f.cache),
            f.fetches,
            pct(f.cpu_per_wall),
            pct(f.kernel_share_of_cpu),
            f.samples,
            pct(f.orm_share),
            pct(f.driver_share),
            pct(f.sqlite_share),
            pct(f.other_share),
            context.to_run_dir,
            esc(&f.flamegraph),
            esc(&f.flamegraph)
        );
    }
    s.push_str("</table>\n");
    s.push_str(&server_profiles(run, context));
    s
}

/// The servers' own CPU profiles (a Go server's pprof endpoint, over the same seconds
/// as the client's), or why one was not taken.
fn server_profiles(run: &RunResults, context: &PageContext) -> String {
    let rows: Vec<_> = run
        .profiles
        .iter()
        .filter(|f| f.server.is_some() || f.server_unavailable.is_some())
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<p>The server's own CPU profile over the same seconds (Go's pprof endpoint in its container). <b>On CPU</b>: the CPU time its samples stand for ÷ those seconds, in CPUs (up to its cap). Its time is split by the innermost frame of a known part: a system call counts as one whoever made it, an allocation as the allocator's.</p>\n<table><tr><th class=l>engine</th><th>size</th><th class=l>cache</th><th>server on CPU</th><th>samples</th><th class=l>where its CPU time went</th><th class=l>flame graph</th></tr>\n",
    );
    for f in rows {
        let _ = match (&f.server, &f.server_unavailable) {
            (Some(p), _) => writeln!(
                s,
                "<tr><td class=l>{}</td><td>{}</td><td class=l>{}</td><td>{:.0}%</td><td>{}</td><td class=l>{}</td><td class=l><a href=\"{}{}\">{}</a></td></tr>",
                esc(&f.engine),
                esc(&f.size),
                esc(&f.cache),
                p.cpu_per_wall * 100.0,
                p.samples,
                esc(&p
                    .parts
                    .iter()
                    .map(|part| format!("{} {:.0}%", part.part, part.share * 100.0))
                    .collect::<Vec<_>>()
                    .join(", ")),
                context.to_run_dir,
                esc(&p.flamegraph),
                esc(&p.flamegraph)
            ),
            (None, why) => writeln!(
                s,
                "<tr><td class=l>{}</td><td>{}</td><td class=l>{}</td><td>unavailable</td><td></td><td class=l colspan=2>{}</td></tr>",
                esc(&f.engine),
                esc(&f.size),
                esc(&f.cache),
                esc(why.as_deref().unwrap_or(""))
            ),
        };
    }
    s.push_str("</table>\n");
    s
}

/// "Under load": per size, the throughput-latency chart and one row per load.
fn load_section(run: &RunResults, charts: &[AnyChart]) -> String {
    let sizes = load_sizes(run);
    if run.load_results.is_empty() && run.skipped_loads.is_empty() {
        return String::new();
    }
    let mut p = String::from(
        "<h2 id=load>Under load</h2>\n<p>More clients at once (closed loop: each client fetches as soon as its last fetch ended, with its own connection and its own seeded ids), or fetches offered at a rate whether or not earlier ones finished (open loop). <b>Service time</b> runs from a fetch's start to its end; <b>response time</b> from when it was due, so a stall delays every fetch queued behind it in the figures too (coordinated omission): in open loop the headline is response time, and fetches still waiting when the load ended count at the time they had waited. <b>Lag</b>: how late fetches started. With concurrent fetches a storage read cannot be charged to one fetch: disk bytes are totals ÷ fetches completed, and there is no hit/miss split. CPU: this process's share of the CPUs it may use while measuring: the load generator, and the engine itself where it runs in this process (SQLite, fs, floor).</p>\n",
    );
    for size in sizes {
        let label = format_bytes(size);
        let rows: Vec<&LoadResult> = run
            .load_results
            .iter()
            .filter(|l| l.result.size_bytes == size)
            .collect();
        let skipped: Vec<_> = run
            .skipped_loads
            .iter()
            .filter(|s| s.size_bytes == size)
            .collect();
        if rows.is_empty() && skipped.is_empty() {
            continue;
        }
        let _ = writeln!(p, "<h3 id=load-{label}>{label} blobs under load</h3>");
        p.push_str(&figures(charts, Section::Load(size)));
        p.push_str(&disk_limit_note(run, size));
        p.push_str("<table><tr><th class=l>engine</th><th class=l>load</th><th>fetches/s</th><th>MB/s</th><th class=l>percentiles of</th><th>p50</th><th>p99 (95% interval)</th><th>p99.9</th><th>service p99</th><th>lag p99</th><th>CPU</th><th>disk/fetch</th><th class=l>notes</th></tr>\n");
        for l in rows {
            let r = &l.result;
            let service = &r.measured.latency;
            let head = l.load.headline(service);
            let p99_interval = match l.load.response {
                Some(_) => None,
                None => r.measured.intervals.as_ref().and_then(|i| i.p99),
            };
            let mut notes = Vec::new();
            if l.load.limit_reached {
                notes.push(format!(
                    "<span class=bad>in-flight limit {} reached: stopped after {:.1} s; the engine does not serve this rate</span>",
                    l.load.max_in_flight, l.load.measured_seconds
                ));
            }
            if r.measured.count == 0 {
                let _ = writeln!(
                    p,
                    "<tr><td class=l>{}</td><td class=l>{}</td><td colspan=11 class=l><span class=bad>no fetch measured: {}</span></td></tr>",
                    r.engine.name(),
                    esc(&load_label(&l.load)),
                    esc(&l.load.no_fetch_why())
                );
                continue;
            }
            if l.load.unserved > 0 {
                notes.push(format!(
                    "{} of {} arrivals never started (counted at their wait so far)",
                    l.load.unserved,
                    l.load.offered.unwrap_or(0)
                ));
            }
            let _ = writeln!(
                p,
                "<tr><td class=l>{}</td><td class=l>{}</td><td>{:.0}</td><td>{:.1}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}% of {}</td><td>{}</td><td class=l>{}</td></tr>",
                r.engine.name(),
                esc(&load_label(&l.load)),
                l.load.fetches_per_s,
                l.load.mb_per_s,
                l.load.headline_word(),
                format_ns(head.p50_ns as f64),
                match p99_interval {
                    Some(_) => with_interval(head.p99_ns, p99_interval),
                    None => format_ns(head.p99_ns as f64),
                },
                format_ns(head.p999_ns as f64),
                format_ns(service.p99_ns as f64),
                match l.load.lag {
                    Some(lag) => format_ns(lag.p99_ns as f64),
                    None => "<span class=muted>closed loop</span>".into(),
                },
                l.load.cpu.share() * 100.0,
                l.load.cpu.cpus,
                r.measured.disk_per_fetch_label(),
                notes.join("; "),
            );
        }
        for s in skipped {
            let _ = writeln!(
                p,
                "<tr><td class=l>{}</td><td class=l>{} clients</td><td colspan=11 class=l><span class=bad>not run: {}</span>; use fewer clients or raise the cap</td></tr>",
                s.engine.name(),
                s.point.clients,
                esc(&s.why)
            );
        }
        p.push_str("</table>\n");
    }
    p
}

/// The disk's own throughput at a size, per client count, and what share of it the
/// floor reached with as many clients (closed loop): how close the floor is to the disk.
fn disk_limit_note(run: &RunResults, size: u64) -> String {
    let limits: Vec<_> = run
        .disk_limits
        .iter()
        .filter(|d| d.size_bytes == size)
        .collect();
    if limits.is_empty() {
        return String::new();
    }
    let floor = crate::engine::EngineKind::floor();
    let mut parts = Vec::new();
    for d in limits {
        match &d.throughput {
            Ok(t) => {
                let floor_share = run
                    .load_results
                    .iter()
                    .find(|l| {
                        l.result.engine == floor
                            && l.result.size_bytes == size
                            && l.load.point.clients == d.queue_depth
                            && l.load.point.rate.is_none()
                    })
                    .map(|l| {
                        format!(
                            "; the floor with {} clients: {:.0}% of it",
                            d.queue_depth,
                            100.0 * l.load.fetches_per_s / t.reads_per_s
                        )
                    })
                    .unwrap_or_default();
                parts.push(format!(
                    "{} at once: <b>{:.0} reads/s</b> ({:.1} MB/s, p99 {}){floor_share}",
                    d.queue_depth,
                    t.reads_per_s,
                    t.mb_per_s,
                    format_ns(t.p99_ns as f64)
                ));
            }
            Err(why) => parts.push(format!(
                "{} at once: <span class=muted>unavailable: {}</span>",
                d.queue_depth,
                esc(why)
            )),
        }
    }
    format!(
        "<p>The disk's own random reads of {} blocks (O_DIRECT: no cache, measured in this run right after the first load of each client count), as many at once as clients: {}. No engine reading uncached data from this disk passes it.</p>\n",
        format_bytes(crate::diskprobe::block_for(size)),
        parts.join("; ")
    )
}

/// `16 clients, closed loop` / `16 clients, 500/s poisson`.
fn load_label(load: &crate::results::LoadFacts) -> String {
    let clients = match load.point.clients {
        1 => "1 client".to_string(),
        n => format!("{n} clients"),
    };
    match load.point.rate {
        None => format!("{clients}, closed loop"),
        Some(rate) => format!(
            "{clients}, {}/s {}",
            crate::load_gen::rate_label(rate),
            crate::serde_name(&load.point.arrivals)
        ),
    }
}

/// The second verdict (`--mode saturate`): per engine and size, the highest rate
/// whose p99 response time met the target, beside the floor's.
fn sustainable_verdict(run: &RunResults, options: &ReportOptions) -> String {
    if run.saturations.is_empty() {
        return String::new();
    }
    let target = format_ns(options.target_p99.as_nanos() as f64);
    let mut sizes: Vec<u64> = run.saturations.iter().map(|s| s.size_bytes).collect();
    sizes.sort();
    sizes.dedup();
    let mut p = format!(
        "<h2 id=sustainable>Sustainable rate</h2>\n<p>The highest rate found at which an engine's <b>p99 response time ≤ {target}</b> (open loop, response time from when each fetch was due), per size and number of clients, as fetches/s and MB/s of blobs, and ÷ the floor's at the same size (a raw <code>pread</code> of the same bytes, same clients). Found by bisection below what the clients reach in a closed loop: see <a href=\"#saturation\">the steps</a>. \"none\": even the lowest rate tried missed the target.</p>\n<table id=sustainable-table><tr><th class=l>engine</th><th>clients</th>"
    );
    for &size in &sizes {
        let _ = write!(p, "<th>{}</th>", format_bytes(size));
    }
    p.push_str("</tr>\n");
    let mut keys: Vec<(crate::engine::EngineKind, u32)> = run
        .saturations
        .iter()
        .map(|s| (s.engine, s.clients))
        .collect();
    keys.sort();
    keys.dedup();
    for (engine, clients) in keys {
        let _ = write!(
            p,
            "<tr><td class=l>{}</td><td>{clients}</td>",
            engine.name()
        );
        for &size in &sizes {
            let find = |e| {
                run.saturations
                    .iter()
                    .find(|s| s.engine == e && s.clients == clients && s.size_bytes == size)
            };
            let cell = match find(engine) {
                None => "<span class=muted>not measured</span>".to_string(),
                Some(s) => match (s.search.sustainable, s.sustainable_mb_per_s) {
                    (Some(rate), Some(mb)) => {
                        let vs_floor = find(crate::engine::EngineKind::floor())
                            .filter(|f| f.engine != engine)
                            .and_then(|f| f.search.sustainable)
                            .map(|f| {
                                format!("<br><small class=muted>{:.2}x floor</small>", rate / f)
                            })
                            .unwrap_or_default();
                        format!(
                            "{}/s<br>{mb:.1} MB/s{vs_floor}",
                            crate::load_gen::rate_label(rate)
                        )
                    }
                    _ => "<span class=bad>none</span>".to_string(),
                },
            };
            let _ = write!(p, "<td>{cell}</td>");
        }
        p.push_str("</tr>\n");
    }
    p.push_str("</table>\n");
    p
}

/// Every step of every saturation search.
fn saturation_section(run: &RunResults) -> String {
    if run.saturations.is_empty() {
        return String::new();
    }
    let mut p = String::from(
        "<h2 id=saturation>Saturation searches</h2>\n<p>Each search first measures what its clients reach in a closed loop (the most they can be offered), offers that rate, then bisects between the highest rate that met the target and the lowest that did not. A step also misses when its backlog (fetches due, not finished) reached its in-flight limit: --max-in-flight, or twice rate × target where that is more.</p>\n<table><tr><th class=l>engine</th><th>size</th><th>clients</th><th class=l>arrivals</th><th>closed loop fetches/s</th><th class=l>steps: offered → achieved, p99 response</th><th>sustainable</th></tr>\n",
    );
    for s in &run.saturations {
        let steps: Vec<String> = s
            .search
            .steps
            .iter()
            .map(|step| {
                format!(
                    "<span class={}>{}/s → {:.0}/s, {}{}</span>",
                    if step.met { "good" } else { "bad" },
                    crate::load_gen::rate_label(step.rate),
                    step.achieved,
                    format_ns(step.response.p99_ns as f64),
                    if step.limit_reached { " (limit)" } else { "" }
                )
            })
            .collect();
        let _ = writeln!(
            p,
            "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td class=l>{}</td><td>{:.0}</td><td class=l>{}</td><td>{}</td></tr>",
            s.engine.name(),
            s.size,
            s.clients,
            crate::serde_name(&s.arrivals),
            s.search.capacity,
            steps.join("<br>"),
            match s.search.sustainable {
                Some(rate) => format!("{}/s", crate::load_gen::rate_label(rate)),
                None => "none".into(),
            }
        );
    }
    p.push_str("</table>\n");
    p
}

fn header(run: &RunResults) -> String {
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>blobrace {id}</title><style>{CSS}</style></head><body>\n<h1>blobrace: fetch latency by blob size — run {id}</h1>\n<p class=muted>{start} → {end}, driven by {driver}. Each fetch is one random id{key}, fetched whole; the datasets hold {bytes} per size class of incompressible bytes.</p>\n",
        key = if run.config.key.is_binary() {
            format!(" (by its {} key)", run.config.key)
        } else {
            String::new()
        },
        id = esc(&run.run_id),
        start = esc(&run.started_at),
        end = esc(run.finished_at.as_deref().unwrap_or("(unfinished)")),
        driver = esc(&run.driver),
        bytes = format_bytes(run.config.dataset_bytes),
    )
}

/// Per engine: the largest size meeting the target, and the floor ratios at 64KiB.
fn verdict(run: &RunResults, options: &ReportOptions) -> String {
    let target_ns = options.target_p99.as_nanos() as u64;
    let target = format_ns(target_ns as f64);
    let mut p = format!(
        "<h2 id=verdict>Verdict</h2>\n<p>The largest blob size up to which <b>every</b> size an engine was measured at has <b>p99 ≤ {target}</b> (a size that passes above one that fails does not count; a p99 from too few fetches to judge ends the walk too), and how it compares with the floor (a raw <code>pread</code> of the same bytes) at 64KiB.</p>\n<table id=verdict-table><tr><th class=l>engine</th><th>every size up to this meets p99 ≤ {target}</th><th class=l>where it stops</th><th>p50 vs floor at 64KiB</th><th>p99 vs floor at 64KiB</th></tr>\n"
    );
    for engine in engines(run) {
        let v = engine_verdict(run, engine, target_ns);
        let largest = match (v.largest, &v.stopped) {
            (Some(s), _) => format!("<span class=good>{}</span>", format_bytes(s)),
            (None, Some((_, SizeJudgement::CannotJudge { .. }))) => {
                "<span class=muted>cannot judge</span>".into()
            }
            (None, _) => "<span class=bad>none</span>".into(),
        };
        let mut stops = match &v.stopped {
            None => "every size measured meets it".to_string(),
            Some((size, SizeJudgement::Misses { p99_ns })) => format!(
                "<span class=bad>misses at {}: p99 {}</span>",
                format_bytes(*size),
                format_ns(*p99_ns as f64)
            ),
            Some((size, SizeJudgement::CannotJudge { why })) => format!(
                "<span class=muted>cannot judge {}: {}</span>",
                format_bytes(*size),
                esc(why)
            ),
            Some((_, SizeJudgement::Meets)) => String::new(),
        };
        for (size, iv) in &v.close_calls {
            let _ = write!(
                stops,
                "; close call at {}: p99 interval {}–{} spans the target",
                format_bytes(*size),
                format_ns(iv.lo_ns),
                format_ns(iv.hi_ns)
            );
        }
        let (r50, r99) = match run
            .result(engine, 64 << 10)
            .and_then(|r| floor_ratio(run, r))
        {
            Some((a, b)) => (format!("{a:.2}x"), format!("{b:.2}x")),
            None => ("<span class=muted>not measured</span>".into(), "".into()),
        };
        let _ = writeln!(
            p,
            "<tr><td class=l>{}</td><td>{largest}</td><td class=l>{stops}</td><td>{r50}</td><td>{r99}</td></tr>",
            engine.name()
        );
    }
    p.push_str("</table>\n");
    p
}

/// The yellow box: what must be read before any number.
fn warnings_box(run: &RunResults) -> String {
    let warnings = warnings(run);
    if warnings.is_empty() {
        return String::new();
    }
    let mut p =
        String::from("<div class=warn id=warnings><b>Read these before the numbers:</b><ul>\n");
    for w in &warnings {
        let _ = writeln!(p, "<li>{w}</li>");
    }
    p.push_str("</ul></div>\n");
    p
}

fn against_baseline(c: &Comparison) -> String {
    let mut p = format!(
        "<h2 id=compare>Against baseline {}</h2><p>Ratio this run / baseline, {} cache. p50, p90 and p99 are marked as a change only where their 95% intervals do not overlap. Where both runs repeated the engine list (<code>--repeat</code>), figures and intervals are pooled over the repeats and cover how much whole runs differ (\"repeats 3/3\"). Otherwise they are one measurement's (\"1 measurement\"): they cover only the noise inside it, and two quick runs minutes apart differed beyond them on most p50s, so treat such a mark as a lead, and confirm it with <code>--repeat 3</code> in both runs. \"not judged\": too few fetches for an interval. The mean and p99.9 are shown, never marked. Where the floor changed at a size too, the disk moved between the runs: an engine's change there may be the disk's. So each p50 also shows the engine ÷ the floor of its own run, in both runs (\"÷floor 1.65 → 1.56\"), marked slower or faster only where those ratios' 95% intervals are apart: what changed in the engine itself. Results recorded before intervals existed: beyond ±{:.0}%.</p><table><tr><th class=l>engine</th><th>size</th><th>stat</th><th>baseline</th><th>this run</th><th>ratio</th><th class=l>judged by</th></tr>\n",
        esc(&c.baseline_id),
        c.cache.name(),
        c.noise * 100.0
    );
    for ch in &c.changes {
        let mark = match ch.verdict {
            Some(ChangeVerdict::Slower) => {
                format!("<span class=bad>{:.2}x slower</span>", ch.ratio)
            }
            Some(ChangeVerdict::Faster) => {
                format!("<span class=good>{:.2}x faster</span>", ch.ratio)
            }
            None if ch.mark() == "not judged" => {
                format!("{:.2}x <span class=muted>not judged</span>", ch.ratio)
            }
            None => format!("{:.2}x", ch.ratio),
        };
        let mark = match (ch.verdict, c.floor_moved(ch)) {
            (Some(_), Some(floor)) => format!(
                "{mark}<br><small class=muted>the floor too: {:.2}x; the disk moved</small>",
                floor.ratio
            ),
            _ => mark,
        };
        let mark = match ch.vs_floor {
            Some(v) => format!("{mark}<br><small class=muted>{}</small>", esc(&v.label())),
            None => mark,
        };
        let _ = writeln!(
            p,
            "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{mark}</td><td class=l>{}</td></tr>",
            ch.engine.name(),
            format_bytes(ch.size_bytes),
            ch.percentile,
            format_ns(ch.baseline_ns),
            format_ns(ch.current_ns),
            ch.basis()
        );
    }
    p.push_str("</table>\n");
    for n in &c.not_compared {
        let _ = writeln!(p, "<p class=muted>Not compared: {}</p>", esc(n));
    }
    p
}

/// What loading each dataset took, for the datasets this run loaded or reused.
fn loads(run: &RunResults) -> String {
    let mut p = String::from(
        "<table><tr><th class=l>store</th><th>size</th><th>outcome</th><th>rows</th><th>seconds</th><th>MB/s</th><th>loader peak RSS</th><th>on disk</th><th>on disk ÷ data</th></tr>\n",
    );
    for l in &run.loads {
        let _ = writeln!(
            p,
            "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            l.store.name(),
            format_bytes(l.size_bytes),
            l.outcome,
            l.rows,
            l.seconds,
            l.mb_per_s
                .map(|m| format!("{m:.0}"))
                .unwrap_or_else(|| "—".into()),
            l.peak_rss_bytes
                .map(format_bytes)
                .unwrap_or_else(|| "unavailable".into()),
            crate::load::disk_label(l.disk_bytes),
            l.disk_bytes
                .map(|d| format!("{:.2}", d as f64 / (l.rows * l.size_bytes).max(1) as f64))
                .unwrap_or_else(|| "unavailable".into()),
        );
    }
    p.push_str("</table>\n");
    p
}

/// Caps, counters and cold starts per result; engine settings; machine and run.
fn environment(run: &RunResults, run_dir: &Path) -> String {
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

/// One line per server whose container and cache this run changed; "none" when it
/// changed none (they already had the run's cap, or the run asked for no cap).
fn server_fits(run: &RunResults) -> String {
    if run.server_fits.is_empty() {
        return "none changed".into();
    }
    run.server_fits
        .iter()
        .map(|fit| esc(&fit.line()))
        .collect::<Vec<_>>()
        .join("<br>")
}

fn environment_row(run: &RunResults, r: &EngineResult, run_dir: &Path) -> String {
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
