//! Reads while writing (`--write-rate`): per engine, size, cache state and client
//! count, the readers' latency beside what the writer did in the same seconds, its
//! own latency and how far behind its schedule it fell (`templates/report/writes.html`).
//! The readers' latency without a writer is another run (`--write-rate 0`, or the
//! fresh dataset): `blobrace variants` sets the two side by side as ratios.

use askama::Template;

use crate::records::results::{EngineResult, RunResults};
use crate::stats::format_ns;
use crate::workload::live::WriterReport;

use super::markup::{Marked, or_unavailable};

pub(super) struct WriteRow {
    engine: &'static str,
    size: String,
    clients: u32,
    reads: u64,
    read_p50: String,
    read_p99: String,
    asked: String,
    achieved: Marked,
    changes: u64,
    change_p50: Marked,
    change_p99: Marked,
    change_max: Marked,
    most_behind: Marked,
    slowest_second: Marked,
}

#[derive(Template)]
#[template(path = "report/writes.html")]
pub(super) struct Writes {
    rate: String,
    rows: Vec<WriteRow>,
}

fn ms(v: Option<f64>) -> Marked {
    or_unavailable(v.map(|v| format!("{v:.2} ms")))
}

fn row(r: &EngineResult, clients: u32, w: &WriterReport) -> WriteRow {
    // Behind by more than one interval: the writer did not keep its rate.
    let behind = format!("{:.1} ms", w.most_behind_ms);
    let late = w.rate_asked > 0.0 && w.most_behind_ms > 1e3 / w.rate_asked;
    let slowest = w
        .per_second
        .iter()
        .enumerate()
        .filter(|(_, (n, _))| *n > 0)
        .max_by(|a, b| a.1.1.total_cmp(&b.1.1))
        .map(|(s, (n, slowest))| format!("s {s}: {n} changes, slowest {slowest:.1} ms"));
    WriteRow {
        engine: r.engine.name(),
        size: r.size.clone(),
        clients,
        reads: r.measured.count,
        read_p50: format_ns(r.measured.latency.p50_ns as f64),
        read_p99: format_ns(r.measured.latency.p99_ns as f64),
        asked: format!("{}/s", w.rate_asked),
        achieved: match w.rate_achieved() {
            Some(a) if a < 0.95 * w.rate_asked => Marked::Bad(format!("{a:.1}/s")),
            Some(a) => Marked::Plain(format!("{a:.1}/s")),
            None => Marked::Bad("unavailable (no change committed)".into()),
        },
        changes: w.writes,
        change_p50: ms(w.p50_ms),
        change_p99: ms(w.p99_ms),
        change_max: ms(w.max_ms),
        most_behind: if late {
            Marked::Bad(behind)
        } else {
            Marked::Plain(behind)
        },
        slowest_second: or_unavailable(slowest),
    }
}

impl Writes {
    /// None where no measurement of `run` had a writer beside it.
    pub fn of(run: &RunResults) -> Option<Self> {
        let one = run.results.iter().map(|r| (r, 1));
        let many = run
            .load_results
            .iter()
            .map(|l| (&l.result, l.load.point.clients));
        let mut rows: Vec<(u64, WriteRow)> = one
            .chain(many)
            .filter_map(|(r, clients)| Some((r.size_bytes, row(r, clients, r.writer.as_ref()?))))
            .collect();
        if rows.is_empty() {
            return None;
        }
        rows.sort_by(|a, b| (a.0, a.1.engine, a.1.clients).cmp(&(b.0, b.1.engine, b.1.clients)));
        Some(Writes {
            rate: run
                .config
                .write_rate
                .map_or_else(|| "?".into(), |r| format!("{r}")),
            rows: rows.into_iter().map(|(_, r)| r).collect(),
        })
    }
}
