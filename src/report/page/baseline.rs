//! Against an older run (`report --baseline`): ratios per engine, size and percentile.

use std::fmt::Write as _;

use crate::report::compare::{ChangeVerdict, Comparison};
use crate::size::format_bytes;
use crate::stats::format_ns;

use super::markup::esc;

pub(super) fn against_baseline(c: &Comparison) -> String {
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
