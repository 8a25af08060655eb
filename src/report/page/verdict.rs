//! The page's head: the run, which cache state it shows, the verdict per engine and
//! the sustainable rate.

use std::fmt::Write as _;

use crate::report::ReportOptions;
use crate::report::data::{SizeJudgement, engines, verdict as engine_verdict};
use crate::results::RunResults;
use crate::size::format_bytes;
use crate::stats::format_ns;
use crate::steady::CacheState;
use crate::summary::floor_ratio;

use super::CSS;
use super::PageContext;
use super::markup::esc;

pub(super) fn header(run: &RunResults) -> String {
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

/// Which cache state this page shows, and links to the others.
pub(super) fn scenario_line(context: &PageContext) -> String {
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

/// Per engine: the largest size meeting the target, and the floor ratios at 64KiB.
pub(super) fn verdict(run: &RunResults, options: &ReportOptions) -> String {
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

/// The second verdict (`--mode saturate`): per engine and size, the highest rate
/// whose p99 response time met the target, beside the floor's.
pub(super) fn sustainable_verdict(run: &RunResults, options: &ReportOptions) -> String {
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
    let mut keys: Vec<(crate::db::registry::EngineKind, u32)> = run
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
                        let vs_floor = find(crate::db::registry::EngineKind::floor())
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
