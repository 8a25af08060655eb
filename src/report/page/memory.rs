//! The report's per-step memory table: what each step (engine, size, cache state)
//! took at its highest in the measuring process and its cgroup, against the cap. A
//! step near its cap is one the kernel may kill or squeeze; one whose process peak
//! grows step after step holds memory the page cache would otherwise use.

use std::fmt::Write;

use crate::results::RunResults;
use crate::size::format_bytes;

pub(super) fn label(bytes: Option<u64>) -> String {
    bytes
        .map(format_bytes)
        .unwrap_or_else(|| "unavailable".into())
}

/// `<h3>` and table, or nothing for a run without step peaks (older results).
pub fn section(run: &RunResults) -> String {
    let steps: Vec<_> = run
        .results
        .iter()
        .filter_map(|r| Some((r, r.step_memory.as_ref()?)))
        .collect();
    if steps.is_empty() {
        return String::new();
    }
    let mut p = String::from(
        "<h3 id=memory>Memory per step</h3>\n<p>Peaks while each engine was opened, warmed up and measured, in the measuring process and in its cgroup (the page cache it read through is charged there, and on cgroup v1 the kernel memory of the files it opened). Servers' own memory is in each container's figures.</p>\n<table><tr><th class=l>engine</th><th class=l>size</th><th class=l>cache</th><th>process peak RSS</th><th>cgroup peak</th><th>kernel memory peak</th><th>cap</th><th class=l>cgroup peaks since</th></tr>\n",
    );
    for (r, m) in steps {
        let _ = writeln!(
            p,
            "<tr><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=l>{}</td></tr>",
            r.engine.name(),
            r.size,
            r.scenario.cache.name(),
            label(r.process_peak_rss_bytes),
            label(m.cgroup_peak_bytes),
            label(m.kernel_peak_bytes),
            run.cap.memory_label(),
            super::markup::esc(&m.cgroup_peaks_since),
        );
    }
    p.push_str("</table>\n");
    p
}
