//! Many clients at once: the closed- and open-loop loads, and the saturation search.

use std::fmt::Write as _;

use crate::report::charts::{AnyChart, Section};
use crate::report::data::load_sizes;
use crate::results::{LoadResult, RunResults};
use crate::size::format_bytes;
use crate::stats::format_ns;

use super::markup::{esc, figures, with_interval};

/// "Under load": per size, the throughput-latency chart and one row per load.
pub(super) fn load_section(run: &RunResults, charts: &[AnyChart]) -> String {
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
pub(super) fn disk_limit_note(run: &RunResults, size: u64) -> String {
    let limits: Vec<_> = run
        .disk_limits
        .iter()
        .filter(|d| d.size_bytes == size)
        .collect();
    if limits.is_empty() {
        return String::new();
    }
    let floor = crate::db::registry::EngineKind::floor();
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
pub(super) fn load_label(load: &crate::results::LoadFacts) -> String {
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

/// Every step of every saturation search.
pub(super) fn saturation_section(run: &RunResults) -> String {
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
