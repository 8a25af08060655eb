//! The small typed pieces every section is built from, each rendered by its own
//! template in `templates/report/`: a marked figure, a percentile with its interval,
//! the measurement table, a section's charts. A section's template shows a piece
//! with `{{ piece|safe }}`: the piece's template escaped what it holds.

use std::path::{Component, Path, PathBuf};

use askama::Template;

use crate::records::summary::SummaryRow;
use crate::report::charts::{AnyChart, Section};
use crate::size::format_bytes;
use crate::stats::{Interval, format_ns};

/// A figure and how it is marked.
#[derive(Template)]
#[template(path = "report/marked.html")]
pub(super) enum Marked {
    Plain(String),
    Good(String),
    Bad(String),
    Muted(String),
}

/// A ratio to a floor measured by another part of the run: hours apart, not one disk.
pub(super) fn another_part_label((mine, floors): (u32, u32)) -> String {
    format!(
        "part {} against the floor's part {}: not one disk",
        mine + 1,
        floors + 1
    )
}

/// A value, or "unavailable" marked bad: never a made-up 0.
pub(super) fn or_unavailable(v: Option<String>) -> Marked {
    match v {
        Some(v) => Marked::Plain(v),
        None => Marked::Bad("unavailable".into()),
    }
}

/// A path from `from_dir` to `to`, for links that work when the page opens from disk.
pub(super) fn relative(from_dir: &Path, to: &Path) -> Option<String> {
    let from = from_dir.canonicalize().ok()?;
    let to = to.canonicalize().ok()?;
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut path = PathBuf::new();
    for _ in common..f.len() {
        path.push("..");
    }
    for c in &t[common..] {
        path.push(c.as_os_str());
    }
    Some(path.to_string_lossy().into_owned())
}

pub(super) struct Span {
    pub lo: String,
    pub hi: String,
}

/// A percentile with its 95% interval below it, or (with `say_missing`) a note that
/// it has none.
#[derive(Template)]
#[template(path = "report/with_interval.html")]
pub(super) struct WithInterval {
    pub value: String,
    pub interval: Option<Span>,
    pub say_missing: bool,
}

impl WithInterval {
    pub fn of(ns: u64, interval: Option<Interval>) -> Self {
        WithInterval {
            value: format_ns(ns as f64),
            interval: interval.map(|i| Span {
                lo: format_ns(i.lo_ns),
                hi: format_ns(i.hi_ns),
            }),
            say_missing: true,
        }
    }
}

/// The ORM's cost at p50 and whether it is a real difference.
pub(super) struct OrmCost {
    pub sign: &'static str,
    pub value: String,
    pub judged: &'static str,
}

pub(super) struct MeasurementRow {
    pub engine: &'static str,
    pub size: String,
    pub mean: String,
    pub p50: WithInterval,
    pub p90: WithInterval,
    pub p99: WithInterval,
    pub p999: String,
    pub max: String,
    pub hit_ratio: Marked,
    pub disk_per_fetch: Marked,
    pub vs_floor: Marked,
    pub disk_probe: String,
    pub orm_cost: Option<OrmCost>,
    pub fetches: String,
}

impl MeasurementRow {
    fn of(r: &SummaryRow) -> Self {
        MeasurementRow {
            engine: r.engine.name(),
            size: r.size.clone(),
            mean: format_ns(r.mean_ns),
            p50: WithInterval::of(r.p50_ns, r.p50_interval),
            p90: WithInterval::of(r.p90_ns, r.p90_interval),
            p99: WithInterval::of(r.p99_ns, r.p99_interval),
            p999: format_ns(r.p999_ns as f64),
            max: format_ns(r.max_ns as f64),
            hit_ratio: or_unavailable(r.hit_ratio.map(|h| format!("{:.1}%", h * 100.0))),
            disk_per_fetch: or_unavailable(r.disk_bytes_per_fetch.map(|d| format_bytes(d as u64))),
            vs_floor: match (
                r.floor_p50_ratio,
                r.floor_p99_ratio,
                r.floor_from_another_part,
            ) {
                (Some(a), Some(b), None) => Marked::Plain(format!("{a:.2}x / {b:.2}x")),
                (Some(a), Some(b), Some(parts)) => {
                    Marked::Muted(format!("{a:.2}x / {b:.2}x, {}", another_part_label(parts)))
                }
                _ => Marked::Muted("no floor".into()),
            },
            disk_probe: r.disk_probe.clone(),
            orm_cost: r.orm_cost_ns.map(|d| OrmCost {
                sign: if d < 0.0 { "−" } else { "+" },
                value: format_ns(d.abs()),
                judged: match r.orm_cost_real {
                    Some(true) => "pooled over repeats, intervals apart: real",
                    Some(false) => "pooled intervals overlap: not a difference",
                    None => "cannot judge: needs --repeat 3 of ≥1 s each",
                },
            }),
            fetches: match r.criterion_samples {
                Some(s) => format!("{} ({} criterion samples)", r.fetches, s),
                None => r.fetches.to_string(),
            },
        }
    }
}

/// The measurement table of some rows.
#[derive(Template)]
#[template(path = "report/measurements.html")]
pub(super) struct Measurements {
    pub rows: Vec<MeasurementRow>,
}

impl Measurements {
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a SummaryRow>) -> Self {
        Measurements {
            rows: rows.into_iter().map(MeasurementRow::of).collect(),
        }
    }
}

pub(super) struct Figure {
    pub stem: String,
    pub caption: String,
}

/// Every chart of one section, in the order they were listed.
#[derive(Template)]
#[template(path = "report/figures.html")]
pub(super) struct Figures {
    pub figures: Vec<Figure>,
}

impl Figures {
    pub fn of(charts: &[AnyChart], section: Section) -> Self {
        Figures {
            figures: charts
                .iter()
                .filter(|c| c.section() == section)
                .map(|c| Figure {
                    stem: c.file_stem(),
                    caption: c.caption(),
                })
                .collect(),
        }
    }
}
