//! Cold at equal fill (`cold_fill`): each engine's cold figure over the same number
//! of fetches from its cold start, beside its whole cold cell
//! (`templates/report/cold_fill.html`).

use askama::Template;

use crate::stats::format_ns;

pub(super) struct Row {
    engine: String,
    fetches: u64,
    p50: String,
    p99: String,
    hits: String,
    cell_fetches: u64,
    cell_p50: String,
    cell_hits: String,
}

pub(super) struct Round {
    size: String,
    repeat: Option<u32>,
    fetches: u64,
    rows: Vec<Row>,
}

#[derive(Template)]
#[template(path = "report/cold_fill.html")]
pub(super) struct ColdFill {
    p99_fetches: u64,
    rounds: Vec<Round>,
}

impl ColdFill {
    pub fn of(run: &crate::records::results::RunResults) -> Option<Self> {
        let rounds = crate::records::cold_fill::rounds(run);
        if rounds.is_empty() {
            return None;
        }
        let repeats = rounds.iter().any(|r| r.repeat > 1);
        let ratio = |r: Option<f64>| {
            r.map(|r| format!("{:.1}%", r * 100.0))
                .unwrap_or_else(|| "unavailable".into())
        };
        Some(ColdFill {
            p99_fetches: crate::records::cold_fill::P99_FETCHES,
            rounds: rounds
                .into_iter()
                .map(|round| Round {
                    size: round.size,
                    repeat: repeats.then_some(round.repeat),
                    fetches: round.fetches,
                    rows: round
                        .rows
                        .into_iter()
                        .map(|e| Row {
                            engine: e.engine,
                            fetches: e.fetches,
                            p50: format_ns(e.p50_ns),
                            p99: e.p99_ns.map(format_ns).unwrap_or_else(|| "—".into()),
                            hits: ratio(e.hit_ratio),
                            cell_fetches: e.cell_fetches,
                            cell_p50: format_ns(e.cell_p50_ns as f64),
                            cell_hits: ratio(e.cell_hit_ratio),
                        })
                        .collect(),
                })
                .collect(),
        })
    }
}
