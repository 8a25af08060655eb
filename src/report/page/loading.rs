//! How each dataset was loaded: rows, MB/s, bytes on disk, resumed or reused.

use std::fmt::Write as _;

use crate::results::RunResults;
use crate::size::format_bytes;

/// What loading each dataset took, for the datasets this run loaded or reused.
pub(super) fn loads(run: &RunResults) -> String {
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
