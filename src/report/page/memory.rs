//! The report's per-step memory table (`templates/report/memory.html`): what each
//! step (engine, size, cache state) took at its highest in the measuring process and
//! its cgroup, against the cap. A step near its cap is one the kernel may kill or
//! squeeze; one whose process peak grows step after step holds memory the page cache
//! would otherwise use.

use askama::Template;

use crate::records::results::RunResults;
use crate::records::summary::unavailable_or;
use crate::size::format_bytes;

fn label(bytes: Option<u64>) -> String {
    unavailable_or(bytes.map(format_bytes))
}

pub(super) struct StepPeaks {
    engine: &'static str,
    size: String,
    cache: &'static str,
    process_peak: String,
    cgroup_peak: String,
    kernel_peak: String,
    since: String,
}

#[derive(Template)]
#[template(path = "report/memory.html")]
pub(super) struct Memory {
    cap: String,
    rows: Vec<StepPeaks>,
}

impl Memory {
    /// None for a run without step peaks (older results).
    pub fn of(run: &RunResults) -> Option<Self> {
        let rows: Vec<StepPeaks> = run
            .results
            .iter()
            .filter_map(|r| {
                let m = r.step_memory.as_ref()?;
                Some(StepPeaks {
                    engine: r.engine.name(),
                    size: r.size.clone(),
                    cache: r.scenario.cache.name(),
                    process_peak: label(r.process_peak_rss_bytes),
                    cgroup_peak: label(m.cgroup_peak_bytes),
                    kernel_peak: label(m.kernel_peak_bytes),
                    since: m.cgroup_peaks_since.clone(),
                })
            })
            .collect();
        (!rows.is_empty()).then(|| Memory {
            cap: run.cap.memory_label(),
            rows,
        })
    }
}
