//! The lines a run prints as it goes: the cap in force, each load, each result, each
//! step's progress.

use crate::cap::CapReport;
use crate::config::RunConfig;
use crate::records::results::{EngineResult, LoadFacts};
use crate::records::summary::{interval_label, unavailable_or};
use crate::size::format_bytes;
use crate::stats::{format_ns, hit_ratio_label, rate_label};

use super::progress::Progress;

/// One line for the cap in force and how it came about, then its notes.
pub fn print_cap(report: &CapReport) {
    say!(
        "cap: memory {}, cpu {} ({}, cgroup {} {})",
        report.memory_label(),
        report.cpu_label(),
        report.how(),
        report.cgroup_version,
        report.cgroup
    );
    for note in &report.notes {
        say!("cap: {note}");
    }
    if let Some(disk) = &report.disk {
        say!("cap: {}", disk.line());
        for note in &disk.notes {
            say!("cap: {note}");
        }
    }
    for done in &report.housekeeping {
        say!("cap: {done}");
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
    let round_trip = match &r.round_trip {
        Some(rt) => format!(
            " | round trip p50 {} p99 {}",
            format_ns(rt.p50_ns as f64),
            format_ns(rt.p99_ns as f64)
        ),
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
        crate::records::summary::SummaryRow::disk_probe_label(r),
        r.regime.label(),
    ) + &round_trip
        + &precision
}

/// A step's progress as the terminal says it.
pub(super) fn progress_line(event: &Progress<'_>) -> String {
    match event {
        Progress::Continuing(run) => super::resume::continued_line(run),
        Progress::Outlook(outlook) => outlook.lines().join("\n"),
        Progress::Cell(cell) => cell.line(),
        Progress::DiskPlan(lines) => lines.join("\n"),
        Progress::DataOnTmpfs => "warning: the data directory is on tmpfs: that is RAM, not disk, and the cap will not see it as page cache".into(),
        Progress::MetadataPressure { engine, size, why } => {
            format!("note: {} {size}: {why}", engine.name())
        }
        Progress::StartedCold {
            engine,
            size,
            seconds,
            how,
        } => format!(
            "{} {size}: server started cold in {seconds:.1} s ({how})",
            engine.name()
        ),
        Progress::Prefilled {
            engine,
            size,
            prefill,
        } => format!(
            "{} {size}: prefilled {} of {} in {:.1} s ({}); cache {} -> {}",
            engine.name(),
            format_bytes(prefill.bytes_read),
            prefill.reads,
            prefill.seconds,
            prefill.stopped,
            unavailable_or(prefill.cache_bytes_before.map(format_bytes)),
            unavailable_or(prefill.cache_bytes_after.map(format_bytes)),
        ),
        Progress::NoDiskCounter { engine, why } => format!(
            "note: {}: disk bytes per fetch and hit/miss are unavailable: {why}",
            engine.name()
        ),
        Progress::Settled {
            engine,
            size,
            report,
        } => format!(
            "{} {size}: settled after {} fetches in {:.1} s: {}; hit ratio {}, model {}{}",
            engine.name(),
            report.settle_fetches,
            report.settle_seconds,
            match report.converged {
                Some(true) if report.below_model().is_some() => {
                    "steady by its rounds, but FAR BELOW the model (a lower bound)"
                }
                Some(true) => "steady",
                Some(false) => "NOT steady (time limit)",
                None => "steadiness unknown (no disk counter)",
            },
            unavailable_or(
                report
                    .round_hit_ratios
                    .last()
                    .map(|r| format!("{:.1}%", r * 100.0))
            ),
            hit_ratio_label(report.model_hit_ratio),
            if report.fits_in_memory {
                " (the dataset fits in the cache: fits in memory)"
            } else {
                ""
            },
        ),
        Progress::NotLoaded { cell, size } => format!(
            "skipping {cell} at {size}: its dataset did not load (the error is above and in the results)"
        ),
        Progress::UnderLoad { cell, size, engine } => {
            format!("{cell} {size}: {} under load", engine.name())
        }
        Progress::ClosedLoop {
            engine,
            size,
            clients,
            fetches_per_s,
        } => format!(
            "{} {size} c{clients}: closed loop {fetches_per_s:.0} fetches/s",
            engine.name()
        ),
        Progress::Searching {
            engine,
            size,
            clients,
            capacity,
            steps,
            target,
        } => format!(
            "{} {size} c{clients}: searching below the closed loop's {capacity:.0} fetches/s ({steps} steps, p99 response <= {})",
            engine.name(),
            format_ns(target.as_nanos() as f64)
        ),
        Progress::SearchStep(step) => format!(
            "  {}/s offered: {:.0}/s done, p99 response {}{} -> {}",
            rate_label(step.rate),
            step.achieved,
            format_ns(step.response.p99_ns as f64),
            if step.limit_reached {
                " (in-flight limit reached)"
            } else {
                ""
            },
            if step.met { "meets" } else { "misses" }
        ),
        Progress::Dropped { location, why } => format!("dropped {} ({why})", location.display()),
        Progress::Wrote {
            engine,
            size,
            report,
        } => {
            let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format_ns(v * 1e6));
            format!(
                "{} {size} writer: {} changes in {:.1} s ({} of {}/s asked), each p50 {}, p99 {}, max {}; at most {} behind its schedule",
                engine.name(),
                report.writes,
                report.seconds,
                report
                    .rate_achieved()
                    .map_or("no change committed".to_string(), |r| format!("{r:.1}/s")),
                report.rate_asked,
                ms(report.p50_ms),
                ms(report.p99_ms),
                ms(report.max_ms),
                format_ns(report.most_behind_ms * 1e6),
            )
        }
    }
}
