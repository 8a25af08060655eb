//! The table of a run: one `SummaryRow` per (engine, size), the one row model
//! behind every table the suite prints or writes: the terminal table at the end of
//! a run, `results.csv` (rewritten after every measurement), the report's HTML
//! tables and `summary.csv` / `summary.json`. Unknown values are None, shown as
//! "unavailable", never as 0.

use serde::Serialize;

use crate::db::registry::EngineKind;
use crate::records::results::{EngineResult, RunResults};
use crate::stats::{Interval, disk_per_fetch_label, format_ns, hit_ratio_label};

/// `1.31ms–1.42ms`, or "—" without an interval.
pub fn interval_label(interval: Option<Interval>) -> String {
    interval
        .map(|i| format!("{}–{}", format_ns(i.lo_ns), format_ns(i.hi_ns)))
        .unwrap_or_else(|| "—".into())
}

#[derive(Debug, Clone, Serialize)]
pub struct SummaryRow {
    pub run_id: String,
    pub engine: EngineKind,
    /// "cold" or "steady".
    pub cache: &'static str,
    /// Which repeat of the engine list (1-based).
    pub repeat: u32,
    /// The engine's name in its scenario (`Scenario::label`): the terminal's row name.
    #[serde(skip)]
    pub label: String,
    pub size: String,
    pub size_bytes: u64,
    pub rows: u64,
    pub fetches: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    pub hit_ratio: Option<f64>,
    pub hit_p50_ns: Option<u64>,
    pub miss_p50_ns: Option<u64>,
    pub miss_p99_ns: Option<u64>,
    pub disk_bytes_per_fetch: Option<f64>,
    /// SeaORM's p50 minus the raw driver's on the same table, for ORM engines.
    pub orm_cost_ns: Option<f64>,
    /// Whether that difference is real: the pooled p50 intervals over the repeats do
    /// not overlap (`orm_cost_real`). None: no ORM engine, or one repeat.
    pub orm_cost_real: Option<bool>,
    pub criterion_samples: Option<u64>,
    /// The cap the engine ran under: a size, "uncapped", or "unavailable" (not observable).
    pub memory_cap: String,
    pub cpu_cap: String,
    pub regime_ratio: f64,
    pub regime: String,
    /// 95% intervals of p50/p90/p99 (block bootstrap); None: too few fetches to judge.
    pub p50_interval: Option<Interval>,
    pub p90_interval: Option<Interval>,
    pub p99_interval: Option<Interval>,
    /// This engine / the floor at the same size in the same run (the same minutes of
    /// the same disk): p50 and p99.
    pub floor_p50_ratio: Option<f64>,
    pub floor_p99_ratio: Option<f64>,
    /// Where the floor was measured by another part of the run than this result:
    /// (this part, the floor's), 0-based (`floor_from_another_part`).
    #[serde(skip)]
    pub floor_from_another_part: Option<(u32, u32)>,
    /// The disk probe's p50 before → after the engine, or why there is none.
    pub disk_probe: String,
    /// Steady results: whether the hit ratio settled (None: cold, or not judged).
    pub steady_converged: Option<bool>,
    /// Steady results: the model's hit ratio (cache held ÷ dataset).
    pub model_hit_ratio: Option<f64>,
}

/// What SeaORM adds over the raw driver at one size: p50 difference in ns (may be
/// negative within noise). None for engines without a raw twin in the run.
pub fn orm_cost_ns(run: &RunResults, orm: &EngineResult) -> Option<f64> {
    let raw = run.twin(orm, orm.engine.raw_twin()?)?;
    Some(orm.measured.latency.p50_ns as f64 - raw.measured.latency.p50_ns as f64)
}

/// Whether the ORM engine's p50 differs from its raw twin's beyond chance. One
/// measurement's interval cannot say: it covers the noise within a measurement, not
/// between measurements (two back-to-back quick runs had disjoint p50 intervals for
/// more than half of the results, and "real" ORM costs of either sign). So it takes
/// repeats (`--repeat`): both engines' p50s pooled over their repeats, with intervals
/// that resample whole repeats (`stats::interval::pooled`), must not overlap. A run
/// asks this once per ORM engine, size and cache state, so each interval is at
/// 1 − 5%/m for m such questions (Bonferroni): "every repeat on the same side", the
/// rule before, called a difference real in 1 of 12 pairs per quick run, each time
/// a different pair, each time noise. None with fewer than two repeats of both.
pub fn orm_cost_real(run: &RunResults, orm: &EngineResult) -> Option<bool> {
    let raw_engine = orm.engine.raw_twin()?;
    let (size, cache) = (orm.size_bytes, orm.scenario.cache);
    let confidence = 1.0 - 0.05 / orm_questions(run).max(1) as f64;
    let orm_pooled = run.pooled_at(orm.engine, size, cache, confidence);
    let raw_pooled = run.pooled_at(raw_engine, size, cache, confidence);
    if orm_pooled.repeats < 2 || raw_pooled.repeats < 2 {
        return None;
    }
    let (a, b) = (orm_pooled.intervals.p50?, raw_pooled.intervals.p50?);
    Some(!a.overlaps(&b))
}

/// How many (ORM engine, size, cache state) in the run have a raw twin beside them:
/// the questions `orm_cost_real` answers at once.
fn orm_questions(run: &RunResults) -> usize {
    let mut asked: Vec<_> = run
        .results
        .iter()
        .filter(|r| {
            r.engine
                .raw_twin()
                .is_some_and(|raw| run.twin(r, raw).is_some())
        })
        .map(|r| (r.engine, r.size_bytes, r.scenario.cache))
        .collect();
    asked.sort();
    asked.dedup();
    asked.len()
}

impl SummaryRow {
    /// "p50 410.0µs → 1.20ms" (the floor's file before → after the engine), then
    /// "(own 380.0µs)" (its own files, just after), "off", or "unavailable".
    pub fn disk_probe_label(r: &EngineResult) -> String {
        match &r.disk_probes {
            None => "off".into(),
            Some(p) => {
                let label = |probe: &Result<crate::disk::probe::DiskProbe, String>| match probe {
                    Ok(p) => format_ns(p.p50_ns as f64),
                    Err(_) => "unavailable".into(),
                };
                let own = match &p.own_after {
                    Some(own) => format!(" (own {})", label(own)),
                    None => String::new(),
                };
                format!("p50 {} → {}{own}", label(&p.before), label(&p.after))
            }
        }
    }

    pub fn of(run: &RunResults, r: &EngineResult) -> Self {
        let m = &r.measured;
        let l = &m.latency;
        let cap = |label: fn(&crate::cap::CapReport) -> String| match &r.cap {
            Some(c) => label(c),
            None => "unavailable".to_string(),
        };
        Self {
            run_id: run.run_id.clone(),
            engine: r.engine,
            cache: r.scenario.cache.name(),
            repeat: r.scenario.repeat,
            label: r
                .scenario
                .label(r.engine, &run.config.cache, run.config.repeat),
            size: r.size.clone(),
            size_bytes: r.size_bytes,
            rows: r.dataset.rows,
            fetches: m.count,
            mean_ns: l.mean_ns,
            p50_ns: l.p50_ns,
            p90_ns: l.p90_ns,
            p99_ns: l.p99_ns,
            p999_ns: l.p999_ns,
            max_ns: l.max_ns,
            hit_ratio: m.hit_ratio,
            hit_p50_ns: m.hits.map(|h| h.p50_ns),
            miss_p50_ns: m.misses.map(|h| h.p50_ns),
            miss_p99_ns: m.misses.map(|h| h.p99_ns),
            disk_bytes_per_fetch: m.disk_bytes_per_fetch,
            orm_cost_ns: orm_cost_ns(run, r),
            orm_cost_real: orm_cost_real(run, r),
            criterion_samples: r.criterion_samples,
            memory_cap: cap(|c| c.memory_label()),
            cpu_cap: cap(|c| c.cpu_label()),
            regime_ratio: r.regime.ratio,
            regime: r.regime.verdict.to_string(),
            p50_interval: m.intervals.as_ref().and_then(|i| i.p50),
            p90_interval: m.intervals.as_ref().and_then(|i| i.p90),
            p99_interval: m.intervals.as_ref().and_then(|i| i.p99),
            floor_from_another_part: floor_from_another_part(run, r),
            floor_p50_ratio: floor_ratio(run, r).map(|f| f.0),
            floor_p99_ratio: floor_ratio(run, r).map(|f| f.1),
            disk_probe: Self::disk_probe_label(r),
            steady_converged: r.steady.as_ref().and_then(|s| s.converged),
            model_hit_ratio: r.steady.as_ref().and_then(|s| s.model_hit_ratio),
        }
    }
}

/// Where a continued run measured `e` and its floor by different parts (hours apart,
/// on a disk whose speed moves within the hour): (`e`'s part, the floor's), 0-based.
pub fn floor_from_another_part(run: &RunResults, e: &EngineResult) -> Option<(u32, u32)> {
    let f = run.twin(e, EngineKind::floor())?;
    let part = |x: &EngineResult| {
        crate::records::run_parts::part_that_measured(
            &run.done_cells,
            x.engine,
            x.size_bytes,
            (x.scenario.cache, x.scenario.repeat),
        )
    };
    let (mine, floors) = (part(e)?, part(f)?);
    (mine != floors).then_some((mine, floors))
}

/// Engine / floor at one size in the same round (scenario) of the run: (p50 ratio,
/// p99 ratio). None without both results.
pub fn floor_ratio(run: &RunResults, e: &EngineResult) -> Option<(f64, f64)> {
    let f = run.twin(e, EngineKind::floor())?;
    let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
    Some((
        ratio(e.measured.latency.p50_ns, f.measured.latency.p50_ns)?,
        ratio(e.measured.latency.p99_ns, f.measured.latency.p99_ns)?,
    ))
}

pub fn unavailable_or(value: Option<String>) -> String {
    value.unwrap_or_else(|| "unavailable".into())
}

/// Rows of a run, by size, then in the suite's engine order, then scenario.
pub fn rows(run: &RunResults) -> Vec<SummaryRow> {
    let mut rows: Vec<SummaryRow> = run.results.iter().map(|r| SummaryRow::of(run, r)).collect();
    rows.sort_by_key(|r| (r.size_bytes, r.engine, r.cache, r.repeat));
    rows
}

/// The rows as the plain table printed at the end of a run.
pub fn terminal_table(run: &RunResults) -> String {
    let rows = rows(run);
    // A mix's name is longer than a size class's.
    let w = rows.iter().map(|r| r.size.len()).max().unwrap_or(0).max(7);
    let mut out = format!(
        "\nrun {} — cap: memory {}, cpu {}, access {}{}\n{:<20} {:>w$} {:>8} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11}\n",
        run.run_id,
        run.cap.memory_label(),
        run.cap.cpu_label(),
        run.config.access,
        run.config
            .churn
            .map(|c| format!(", {c}"))
            .unwrap_or_default(),
        "engine",
        "size",
        "fetches",
        "mean",
        "p50",
        "p99",
        "p99.9",
        "hit",
        "disk/fetch"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<20} {:>w$} {:>8} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11}\n",
            r.label,
            r.size,
            r.fetches,
            format_ns(r.mean_ns),
            format_ns(r.p50_ns as f64),
            format_ns(r.p99_ns as f64),
            format_ns(r.p999_ns as f64),
            hit_ratio_label(r.hit_ratio),
            disk_per_fetch_label(r.disk_bytes_per_fetch),
        ));
    }
    out
}
