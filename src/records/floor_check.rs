//! Whether any engine beat the floor beyond noise: its p50 interval wholly below
//! the floor's in the same round (same size, cache state and repeat). The floor is
//! meant to be the fastest read of S bytes this disk serves (`engine::floor`), so
//! where an engine beats it the run says so, with what the results can tell about
//! why, instead of printing a "÷ floor" below 1 as if it were a finding.

use crate::db::registry::EngineKind;
use crate::records::results::{EngineResult, RunResults};
use crate::stats::Interval;

/// Hit ratios further apart than this explain a difference by the cache.
const HIT_RATIO_GAP: f64 = 0.05;
/// Without intervals, a p50 below this share of the floor's is called beating it.
const POINT_RATIO: f64 = 0.8;

/// One result whose p50 was below its round's floor beyond noise, with the figures
/// and the first explanation the results support. The words are the report's
/// (`report::words::floor`): here only what was measured.
#[derive(Debug, Clone, PartialEq)]
pub struct BeatFloor {
    /// "sqlite-blobio 4MiB cold": whose result.
    pub who: String,
    pub p50_ns: f64,
    pub interval: Option<Interval>,
    pub floor_p50_ns: f64,
    pub floor_interval: Option<Interval>,
    pub why: Why,
}

/// Why an engine could read faster than the floor, the first the results support.
#[derive(Debug, Clone, PartialEq)]
pub enum Why {
    /// It keeps the blobs compressed: `kept` of the bytes the floor reads from (its
    /// stored bytes ÷ the floor's file), so its reads fetch fewer bytes than the floor's
    /// uncompressed ones. Not a fault: what compression buys on documents.
    Compressed { kept: f64 },
    /// A continued run measured it and its floor in different parts (0-based), hours
    /// apart; the command measures both again in one run.
    OtherPart {
        part: u32,
        started: String,
        floor_part: u32,
        floor_started: String,
        command: String,
    },
    /// It kept more of its dataset cached: its hit ratio against the floor's.
    MoreHits { hits: f64, floor_hits: f64 },
    /// The disk's probes before and after a cell differ (`DiskProbes::changed`).
    DiskMoved { change: String, who: String },
    /// At equal fill (the same number of fetches from a cold start) it did not beat the
    /// floor; its cell ran longer and filled its cache further.
    FullerCache(EqualFill),
    /// Its own files read `ratio` times faster than the floor's file just after its
    /// cell (`probe`: the figures): the floor's file was slow then.
    OwnFilesFaster { ratio: f64, probe: String },
    /// The floor read with one pattern, pinned and not timed against the others.
    PatternPinned { pattern: String, measured: String },
    /// This disk serves the engine's reads faster than any pattern the floor timed.
    FasterReads {
        disk_per_fetch: Option<f64>,
        pattern: String,
        measured: Option<String>,
        own_files: OwnFiles,
    },
}

/// The engine's first fetches from its cold start against the floor's, at equal fill.
#[derive(Debug, Clone, PartialEq)]
pub struct EqualFill {
    pub fetches: u64,
    pub floor_fetches: u64,
    pub p50_ns: f64,
    pub floor_p50_ns: f64,
    pub cell_fetches: u64,
    pub floor_cell_fetches: u64,
    pub hit_ratio: Option<f64>,
    pub floor_hit_ratio: Option<f64>,
}

/// How the engine's own files read against the floor's, probed after its cell.
#[derive(Debug, Clone, PartialEq)]
pub enum OwnFiles {
    Slower(String),
    Alike(String),
    /// Not probed, and why.
    Unknown(String),
    NotProbed,
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
) -> Option<EqualFill> {
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
    judged.then_some(EqualFill {
        fetches: e.fetches,
        floor_fetches: f.fetches,
        p50_ns: e.p50_ns,
        floor_p50_ns: f.p50_ns,
        cell_fetches: e.cell_fetches,
        floor_cell_fetches: f.cell_fetches,
        hit_ratio: e.cell_hit_ratio,
        floor_hit_ratio: f.cell_hit_ratio,
    })
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
    Some(BeatFloor {
        who: format!("{} {} {}", r.engine, r.size, r.scenario.cache.name()),
        p50_ns: e50 as f64,
        interval: interval(e),
        floor_p50_ns: f50 as f64,
        floor_interval: interval(f),
        why: other_part(run, r, floor).unwrap_or_else(|| why(r, floor, fills)),
    })
}

/// Where a continued run measured `r` and its floor in different parts: hours apart,
/// on a disk whose speed moves within the hour (a 64 KiB O_DIRECT p99 went from 0.5 to
/// 33 ms here within one), so the two figures are not of one disk. A full run's 1 KiB
/// cells measured again three hours after the floor's gave sqlite-raw 0.58 of the floor.
fn other_part(run: &RunResults, r: &EngineResult, floor: &EngineResult) -> Option<Why> {
    let (mine, floors) = crate::records::summary::floor_from_another_part(run, r)?;
    Some(Why::OtherPart {
        part: mine,
        started: r.started_at.to_string(),
        floor_part: floors,
        floor_started: floor.started_at.to_string(),
        command: format!(
            "blobrace measure --engines {},floor --sizes {} --cache {}",
            r.engine,
            r.size,
            r.scenario.cache.name()
        ),
    })
}

/// A store keeping its dataset in under this share of the floor's bytes compressed it
/// (InnoDB's and TOAST's pages keep random bytes in 1.0-1.2 of them).
const COMPRESSED_BELOW: f64 = 0.9;

/// The first explanation the results support: more cache hits, a disk that moved,
/// or reads this disk serves faster than any pattern the floor timed.
fn why(
    r: &EngineResult,
    floor: &EngineResult,
    fills: &[crate::records::cold_fill::EqualFillRound],
) -> Why {
    let (e, f) = (&r.measured, &floor.measured);
    if let (Some(own), Some(floors)) = (r.dataset.stored_bytes, floor.dataset.stored_bytes)
        && (own as f64) < floors as f64 * COMPRESSED_BELOW
    {
        return Why::Compressed {
            kept: own as f64 / floors.max(1) as f64,
        };
    }
    if let (Some(eh), Some(fh)) = (e.hit_ratio, f.hit_ratio)
        && eh > fh + HIT_RATIO_GAP
    {
        return Why::MoreHits {
            hits: eh,
            floor_hits: fh,
        };
    }
    for (who, x) in [(r.engine.name(), r), ("the floor", floor)] {
        if let Some(change) = x.disk_probes.as_ref().and_then(|p| p.changed()) {
            return Why::DiskMoved {
                change,
                who: who.to_string(),
            };
        }
    }
    if let Some(fill) = fuller_cache(r, floor, fills) {
        return Why::FullerCache(fill);
    }
    // Measured, not guessed: the engine's own files against the floor's file, read
    // the same way in the same minute.
    let own = r.disk_probes.as_ref().and_then(|p| p.own_against_floor());
    if let Some((ratio, probe)) = &own
        && *ratio > crate::disk::probe::OWN_FASTER_FACTOR
    {
        return Why::OwnFilesFaster {
            ratio: *ratio,
            probe: probe.clone(),
        };
    }
    let own_files = match (
        own,
        r.disk_probes.as_ref().and_then(|p| p.own_after.as_ref()),
    ) {
        (Some((ratio, line)), _) if ratio < 1.0 / crate::disk::probe::OWN_FASTER_FACTOR => {
            OwnFiles::Slower(line)
        }
        (Some((_, line)), _) => OwnFiles::Alike(line),
        (None, Some(Err(why))) => OwnFiles::Unknown(why.to_string()),
        _ => OwnFiles::NotProbed,
    };
    let pattern = floor
        .settings
        .get("read pattern")
        .cloned()
        .unwrap_or_else(|| "an unrecorded pattern".into());
    let measured = floor.settings.get("read patterns measured").cloned();
    if let Some(m) = measured.as_ref().filter(|m| m.starts_with("not measured")) {
        return Why::PatternPinned {
            pattern,
            measured: m.clone(),
        };
    }
    Why::FasterReads {
        disk_per_fetch: e.disk_bytes_per_fetch,
        pattern,
        measured,
        own_files,
    }
}
