//! The lines a run prints as it goes: the cap in force, each load, each result.

use anyhow::Result;

use crate::cap::{self, CapGuard, CapReport};
use crate::config::RunConfig;
use crate::error::InputError;
use crate::results::{EngineResult, LoadFacts};
use crate::stats::format_ns;
use crate::summary::interval_label;

/// Apply the cap and report it. Must run before any thread is spawned and before
/// any data is touched, so every page this process caches is charged to the cap.
/// A requested memory cap that cannot be had stops the run (exit code 2).
pub fn apply_cap(config: &RunConfig) -> Result<(CapReport, CapGuard)> {
    match cap::apply(config.cap) {
        Ok((report, guard)) => {
            print_cap(&report);
            Ok((report, guard))
        }
        Err(unavailable) => {
            print_cap(&unavailable.report);
            Err(InputError::from(unavailable).into())
        }
    }
}

/// One line for the cap in force and how it came about, then its notes.
pub fn print_cap(report: &CapReport) {
    eprintln!(
        "cap: memory {}, cpu {} ({}, cgroup {} {})",
        report.memory_label(),
        report.cpu_label(),
        report.how(),
        report.cgroup_version,
        report.cgroup
    );
    for note in &report.notes {
        eprintln!("cap: {note}");
    }
    for done in &report.housekeeping {
        eprintln!("cap: {done}");
    }
}

/// One load's line: throughput, the headline percentiles (which ones), CPU, disk.
pub(super) fn load_line(r: &EngineResult, load: &LoadFacts, config: &RunConfig) -> String {
    let service = &r.measured.latency;
    if r.measured.count == 0 {
        return format!(
            "{:<13} {:>7} {:>12}: no fetch measured: {}",
            r.scenario.label(r.engine, &config.cache, config.repeat),
            r.size,
            load.point.label(),
            load.no_fetch_why()
        );
    }
    let head = load.headline(service);
    format!(
        "{:<13} {:>7} {:>12}: {:.0} fetches/s ({:.1} MB/s), {} p50 {} p99 {} p99.9 {}{} | cpu {:.0}% of {} | disk/fetch {}",
        r.scenario.label(r.engine, &config.cache, config.repeat),
        r.size,
        load.point.label(),
        load.fetches_per_s,
        load.mb_per_s,
        load.headline_word(),
        format_ns(head.p50_ns as f64),
        format_ns(head.p99_ns as f64),
        format_ns(head.p999_ns as f64),
        if load.response.is_some() {
            format!(" (service p99 {})", format_ns(service.p99_ns as f64))
        } else {
            String::new()
        },
        load.cpu.share() * 100.0,
        load.cpu.cpus,
        r.measured.disk_per_fetch_label(),
    )
}

pub(super) fn one_line(r: &EngineResult, config: &RunConfig) -> String {
    let m = &r.measured;
    let precision = match &r.precision {
        Some(p) => format!(" | {}", p.label()),
        None => String::new(),
    };
    format!(
        "{:<13} {:>7}: n={} mean {} p50 {} ({}) p99 {} ({}) p99.9 {} | hit ratio {} | disk/fetch {} | disk probe {} | {}",
        r.scenario.label(r.engine, &config.cache, config.repeat),
        r.size,
        m.count,
        format_ns(m.latency.mean_ns),
        format_ns(m.latency.p50_ns as f64),
        interval_label(m.intervals.as_ref().and_then(|i| i.p50)),
        format_ns(m.latency.p99_ns as f64),
        interval_label(m.intervals.as_ref().and_then(|i| i.p99)),
        format_ns(m.latency.p999_ns as f64),
        m.hit_ratio_label(),
        m.disk_per_fetch_label(),
        crate::summary::SummaryRow::disk_probe_label(r),
        r.regime.label(),
    ) + &precision
}
