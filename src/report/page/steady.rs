//! How the steady state was reached per engine and size, and how far repeats agree
//! (`templates/report/steady.html`, `repeats.html`).

use askama::Template;

use crate::records::results::{EngineResult, RunResults};
use crate::report::data::{engines, sizes};
use crate::size::format_bytes;
use crate::stats::format_ns;

use super::PageContext;
use super::markup::{Marked, WithInterval, or_unavailable};

pub(super) struct SteadyRow {
    engine: &'static str,
    size: String,
    prefill_read: String,
    prefill_seconds: String,
    prefill_stopped: String,
    settle_fetches: u64,
    settle_seconds: String,
    converged: Option<bool>,
    last_round: Marked,
    measured: Marked,
    model: Marked,
    fits_in_memory: bool,
    model_basis: String,
}

/// Steady results: how the cache was filled and settled, the hit ratio reached
/// against the model's (cache held ÷ dataset).
#[derive(Template)]
#[template(path = "report/steady.html")]
pub(super) struct Steady {
    rows: Vec<SteadyRow>,
}

impl Steady {
    pub fn of(run: &RunResults) -> Option<Self> {
        let steady: Vec<&EngineResult> =
            run.results.iter().filter(|r| r.steady.is_some()).collect();
        if steady.is_empty() {
            return None;
        }
        let pct = |v: Option<f64>| or_unavailable(v.map(|v| format!("{:.1}%", v * 100.0)));
        let mut rows = Vec::new();
        for size in sizes(run) {
            for r in steady.iter().filter(|r| r.size_bytes == size) {
                let st = r.steady.as_ref().expect("filtered");
                rows.push(SteadyRow {
                    engine: r.engine.name(),
                    size: r.size.clone(),
                    prefill_read: format_bytes(st.prefill.bytes_read),
                    prefill_seconds: format!("{:.1}", st.prefill.seconds),
                    prefill_stopped: st.prefill.stopped.clone(),
                    settle_fetches: st.settle_fetches,
                    settle_seconds: format!("{:.1}", st.settle_seconds),
                    converged: st.converged,
                    last_round: pct(st.round_hit_ratios.last().copied()),
                    measured: pct(r.measured.hit_ratio),
                    model: pct(st.model_hit_ratio),
                    fits_in_memory: st.fits_in_memory,
                    model_basis: st.model_basis.clone(),
                });
            }
        }
        Some(Steady { rows })
    }
}

/// One percentile over the repeats: each repeat's, their spread, and pooled.
pub(super) struct AcrossRepeats {
    each: String,
    spread: String,
    pooled: Option<WithInterval>,
}

pub(super) struct RepeatRow {
    engine: &'static str,
    size: String,
    p50: AcrossRepeats,
    p99: AcrossRepeats,
}

/// With `--repeat K`: each result's p50 and p99 in every repeat, and their spread
/// (largest ÷ smallest − 1), from the whole run, for this page's cache state.
#[derive(Template)]
#[template(path = "report/repeats.html")]
pub(super) struct Repeats {
    repeats: u32,
    rows: Vec<RepeatRow>,
}

impl Repeats {
    pub fn of(context: &PageContext) -> Option<Self> {
        let full = context.full;
        if full.repeats() < 2 {
            return None;
        }
        let view = full.view(context.cache);
        let mut rows = Vec::new();
        for size in sizes(&view) {
            for engine in engines(&view) {
                let all = full.repeats_of(engine, size, context.cache);
                if all.is_empty() {
                    continue;
                }
                let pooled = full.pooled(engine, size, context.cache);
                let across = |pick: fn(&crate::stats::Summary) -> u64, q: f64| {
                    let values: Vec<u64> = all.iter().map(|r| pick(r)).collect();
                    let (lo, hi) = (
                        values.iter().min().copied().unwrap_or(0),
                        values.iter().max().copied().unwrap_or(0),
                    );
                    AcrossRepeats {
                        each: values
                            .iter()
                            .map(|&v| format_ns(v as f64))
                            .collect::<Vec<_>>()
                            .join(" · "),
                        spread: if lo > 0 {
                            format!("{:.0}%", (hi as f64 / lo as f64 - 1.0) * 100.0)
                        } else {
                            "—".into()
                        },
                        pooled: pooled
                            .get(q)
                            .map(|ns| WithInterval::of(ns.round() as u64, pooled.intervals.get(q))),
                    }
                };
                rows.push(RepeatRow {
                    engine: engine.name(),
                    size: format_bytes(size),
                    p50: across(|m| m.latency.p50_ns, 0.5),
                    p99: across(|m| m.latency.p99_ns, 0.99),
                });
            }
        }
        Some(Repeats {
            repeats: full.repeats(),
            rows,
        })
    }
}
