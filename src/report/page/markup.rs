//! The small pieces every section is built from: escaping, an unavailable figure,
//! a percentile with its interval, the summary table, a chart's figure.

use std::path::{Component, Path, PathBuf};

use crate::report::charts::{AnyChart, Section};
use crate::size::format_bytes;
use crate::stats::format_ns;
use crate::summary::SummaryRow;

pub(crate) fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(super) fn opt_label(v: Option<String>) -> String {
    v.unwrap_or_else(|| "<span class=bad>unavailable</span>".into())
}

/// A path from `from_dir` to `to`, for links that work when the page opens from disk.
pub(super) fn relative(from_dir: &Path, to: &Path) -> Option<String> {
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

/// A percentile with its 95% interval below it (or a note that it has none).
pub(super) fn with_interval(ns: u64, interval: Option<crate::stats::Interval>) -> String {
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

pub(super) fn row(r: &SummaryRow) -> String {
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
pub(super) fn table<'a>(rows: impl IntoIterator<Item = &'a SummaryRow>) -> String {
    let mut t = String::from(
        "<table><tr><th class=l>engine</th><th>size</th><th>mean</th><th>p50 (95% interval)</th><th>p90 (95% interval)</th><th>p99 (95% interval)</th><th>p99.9</th><th>max</th><th>hit ratio</th><th>disk/fetch</th><th>p50 / p99 vs floor</th><th>disk probe p50 before → after</th><th>ORM cost (p50)</th><th>fetches</th></tr>\n",
    );
    for r in rows {
        t.push_str(&row(r));
    }
    t.push_str("</table>\n");
    t
}

pub(super) fn figure(chart: &AnyChart) -> String {
    let stem = chart.file_stem();
    format!(
        "<figure><img class=chart src=\"{stem}.svg\" alt=\"{}\"><figcaption>{} (<a href=\"{stem}.png\">PNG</a>)</figcaption></figure>\n",
        esc(&chart.caption()),
        esc(&chart.caption())
    )
}

/// Every chart of one section, in the order they were listed.
pub(super) fn figures(charts: &[AnyChart], section: Section) -> String {
    charts
        .iter()
        .filter(|c| c.section() == section)
        .map(figure)
        .collect()
}
