//! How each dataset was loaded: rows, MB/s, bytes on disk, resumed or reused
//! (`templates/report/loads.html`).

use askama::Template;

use crate::records::results::RunResults;
use crate::records::summary::unavailable_or;
use crate::size::format_bytes;

pub(super) struct LoadRow {
    store: &'static str,
    size: String,
    outcome: String,
    rows: u64,
    seconds: String,
    mb_per_s: String,
    peak_rss: String,
    on_disk: String,
    on_disk_ratio: String,
    /// What `--churn` changed after the load, where it ran.
    churn: String,
}

/// `3687 rows replaced (30%) in 2.1 s, disk 774MiB → 1.01GiB`; a churn complete
/// before this run says so.
fn churn_cell(c: &crate::load::ChurnReport) -> String {
    if c.applied_now == 0 {
        return format!(
            "{} rows ({}) changed before this run{}",
            c.rows,
            c.churn,
            if c.cleanup.is_empty() {
                String::new()
            } else {
                format!(
                    "; the database says: {}",
                    crate::load::cleanup_label(&c.cleanup)
                )
            }
        );
    }
    let resumed = if c.applied_before > 0 {
        format!(", resumed at {}", c.applied_before)
    } else {
        String::new()
    };
    let mut cell = format!(
        "{} rows ({}) changed in {:.1} s{resumed}, disk {} → {}",
        c.applied_now,
        c.churn,
        c.seconds,
        crate::size::disk_label(c.disk_bytes_before),
        crate::size::disk_label(c.disk_bytes_after)
    );
    for done in &c.maintenance {
        cell.push_str(&format!("; maintenance: {done}"));
    }
    if !c.cleanup.is_empty() {
        cell.push_str(&format!(
            "; the database says: {}",
            crate::load::cleanup_label(&c.cleanup)
        ));
    }
    cell
}

/// What loading each dataset took, for the datasets this run loaded or reused.
#[derive(Template)]
#[template(path = "report/loads.html")]
pub(super) struct Loads {
    rows: Vec<LoadRow>,
}

impl Loads {
    pub fn of(run: &RunResults) -> Self {
        // A size mix's dataset: its own bytes and name (its size is its largest blob).
        let mix = run
            .config
            .size_mix
            .and_then(|_| run.config.datasets().into_iter().next());
        let rows = run
            .loads
            .iter()
            .map(|l| (l, mix.map_or(l.rows * l.size_bytes, |m| m.bytes())))
            .map(|(l, blob_bytes)| LoadRow {
                store: l.store.name(),
                size: mix.map_or_else(|| format_bytes(l.size_bytes), |m| m.size_label()),
                outcome: l.outcome.to_string(),
                rows: l.rows,
                seconds: format!("{:.1}", l.seconds),
                mb_per_s: l
                    .mb_per_s
                    .map(|m| format!("{m:.0}"))
                    .unwrap_or_else(|| "—".into()),
                peak_rss: unavailable_or(l.peak_rss_bytes.map(format_bytes)),
                on_disk: crate::size::disk_label(l.disk_bytes),
                on_disk_ratio: unavailable_or(
                    l.disk_bytes
                        .map(|d| format!("{:.2}", d as f64 / blob_bytes.max(1) as f64)),
                ),
                churn: l.churn.as_ref().map_or_else(|| "—".into(), churn_cell),
            })
            .collect();
        Loads { rows }
    }
}
