//! Against an older run (`report --baseline`): ratios per engine, size and percentile
//! (`templates/report/baseline.html`).

use askama::Template;

use crate::report::compare::{ChangeVerdict, Comparison};
use crate::size::format_bytes;
use crate::stats::format_ns;

pub(super) enum Mark {
    Slower,
    Faster,
    NotJudged,
    Unmarked,
}

pub(super) struct ChangeRow {
    engine: &'static str,
    size: String,
    stat: &'static str,
    baseline: String,
    current: String,
    ratio: String,
    mark: Mark,
    /// The floor's own ratio at that size, where it changed too.
    floor_moved: Option<String>,
    /// The engine ÷ the floor in both runs.
    vs_floor: Option<String>,
    basis: String,
}

#[derive(Template)]
#[template(path = "report/baseline.html")]
pub(super) struct AgainstBaseline {
    baseline_id: String,
    cache: &'static str,
    noise_percent: String,
    rows: Vec<ChangeRow>,
    not_compared: Vec<String>,
}

impl AgainstBaseline {
    pub fn of(c: &Comparison) -> Self {
        let rows = c
            .changes
            .iter()
            .map(|ch| ChangeRow {
                engine: ch.engine.name(),
                size: format_bytes(ch.size_bytes),
                stat: ch.percentile,
                baseline: format_ns(ch.baseline_ns),
                current: format_ns(ch.current_ns),
                ratio: format!("{:.2}x", ch.ratio),
                mark: match ch.verdict {
                    Some(ChangeVerdict::Slower) => Mark::Slower,
                    Some(ChangeVerdict::Faster) => Mark::Faster,
                    None if ch.mark() == "not judged" => Mark::NotJudged,
                    None => Mark::Unmarked,
                },
                floor_moved: match (ch.verdict, c.floor_moved(ch)) {
                    (Some(_), Some(floor)) => Some(format!("{:.2}x", floor.ratio)),
                    _ => None,
                },
                vs_floor: ch.vs_floor.map(|v| v.label()),
                basis: ch.basis(),
            })
            .collect();
        AgainstBaseline {
            baseline_id: c.baseline_id.clone(),
            cache: c.cache.name(),
            noise_percent: format!("{:.0}", c.noise * 100.0),
            rows,
            not_compared: c.not_compared.clone(),
        }
    }
}
