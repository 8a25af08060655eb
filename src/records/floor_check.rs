//! Whether any engine beat the floor beyond noise: its p50 interval wholly below
//! the floor's in the same round (same size, cache state and repeat). The floor is
//! meant to be the fastest read of S bytes this disk serves (`engine::floor`), so
//! where an engine beats it the run says so, with what the results can tell about
//! why, instead of printing a "÷ floor" below 1 as if it were a finding.

use crate::db::registry::EngineKind;
use crate::records::results::{EngineResult, RunResults};
use crate::records::summary::interval_label;
use crate::stats::format_ns;

/// Hit ratios further apart than this explain a difference by the cache.
const HIT_RATIO_GAP: f64 = 0.05;
/// Without intervals, a p50 below this share of the floor's is called beating it.
const POINT_RATIO: f64 = 0.8;

#[derive(Debug, Clone, PartialEq)]
pub struct BeatFloor {
    /// "sqlite-blobio 4MiB cold": whose result.
    pub who: String,
    /// "p50 2.41ms (2.35ms–2.47ms) against the floor's 3.98ms (3.90ms–4.05ms)".
    pub by: String,
    /// What the results say about why.
    pub why: String,
}

impl BeatFloor {
    pub fn line(&self) -> String {
        format!("{} beat the floor: {}; {}", self.who, self.by, self.why)
    }
}

/// Every result that beat its round's floor beyond noise, in the run's order.
pub fn beating_the_floor(run: &RunResults) -> Vec<BeatFloor> {
    let floor = EngineKind::floor();
    let fills = crate::records::cold_fill::rounds(run);
    run.results
        .iter()
        .filter(|r| r.engine != floor)
        .filter_map(|r| Some((r, run.twin(r, floor)?)))
        .filter_map(|(r, f)| judge(run, r, f, &fills))
        .collect()
}

/// Where a cold engine beat the floor only over a longer cell (more fetches, its cache
/// filled further): at equal fill (`cold_fill`) its p50 is not below the floor's.
/// The line saying so, with the figures.
fn fuller_cache(
    r: &EngineResult,
    floor: &EngineResult,
    fills: &[crate::records::cold_fill::EqualFillRound],
) -> Option<String> {
    let round = fills.iter().find(|f| {
        r.scenario.cache == crate::workload::steady::CacheState::Cold
            && f.size_bytes == r.size_bytes
            && f.repeat == r.scenario.repeat
    })?;
    let of = |name: &str| round.rows.iter().find(|row| row.engine == name);
    let (e, f) = (of(r.engine.name())?, of(floor.engine.name())?);
    // Over a few hundred fetches the one-time costs of a cold start weigh too much to
    // say anything; and only a longer cell fills its cache further.
    let judged = round.fetches >= crate::records::cold_fill::P99_FETCHES
        && e.cell_fetches > f.cell_fetches
        && e.p50_ns >= f.p50_ns;
    judged.then(|| {
        format!(
            "over its first {} fetches from its cold start against the floor's first {} (equal fill, the same ids) its p50 is {} against the floor's {}: on the same number of fetches it did not beat the floor. Its cell ran {} fetches against the floor's {} (hit ratio {} against {}): its figure is of a cache filled by more fetches",
            e.fetches,
            f.fetches,
            format_ns(e.p50_ns),
            format_ns(f.p50_ns),
            e.cell_fetches,
            f.cell_fetches,
            ratio_label(e.cell_hit_ratio),
            ratio_label(f.cell_hit_ratio),
        )
    })
}

fn ratio_label(r: Option<f64>) -> String {
    r.map(|r| format!("{:.1}%", r * 100.0))
        .unwrap_or_else(|| "unavailable".into())
}

fn judge(
    run: &RunResults,
    r: &EngineResult,
    floor: &EngineResult,
    fills: &[crate::records::cold_fill::EqualFillRound],
) -> Option<BeatFloor> {
    let (e, f) = (&r.measured, &floor.measured);
    let interval = |s: &crate::stats::Summary| s.intervals.as_ref().and_then(|i| i.p50);
    let (e50, f50) = (e.latency.p50_ns, f.latency.p50_ns);
    let beaten = match (interval(e), interval(f)) {
        (Some(a), Some(b)) => a.hi_ns < b.lo_ns,
        _ => (e50 as f64) < POINT_RATIO * f50 as f64,
    };
    if !beaten {
        return None;
    }
    let by = format!(
        "p50 {} ({}) against the floor's {} ({})",
        format_ns(e50 as f64),
        interval_label(interval(e)),
        format_ns(f50 as f64),
        interval_label(interval(f))
    );
    Some(BeatFloor {
        who: format!("{} {} {}", r.engine, r.size, r.scenario.cache.name()),
        by,
        why: other_part(run, r, floor).unwrap_or_else(|| why(r, floor, fills)),
    })
}

/// Where a continued run measured `r` and its floor in different parts: hours apart,
/// on a disk whose speed moves within the hour (a 64 KiB O_DIRECT p99 went from 0.5 to
/// 33 ms here within one), so the two figures are not of one disk. A full run's 1 KiB
/// cells measured again three hours after the floor's gave sqlite-raw 0.58 of the floor.
fn other_part(run: &RunResults, r: &EngineResult, floor: &EngineResult) -> Option<String> {
    let (mine, floors) = crate::records::summary::floor_from_another_part(run, r)?;
    Some(format!(
        "it was measured by part {} of this run (from {}), the floor by part {} (from {}): not on the disk of the same hour, and this comparison says nothing until both are measured in one run (`blobrace measure --engines {},floor --sizes {} --cache {}`)",
        mine + 1,
        r.started_at,
        floors + 1,
        floor.started_at,
        r.engine,
        r.size,
        r.scenario.cache.name()
    ))
}

/// The first explanation the results support: more cache hits, a disk that moved,
/// or reads this disk serves faster than any pattern the floor timed.
fn why(
    r: &EngineResult,
    floor: &EngineResult,
    fills: &[crate::records::cold_fill::EqualFillRound],
) -> String {
    let (e, f) = (&r.measured, &floor.measured);
    if let (Some(eh), Some(fh)) = (e.hit_ratio, f.hit_ratio)
        && eh > fh + HIT_RATIO_GAP
    {
        return format!(
            "{:.0}% of its fetches were page-cache hits against the floor's {:.0}%: it kept more of its dataset cached",
            eh * 100.0,
            fh * 100.0
        );
    }
    for (who, x) in [(r.engine.name(), r), ("the floor", floor)] {
        if let Some(changed) = x.disk_probes.as_ref().and_then(|p| p.changed()) {
            return format!("{changed} of {who}: compare them again in a calmer minute");
        }
    }
    if let Some(line) = fuller_cache(r, floor, fills) {
        return line;
    }
    // Measured, not guessed: the engine's own files against the floor's file, read
    // the same way in the same minute.
    let own = r.disk_probes.as_ref().and_then(|p| p.own_against_floor());
    if let Some((ratio, line)) = &own
        && *ratio > crate::disk::probe::OWN_FASTER_FACTOR
    {
        return format!(
            "this disk served its dataset {ratio:.1}x faster than the floor's file ({line}): the floor's file was slower to read then, not its way of reading; compare them again with the floor measured on a disk that reads its file as fast (another order, a calmer minute, or files read before)"
        );
    }
    let same_disk = match (
        &own,
        r.disk_probes.as_ref().and_then(|p| p.own_after.as_ref()),
    ) {
        (Some((ratio, line)), _) if *ratio < 1.0 / crate::disk::probe::OWN_FASTER_FACTOR => {
            format!(" Its own files read slower than the floor's ({line}).")
        }
        (Some((_, line)), _) => format!(" Its own files read like the floor's ({line})."),
        (None, Some(Err(why))) => format!(
            " Whether this disk serves its files as fast as the floor's is unknown (its own files were not probed: {why})."
        ),
        _ => String::new(),
    };
    let pattern = floor
        .settings
        .get("read pattern")
        .map(String::as_str)
        .unwrap_or("an unrecorded pattern");
    let measured = floor.settings.get("read patterns measured");
    if let Some(m) = measured.filter(|m| m.starts_with("not measured")) {
        return format!(
            "the floor read with {pattern}, pinned and not timed ({m}): run it again without the pin so the floor takes the fastest way this disk reads"
        );
    }
    let measured = measured.map(|m| format!(" ({m})")).unwrap_or_default();
    format!(
        "its reads ({} from disk per fetch) were served faster than the floor's {pattern}, the fastest of the patterns it timed{measured}: this disk rewards a way of reading the floor does not try.{same_disk}",
        crate::stats::disk_per_fetch_label(e.disk_bytes_per_fetch)
    )
}
