//! The time to the first bytes of blobs >= 1 MiB, per size: each engine's streamed
//! fetch timed at its first piece and at its end, beside its ordinary whole fetch; an
//! engine that reads whole values only says why (`templates/report/first_bytes.html`).

use askama::Template;

use crate::records::results::RunResults;
use crate::stats::format_ns;

pub(super) struct Row {
    engine: String,
    size: String,
    /// First piece p50 / p99, the streamed fetch's end p50 / p99; or why none.
    streamed: Result<[String; 4], String>,
    /// The ordinary fetch of the same engine and size in this view: p50, p99.
    whole: [String; 2],
}

#[derive(Template)]
#[template(path = "report/first_bytes.html")]
pub(super) struct FirstBytes {
    chunk: String,
    rows: Vec<Row>,
}

impl FirstBytes {
    pub fn of(run: &RunResults) -> Option<Self> {
        let first = run.first_bytes.first()?;
        let rows = run
            .first_bytes
            .iter()
            .map(|f| {
                let fetch = run
                    .results
                    .iter()
                    .find(|r| r.engine == f.engine && r.size_bytes == f.size_bytes);
                let whole = match fetch {
                    Some(r) => [
                        format_ns(r.measured.latency.p50_ns as f64),
                        format_ns(r.measured.latency.p99_ns as f64),
                    ],
                    None => ["unavailable".into(), "unavailable".into()],
                };
                Row {
                    engine: f.engine.name().to_string(),
                    size: f.size.clone(),
                    streamed: match &f.measured {
                        Some(m) => Ok([
                            format_ns(m.first_p50_ns as f64),
                            m.p99_text(m.first_p99_ns),
                            format_ns(m.whole_p50_ns as f64),
                            m.p99_text(m.whole_p99_ns),
                        ]),
                        None => Err(f.how.clone()),
                    },
                    whole,
                }
            })
            .collect();
        Some(FirstBytes {
            chunk: crate::size::format_bytes(first.chunk_bytes),
            rows,
        })
    }
}
