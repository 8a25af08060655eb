//! Many clients at once: the closed- and open-loop loads, and the saturation search
//! (`templates/report/under_load.html`, `saturation.html`).

use askama::Template;

use crate::db::registry::EngineKind;
use crate::records::results::{LoadFacts, RunResults};
use crate::report::charts::{AnyChart, Section};
use crate::report::data::load_sizes;
use crate::size::format_bytes;
use crate::stats::format_ns;

use super::markup::{Figures, Marked, WithInterval};

/// The disk's own random reads at one queue depth.
pub(super) enum DiskDepth {
    /// Depth, reads/s, MB/s, p99, and the floor's share of it with as many clients.
    Measured(u32, String, String, String, Option<String>),
    Unavailable(u32, String),
}

/// The disk's own throughput at a size: what no engine reading uncached data passes.
pub(super) struct DiskLimit {
    block: String,
    depths: Vec<DiskDepth>,
}

pub(super) enum LoadNote {
    /// The in-flight limit, and after how many seconds it stopped the load.
    LimitReached(u32, String),
    /// Arrivals never started, of how many offered.
    Unserved(u64, u64),
}

pub(super) struct MeasuredLoad {
    engine: &'static str,
    load: String,
    fetches_per_s: String,
    mb_per_s: String,
    percentiles_of: &'static str,
    p50: String,
    p99: WithInterval,
    p999: String,
    service_p99: String,
    lag_p99: Marked,
    cpu: String,
    disk_per_fetch: String,
    notes: Vec<LoadNote>,
}

pub(super) enum LoadRow {
    Measured(Box<MeasuredLoad>),
    /// Engine, load, why no fetch was measured.
    NothingMeasured(&'static str, String, String),
    /// Engine, clients, why it was not run.
    NotRun(&'static str, u32, String),
}

pub(super) struct LoadSize {
    label: String,
    figures: Figures,
    disk: Option<DiskLimit>,
    rows: Vec<LoadRow>,
}

/// "Under load": per size, the throughput-latency chart and one row per load.
#[derive(Template)]
#[template(path = "report/under_load.html")]
pub(super) struct UnderLoad {
    sizes: Vec<LoadSize>,
}

impl UnderLoad {
    pub fn of(run: &RunResults, charts: &[AnyChart]) -> Option<Self> {
        if run.load_results.is_empty() && run.skipped_loads.is_empty() {
            return None;
        }
        let mut sizes = Vec::new();
        for size in load_sizes(run) {
            let mut rows: Vec<LoadRow> = run
                .load_results
                .iter()
                .filter(|l| l.result.size_bytes == size)
                .map(|l| {
                    let (r, f) = (&l.result, &l.load);
                    if r.measured.count == 0 {
                        return LoadRow::NothingMeasured(
                            r.engine.name(),
                            load_label(f),
                            f.no_fetch_why(),
                        );
                    }
                    let service = &r.measured.latency;
                    let head = f.headline(service);
                    let mut notes = Vec::new();
                    if f.limit_reached {
                        notes.push(LoadNote::LimitReached(
                            f.max_in_flight,
                            format!("{:.1}", f.measured_seconds),
                        ));
                    }
                    if f.unserved > 0 {
                        notes.push(LoadNote::Unserved(f.unserved, f.offered.unwrap_or(0)));
                    }
                    // An open loop's p99 is a response time: its interval is of the
                    // service time, so it is not shown.
                    let p99_interval = match f.response {
                        Some(_) => None,
                        None => r.measured.intervals.as_ref().and_then(|i| i.p99),
                    };
                    let p99 = WithInterval {
                        say_missing: false,
                        ..WithInterval::of(head.p99_ns, p99_interval)
                    };
                    LoadRow::Measured(Box::new(MeasuredLoad {
                        engine: r.engine.name(),
                        load: load_label(f),
                        fetches_per_s: format!("{:.0}", f.fetches_per_s),
                        mb_per_s: format!("{:.1}", f.mb_per_s),
                        percentiles_of: f.headline_word(),
                        p50: format_ns(head.p50_ns as f64),
                        p99,
                        p999: format_ns(head.p999_ns as f64),
                        service_p99: format_ns(service.p99_ns as f64),
                        lag_p99: match f.lag {
                            Some(lag) => Marked::Plain(format_ns(lag.p99_ns as f64)),
                            None => Marked::Muted("closed loop".into()),
                        },
                        cpu: format!("{:.0}% of {}", f.cpu.share() * 100.0, f.cpu.cpus),
                        disk_per_fetch: r.measured.disk_per_fetch_label(),
                        notes,
                    }))
                })
                .collect();
            rows.extend(
                run.skipped_loads
                    .iter()
                    .filter(|s| s.size_bytes == size)
                    .map(|s| LoadRow::NotRun(s.engine.name(), s.point.clients, s.why.clone())),
            );
            if rows.is_empty() {
                continue;
            }
            sizes.push(LoadSize {
                label: format_bytes(size),
                figures: Figures::of(charts, Section::Load(size)),
                disk: disk_limit(run, size),
                rows,
            });
        }
        Some(UnderLoad { sizes })
    }
}

/// The disk's own throughput at a size, per client count, and what share of it the
/// floor reached with as many clients (closed loop): how close the floor is to the disk.
fn disk_limit(run: &RunResults, size: u64) -> Option<DiskLimit> {
    let floor = EngineKind::floor();
    let depths: Vec<DiskDepth> = run
        .disk_limits
        .iter()
        .filter(|d| d.size_bytes == size)
        .map(|d| match &d.throughput {
            Ok(t) => {
                let floor_share = run
                    .load_results
                    .iter()
                    .find(|l| {
                        l.result.engine == floor
                            && l.result.size_bytes == size
                            && l.load.point.clients == d.queue_depth
                            && l.load.point.rate.is_none()
                    })
                    .map(|l| format!("{:.0}%", 100.0 * l.load.fetches_per_s / t.reads_per_s));
                DiskDepth::Measured(
                    d.queue_depth,
                    format!("{:.0}", t.reads_per_s),
                    format!("{:.1}", t.mb_per_s),
                    format_ns(t.p99_ns as f64),
                    floor_share,
                )
            }
            Err(why) => DiskDepth::Unavailable(d.queue_depth, why.clone()),
        })
        .collect();
    (!depths.is_empty()).then(|| DiskLimit {
        block: format_bytes(crate::disk::probe::block_for(size)),
        depths,
    })
}

/// `16 clients, closed loop` / `16 clients, 500/s poisson`.
fn load_label(load: &LoadFacts) -> String {
    let clients = match load.point.clients {
        1 => "1 client".to_string(),
        n => format!("{n} clients"),
    };
    match load.point.rate {
        None => format!("{clients}, closed loop"),
        Some(rate) => format!(
            "{clients}, {}/s {}",
            crate::stats::rate_label(rate),
            crate::serde_name(&load.point.arrivals)
        ),
    }
}

pub(super) struct SearchStep {
    met: bool,
    rate: String,
    achieved: String,
    p99: String,
    limit_reached: bool,
}

pub(super) struct SearchRow {
    engine: &'static str,
    size: String,
    clients: u32,
    arrivals: String,
    capacity: String,
    steps: Vec<SearchStep>,
    sustainable: String,
}

/// Every step of every saturation search.
#[derive(Template)]
#[template(path = "report/saturation.html")]
pub(super) struct Saturation {
    rows: Vec<SearchRow>,
}

impl Saturation {
    pub fn of(run: &RunResults) -> Option<Self> {
        if run.saturations.is_empty() {
            return None;
        }
        let rows = run
            .saturations
            .iter()
            .map(|s| SearchRow {
                engine: s.engine.name(),
                size: s.size.clone(),
                clients: s.clients,
                arrivals: crate::serde_name(&s.arrivals),
                capacity: format!("{:.0}", s.search.capacity),
                steps: s
                    .search
                    .steps
                    .iter()
                    .map(|step| SearchStep {
                        met: step.met,
                        rate: crate::stats::rate_label(step.rate),
                        achieved: format!("{:.0}", step.achieved),
                        p99: format_ns(step.response.p99_ns as f64),
                        limit_reached: step.limit_reached,
                    })
                    .collect(),
                sustainable: match s.search.sustainable {
                    Some(rate) => format!("{}/s", crate::stats::rate_label(rate)),
                    None => "none".into(),
                },
            })
            .collect();
        Some(Saturation { rows })
    }
}
