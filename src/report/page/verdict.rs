//! The verdict per engine, and the sustainable rate (`templates/report/verdict.html`,
//! `sustainable.html`).

use askama::Template;

use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::records::summary::floor_ratio;
use crate::report::ReportOptions;
use crate::report::data::engines;
use crate::report::verdict::{SizeJudgement, verdict as engine_verdict};
use crate::size::format_bytes;
use crate::stats::format_ns;

use super::markup::Marked;

/// A size whose p99 interval spans the target.
pub(super) struct CloseCall {
    size: String,
    lo: String,
    hi: String,
}

pub(super) struct VerdictRow {
    engine: &'static str,
    /// For an engine that reads through a memory map: the readahead its page faults
    /// read by ("mmap, readahead 128 KiB").
    mmap: Option<String>,
    /// The largest size meeting the target.
    largest: Marked,
    /// Where the walk up the sizes stopped, and why.
    stops: Marked,
    close_calls: Vec<CloseCall>,
    p50_vs_floor: Marked,
    p99_vs_floor: String,
}

/// Per engine: the largest size meeting the target, and the floor ratios at 64KiB.
#[derive(Template)]
#[template(path = "report/verdict.html")]
pub(super) struct Verdict {
    target: String,
    rows: Vec<VerdictRow>,
    /// The network between the engines and their servers, where the run put one: the
    /// difference between a server and an embedded store it adds.
    network: Option<String>,
}

impl Verdict {
    pub fn of(run: &RunResults, options: &ReportOptions) -> Self {
        let target_ns = options.target_p99.as_nanos() as u64;
        let rows = engines(run)
            .into_iter()
            .map(|engine| {
                let v = engine_verdict(run, engine, target_ns);
                let largest = match (v.largest, &v.stopped) {
                    (Some(s), _) => Marked::Good(format_bytes(s)),
                    (None, Some((_, SizeJudgement::CannotJudge { .. }))) => {
                        Marked::Muted("cannot judge".into())
                    }
                    (None, _) => Marked::Bad("none".into()),
                };
                let stops = match &v.stopped {
                    None => Marked::Plain("every size measured meets it".into()),
                    Some((size, SizeJudgement::Misses { p99_ns })) => Marked::Bad(format!(
                        "misses at {}: p99 {}",
                        format_bytes(*size),
                        format_ns(*p99_ns as f64)
                    )),
                    Some((size, SizeJudgement::CannotJudge { why })) => {
                        Marked::Muted(format!("cannot judge {}: {why}", format_bytes(*size)))
                    }
                    Some((_, SizeJudgement::Meets)) => Marked::Plain(String::new()),
                };
                let close_calls = v
                    .close_calls
                    .iter()
                    .map(|(size, iv)| CloseCall {
                        size: format_bytes(*size),
                        lo: format_ns(iv.lo_ns),
                        hi: format_ns(iv.hi_ns),
                    })
                    .collect();
                let at_64k = run.result(engine, 64 << 10);
                let parts =
                    at_64k.and_then(|r| crate::records::summary::floor_from_another_part(run, r));
                let (p50_vs_floor, p99_vs_floor) =
                    match (at_64k.and_then(|r| floor_ratio(run, r)), parts) {
                        (Some((a, b)), None) => {
                            (Marked::Plain(format!("{a:.2}x")), format!("{b:.2}x"))
                        }
                        (Some((a, b)), Some(parts)) => (
                            Marked::Muted(format!(
                                "{a:.2}x ({})",
                                super::markup::another_part_label(parts)
                            )),
                            format!("{b:.2}x"),
                        ),
                        (None, _) => (Marked::Muted("not measured".into()), String::new()),
                    };
                VerdictRow {
                    engine: engine.name(),
                    mmap: mmap_label(run, engine),
                    largest,
                    stops,
                    close_calls,
                    p50_vs_floor,
                    p99_vs_floor,
                }
            })
            .collect();
        Verdict {
            target: format_ns(target_ns as f64),
            rows,
            network: run.network.as_ref().map(|n| n.label()),
        }
    }
}

/// "mmap, readahead 128 KiB" for an engine whose cold reads are page faults on a map
/// (`Database::reads_by_mmap`): its verdict holds for that readahead, not for the store.
fn mmap_label(run: &RunResults, engine: EngineKind) -> Option<String> {
    let at = run.config.locations();
    if !engine.store().db().reads_by_mmap(engine.name(), &at) {
        return None;
    }
    let kb = run
        .readahead
        .as_ref()
        .map_or(run.machine.data_read_ahead_kb, |r| r.data_kb());
    Some(match kb {
        Some(kb) => format!("mmap, readahead {kb} KiB"),
        None => "mmap, readahead unavailable".into(),
    })
}

/// One engine's sustainable rate at one size.
pub(super) enum Sustained {
    NotMeasured,
    /// Even the lowest rate tried missed the target.
    None,
    /// Fetches/s, MB/s, and ÷ the floor's where the floor was searched too.
    Rate(String, String, Option<String>),
}

pub(super) struct SustainableRow {
    engine: &'static str,
    clients: u32,
    cells: Vec<Sustained>,
}

/// The second verdict (`--mode saturate`): per engine and size, the highest rate
/// whose p99 response time met the target, beside the floor's.
#[derive(Template)]
#[template(path = "report/sustainable.html")]
pub(super) struct Sustainable {
    target: String,
    /// The rates as bars (`charts::SustainableRates`), above the table.
    figures: super::markup::Figures,
    sizes: Vec<String>,
    rows: Vec<SustainableRow>,
}

impl Sustainable {
    pub fn of(
        run: &RunResults,
        options: &ReportOptions,
        charts: &[crate::report::charts::AnyChart],
    ) -> Option<Self> {
        if run.saturations.is_empty() {
            return None;
        }
        let mut sizes: Vec<u64> = run.saturations.iter().map(|s| s.size_bytes).collect();
        sizes.sort();
        sizes.dedup();
        let mut keys: Vec<(EngineKind, u32)> = run
            .saturations
            .iter()
            .map(|s| (s.engine, s.clients))
            .collect();
        keys.sort();
        keys.dedup();
        let rows = keys
            .into_iter()
            .map(|(engine, clients)| {
                let cells = sizes
                    .iter()
                    .map(|&size| {
                        let find = |e| {
                            run.saturations.iter().find(|s| {
                                s.engine == e && s.clients == clients && s.size_bytes == size
                            })
                        };
                        match find(engine) {
                            None => Sustained::NotMeasured,
                            Some(s) => match (s.search.sustainable, s.sustainable_mb_per_s) {
                                (Some(rate), Some(mb)) => Sustained::Rate(
                                    crate::stats::rate_label(rate),
                                    format!("{mb:.1}"),
                                    find(EngineKind::floor())
                                        .filter(|f| f.engine != engine)
                                        .and_then(|f| f.search.sustainable)
                                        .map(|f| format!("{:.2}x", rate / f)),
                                ),
                                _ => Sustained::None,
                            },
                        }
                    })
                    .collect();
                SustainableRow {
                    engine: engine.name(),
                    clients,
                    cells,
                }
            })
            .collect();
        Some(Sustainable {
            target: format_ns(options.target_p99.as_nanos() as f64),
            figures: super::markup::Figures::of(
                charts,
                crate::report::charts::Section::Sustainable,
            ),
            sizes: sizes.into_iter().map(format_bytes).collect(),
            rows,
        })
    }
}
