//! The verdict of a size mix (`--size-mix`, `templates/report/mix.html`): a mix is one
//! dataset, so "the largest size meeting the target" means nothing; instead, per
//! engine, the whole mix's p99 against the target and the size bands that miss it, then
//! per band (a doubling of blob size, or one of a few sizes written by hand) each engine's p99, judged as a size class's is
//! (`judge`: on the band's own 95% interval), the band's share of the dataset's blobs,
//! and the fastest engine there with those it cannot be told from; then per band each
//! engine's hit ratio and disk bytes per fetch, which say why.

use askama::Template;

use crate::dataset::mix::{Band, BandShare};
use crate::db::registry::EngineKind;
use crate::records::results::{EngineResult, RunResults};
use crate::records::summary::floor_ratio;
use crate::report::data::{engines, mix_shares};
use crate::report::verdict::{SizeJudgement, judge};
use crate::size::format_bytes_approx;
use crate::stats::bands::BandSummary;
use crate::stats::{Summary, format_ns};

use super::markup::Marked;

/// A band written before bands had intervals, with fewer fetches than this, is not
/// judged (one fetch in a hundred above it is the p99: a hundred fetches are the least
/// that can say so). A band with intervals is judged by them.
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
    /// Per engine: the band's hit ratio and disk bytes per fetch.
    reads: Vec<Marked>,
}

#[derive(Template)]
#[template(path = "report/mix.html")]
pub(super) struct MixVerdict {
    target: String,
    mix: String,
    canonical: String,
    rows: Vec<MixRow>,
    /// The lowest p99 over the whole mix, with its ties.
    overall: String,
    engines: Vec<&'static str>,
    bands: Vec<BandRow>,
}

/// One engine's result on the page (its first repeat).
fn result_of(run: &RunResults, engine: EngineKind) -> Option<&EngineResult> {
    run.results.iter().find(|r| r.engine == engine)
}

/// A band's p99 against the target, as a size class's (`judge`).
fn band_judgement(b: &BandSummary, target_ns: u64) -> SizeJudgement {
    if b.intervals.is_none() && b.count < BAND_FETCHES_TO_JUDGE {
        return SizeJudgement::CannotJudge {
            why: format!("{} fetches", b.count),
        };
    }
    judge(&b.summary, target_ns)
}

fn band_of(r: &EngineResult, band: Band) -> Option<&BandSummary> {
    r.measured.bands.iter().find(|b| b.band() == band)
}

/// A band's p99, marked as it was judged; muted, with its count, where it cannot be.
fn band_p99(b: &BandSummary, judgement: &SizeJudgement) -> Marked {
    let p99 = format_ns(b.latency.p99_ns as f64);
    match judgement {
        SizeJudgement::Meets => Marked::Good(p99),
        SizeJudgement::Misses { .. } => Marked::Bad(p99),
        SizeJudgement::CannotJudge { .. } => Marked::Muted(format!("{p99} ({} fetches)", b.count)),
    }
}

/// A band's hit ratio and the bytes each fetch read from disk; "unavailable" where the
/// disk counter was (never a made-up 0).
fn band_reads(b: &BandSummary) -> Marked {
    match (b.hit_ratio, b.disk_bytes_per_fetch) {
        (Some(hits), Some(disk)) => Marked::Plain(format!(
            "{:.0}% hits, {} a fetch",
            100.0 * hits,
            format_bytes_approx(disk.round() as u64)
        )),
        _ => Marked::Muted("unavailable".into()),
    }
}

/// The engine with the lowest p99 among those judged (in a band, or over the whole
/// mix), and the engines whose p99 interval overlaps its own: which of them is
/// fastest, their fetches cannot say.
fn fastest_in(judged: &mut [(&Summary, &'static str)]) -> String {
    judged.sort_by_key(|(b, _)| b.latency.p99_ns);
    let Some(&(first, name)) = judged.first() else {
        return "none judged".into();
    };
    let p99 = |b: &Summary| b.intervals.as_ref().and_then(|i| i.p99);
    let tied: Vec<&str> = judged[1..]
        .iter()
        .filter(|(b, _)| p99(first).zip(p99(b)).is_some_and(|(x, y)| x.overlaps(&y)))
        .map(|(_, n)| *n)
        .collect();
    if judged.len() == 1 {
        format!("{name} (the only engine judged)")
    } else if tied.is_empty() {
        name.to_string()
    } else {
        format!(
            "{name} (tied with {}: 95% intervals overlap)",
            tied.join(", ")
        )
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
                    .filter(|b| {
                        matches!(band_judgement(b, target_ns), SizeJudgement::Misses { .. })
                    })
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
                let mut judged = Vec::new();
                let (cells, reads) = engines
                    .iter()
                    .map(|&engine| {
                        let Some(r) = result_of(run, engine) else {
                            let none = || Marked::Muted("not measured".into());
                            return (none(), none());
                        };
                        let Some(b) = band_of(r, band) else {
                            let none = || Marked::Muted("no fetch".into());
                            return (none(), none());
                        };
                        let judgement = band_judgement(b, target_ns);
                        if !matches!(judgement, SizeJudgement::CannotJudge { .. }) {
                            judged.push((&b.summary, engine.name()));
                        }
                        (band_p99(b, &judgement), band_reads(b))
                    })
                    .unzip();
                BandRow {
                    band: band.label(),
                    share: format!(
                        "{:.1}% of blobs, {:.1}% of bytes",
                        100.0 * blobs as f64 / rows_total,
                        100.0 * bytes as f64 / bytes_total
                    ),
                    cells,
                    fastest: fastest_in(&mut judged),
                    reads,
                }
            })
            .collect();
        let mut judged: Vec<(&Summary, &'static str)> = engines
            .iter()
            .filter_map(|&engine| Some((&result_of(run, engine)?.measured, engine.name())))
            .filter(|(m, _)| !matches!(judge(m, target_ns), SizeJudgement::CannotJudge { .. }))
            .collect();
        Some(MixVerdict {
            overall: fastest_in(&mut judged),
            target: format_ns(target_ns as f64),
            mix: mix.to_string(),
            canonical: mix.get().canonical(),
            rows,
            engines: engines.iter().map(|e| e.name()).collect(),
            bands,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Interval, Intervals};

    fn with_p99(p99_ns: u64, lo_ns: f64, hi_ns: f64) -> Summary {
        let mut s = Summary::default();
        s.latency.p99_ns = p99_ns;
        s.intervals = Some(Intervals {
            p99: Some(Interval { lo_ns, hi_ns }),
            ..Default::default()
        });
        s
    }

    /// The lowest p99 wins; an engine whose interval overlaps the winner's is named as
    /// tied with it, one whose interval does not is not; none judged says so.
    #[test]
    fn the_fastest_is_named_with_those_its_interval_cannot_tell_apart() {
        let (a, b, c) = (
            with_p99(1_000, 900.0, 1_100.0),
            with_p99(1_050, 1_000.0, 1_200.0),
            with_p99(5_000, 4_800.0, 5_200.0),
        );
        let mut judged = vec![(&c, "c"), (&b, "b"), (&a, "a")];
        assert_eq!(
            fastest_in(&mut judged),
            "a (tied with b: 95% intervals overlap)"
        );
        let mut apart = vec![(&c, "c"), (&a, "a")];
        assert_eq!(fastest_in(&mut apart), "a");
        let mut alone = vec![(&c, "c")];
        assert_eq!(fastest_in(&mut alone), "c (the only engine judged)");
        // Without intervals (results written before them) no tie can be told.
        let plain = Summary::default();
        let mut old = vec![(&b, "b"), (&plain, "old")];
        assert_eq!(fastest_in(&mut old), "old");
        assert_eq!(fastest_in(&mut []), "none judged");
    }
}
