//! How the steady state was reached per engine and size, and how far repeats agree.

use std::fmt::Write as _;

use crate::report::data::{engines, sizes};
use crate::results::{EngineResult, RunResults};
use crate::size::format_bytes;
use crate::stats::format_ns;

use super::PageContext;
use super::markup::{esc, opt_label, with_interval};

/// Steady results: how the cache was filled and settled, the hit ratio reached
/// against the model's (cache held ÷ dataset).
pub(super) fn steady_table(run: &RunResults) -> String {
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
pub(super) fn repeats_table(context: &PageContext) -> String {
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
