//! The verdict of a size mix (`--size-mix`, `templates/report/mix.html`): a mix is one
//! dataset, so "the largest size meeting the target" means nothing; instead, per
//! engine, the whole mix's p99 against the target and the size bands that miss it, then
//! per band (one doubling of blob size) each engine's p99, the band's share of the
//! dataset's blobs, and the fastest engine there.

use askama::Template;

use crate::db::registry::EngineKind;
use crate::mix::{Band, BandShare};
use crate::report::data::{SizeJudgement, engines, judge, mix_shares};
use crate::results::{EngineResult, RunResults};
use crate::stats::format_ns;
use crate::summary::floor_ratio;

use super::markup::Marked;

/// Fewer fetches than this in a band and its p99 is not judged (one fetch in a hundred
/// above it is the p99: a hundred fetches are the least that can say so).
const BAND_FETCHES_TO_JUDGE: u64 = 100;

pub(super) struct MixRow {
    engine: &'static str,
    p50: String,
    p99: Marked,
    /// The bands whose p99 misses the target, with it.
    missing_bands: Marked,
    p50_vs_floor: Marked,
}

pub(super) struct BandRow {
    band: String,
    /// The band's share of the dataset's blobs and of its bytes.
    share: String,
    cells: Vec<Marked>,
    fastest: String,
}

#[derive(Template)]
#[template(path = "report/mix.html")]
pub(super) struct MixVerdict {
    target: String,
    mix: String,
    canonical: String,
    rows: Vec<MixRow>,
    engines: Vec<&'static str>,
    bands: Vec<BandRow>,
}

/// One engine's result on the page (its first repeat).
fn result_of(run: &RunResults, engine: EngineKind) -> Option<&EngineResult> {
    run.results.iter().find(|r| r.engine == engine)
}

/// A band's p99, marked against the target; muted where the band had too few fetches.
fn band_p99(r: &EngineResult, band: Band, target_ns: u64) -> Marked {
    let Some(b) = r.measured.bands.iter().find(|b| b.band() == band) else {
        return Marked::Muted("no fetch".into());
    };
    let p99 = format_ns(b.latency.p99_ns as f64);
    if b.count < BAND_FETCHES_TO_JUDGE {
        Marked::Muted(format!("{p99} ({} fetches)", b.count))
    } else if b.latency.p99_ns <= target_ns {
        Marked::Good(p99)
    } else {
        Marked::Bad(p99)
    }
}

impl MixVerdict {
    pub fn of(run: &RunResults, target_ns: u64) -> Option<Self> {
        let mix = run.config.size_mix?;
        let engines = engines(run);
        let spec = run.config.datasets().into_iter().next()?;
        let shares = mix_shares(run)?;
        let (rows_total, bytes_total) = (spec.rows.max(1) as f64, spec.bytes().max(1) as f64);
        let rows = engines
            .iter()
            .filter_map(|&engine| {
                let r = result_of(run, engine)?;
                let p99 = match judge(&r.measured, target_ns) {
                    SizeJudgement::Meets => {
                        Marked::Good(format_ns(r.measured.latency.p99_ns as f64))
                    }
                    SizeJudgement::Misses { p99_ns } => Marked::Bad(format_ns(p99_ns as f64)),
                    SizeJudgement::CannotJudge { why } => {
                        Marked::Muted(format!("cannot judge: {why}"))
                    }
                };
                let missing: Vec<String> = r
                    .measured
                    .bands
                    .iter()
                    .filter(|b| b.count >= BAND_FETCHES_TO_JUDGE && b.latency.p99_ns > target_ns)
                    .map(|b| format!("{} (p99 {})", b.band, format_ns(b.latency.p99_ns as f64)))
                    .collect();
                let missing_bands = if missing.is_empty() {
                    Marked::Plain("none".into())
                } else {
                    Marked::Bad(missing.join(", "))
                };
                let p50_vs_floor = match floor_ratio(run, r) {
                    Some((p50, _)) => Marked::Plain(format!("{p50:.2}x")),
                    None => Marked::Muted("not measured".into()),
                };
                Some(MixRow {
                    engine: engine.name(),
                    p50: format_ns(r.measured.latency.p50_ns as f64),
                    p99,
                    missing_bands,
                    p50_vs_floor,
                })
            })
            .collect();
        let bands = shares
            .iter()
            .map(|&BandShare { band, blobs, bytes }| {
                let mut fastest: Option<(u64, &str)> = None;
                let cells = engines
                    .iter()
                    .map(|&engine| {
                        let Some(r) = result_of(run, engine) else {
                            return Marked::Muted("not measured".into());
                        };
                        if let Some(b) = r.measured.bands.iter().find(|b| b.band() == band)
                            && b.count >= BAND_FETCHES_TO_JUDGE
                            && fastest.is_none_or(|(p, _)| b.latency.p99_ns < p)
                        {
                            fastest = Some((b.latency.p99_ns, engine.name()));
                        }
                        band_p99(r, band, target_ns)
                    })
                    .collect();
                BandRow {
                    band: band.label(),
                    share: format!(
                        "{:.1}% of blobs, {:.1}% of bytes",
                        100.0 * blobs as f64 / rows_total,
                        100.0 * bytes as f64 / bytes_total
                    ),
                    cells,
                    fastest: fastest.map_or_else(
                        || format!("none with {BAND_FETCHES_TO_JUDGE} fetches"),
                        |(_, name)| name.to_string(),
                    ),
                }
            })
            .collect();
        Some(MixVerdict {
            target: format_ns(target_ns as f64),
            mix: mix.to_string(),
            canonical: mix.get().canonical(),
            rows,
            engines: engines.iter().map(|e| e.name()).collect(),
            bands,
        })
    }
}
