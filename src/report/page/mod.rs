//! The HTML pages: a run's report (verdict first, then charts, tables and the
//! environment, one file per section), the variants page and the results
//! directory's entry points. Each section builds a typed model from the run (`of`, None
//! where the run has nothing for it) and renders it through its template in
//! `templates/report/`; `page.html` puts them in order. Self-contained: inline CSS
//! (`style.css`), charts as files beside it, no network. Charts land in the section
//! they declare (`Chart::section`).

mod baseline;
mod cold_fill;
mod environment;
mod first_bytes;
mod index;
mod load;
mod loading;
mod markup;
mod memory;
mod mix;
mod object_store;
mod profiles;
pub mod site;
mod steady;
mod stored;
mod variants;
mod verdict;
mod warnings;
mod writes;

use std::path::Path;

use askama::Template;

use crate::records::results::RunResults;
use crate::records::summary::rows;
use crate::report::ReportOptions;
use crate::report::charts::{AnyChart, Section};
use crate::report::compare::Comparison;
use crate::report::data::sizes;
use crate::size::format_bytes;
use crate::workload::steady::CacheState;

pub use index::{latest, reports};
use markup::{Figures, Measurements};
pub use variants::variants;

/// Where a page sits in its run: `page` draws one cache state's view of it.
pub struct PageContext<'a> {
    /// The whole run: every cache state and repeat.
    pub full: &'a RunResults,
    pub cache: CacheState,
    /// The cache state of the run directory's own page.
    pub primary: CacheState,
    /// From this page's directory to the run directory: "" or "../".
    pub to_run_dir: &'a str,
}

/// Another cache state's page of the same run.
struct OtherPage {
    href: String,
    cache: &'static str,
}

/// One size class: its charts and its rows of the measurement table.
struct SizeBlock {
    label: String,
    figures: Figures,
    table: Measurements,
}

#[derive(Template)]
#[template(path = "report/page.html")]
struct Page {
    run_id: String,
    started: String,
    finished: String,
    driver: String,
    /// The key type, where fetches go by a binary key.
    key: Option<String>,
    /// How each fetch's id is drawn (`--access`).
    access: String,
    /// What changed the datasets after their load (`--churn`), if anything.
    churn: Option<String>,
    /// The writer beside every measurement (`--write-rate`), if any.
    writer: Option<String>,
    /// "the datasets hold 3GiB per size class", or a mix's one dataset.
    datasets_hold: String,
    /// The disk the in-process stores were read from: the machine's own, or a disk cap.
    read_from: String,
    cache: CacheState,
    /// What was measured, in one line above the verdict (`measured_line`).
    measured: String,
    /// The yellow box's caveats and how many of them are severe, for that line.
    caveats: Option<(usize, usize)>,
    other_pages: Vec<OtherPage>,
    /// The verdict per engine across the size classes, or a size mix's (`mix.rs`).
    verdict: String,
    sustainable: Option<verdict::Sustainable>,
    warnings: Option<warnings::Warnings>,
    baseline: Option<baseline::AgainstBaseline>,
    headline: Figures,
    sizes: Vec<SizeBlock>,
    under_load: Option<load::UnderLoad>,
    saturation: Option<load::Saturation>,
    disk: Figures,
    loads: loading::Loads,
    steady: Option<steady::Steady>,
    cold_fill: Option<cold_fill::ColdFill>,
    first_bytes: Option<first_bytes::FirstBytes>,
    writes: Option<writes::Writes>,
    object_store: Option<object_store::ObjectStore>,
    profiles: Option<profiles::Profiles>,
    repeats: Option<steady::Repeats>,
    all: Measurements,
    to_run_dir: String,
    /// The run kept its lines (say.rs): the page links them.
    has_log: bool,
    environment: environment::Environment,
    memory: Option<memory::Memory>,
    stored: Option<stored::Stored>,
}

pub fn page(
    run: &RunResults,
    run_dir: &Path,
    charts: &[AnyChart],
    comparison: Option<&Comparison>,
    options: &ReportOptions,
    context: &PageContext,
) -> anyhow::Result<String> {
    let rows = rows(run);
    let other_pages = context
        .full
        .caches()
        .into_iter()
        .filter(|&c| c != context.cache)
        .map(|c| OtherPage {
            href: if c == context.primary {
                format!("{}index.html", context.to_run_dir)
            } else {
                format!("{}{}/index.html", context.to_run_dir, c.name())
            },
            cache: c.name(),
        })
        .collect();
    let warnings = warnings::Warnings::of(run);
    let page = Page {
        measured: measured_line(run, context.cache),
        caveats: warnings.as_ref().map(warnings::Warnings::counts),
        run_id: run.run_id.clone(),
        started: run.started_at.clone(),
        finished: run
            .finished_at
            .clone()
            .unwrap_or_else(|| "(unfinished)".into()),
        driver: run.driver.clone(),
        access: run.config.access.describe(),
        churn: run.config.churn.map(|c| {
            format!(
                "{}% of their rows changed ({}, seeded, in random order through each database's write path)",
                c.percent, c.kind
            )
        }),
        writer: run.config.write_rate.map(|rate| {
            if rate > 0.0 {
                format!("one writer replaced rows at {rate} a second while every measurement ran (see Reads while writing)")
            } else {
                "a dataset of its own that a writer may change (--write-rate), measured here without one".to_string()
            }
        }),
        key: run
            .config
            .key
            .is_binary()
            .then(|| run.config.key.to_string()),
        datasets_hold: match run.config.size_mix {
            Some(_) => format!(
                "the one dataset holds {} in blobs of the mix",
                format_bytes(run.config.dataset_bytes)
            ),
            None => format!(
                "the datasets hold {} per size class",
                format_bytes(run.config.dataset_bytes)
            ),
        },
        read_from: match &run.cap.disk {
            None => "this machine's own disk, uncapped".into(),
            Some(d) => {
                // Each server result records its container's disk cap, read back.
                let mut uncapped: Vec<&str> = run
                    .results
                    .iter()
                    .filter(|r| r.engine.store().is_server())
                    .filter(|r| {
                        r.cap
                            .as_ref()
                            .and_then(|c| c.disk.as_ref())
                            .is_none_or(|disk| disk.in_force.is_empty())
                    })
                    .map(|r| r.engine.name())
                    .collect();
                uncapped.dedup();
                if uncapped.is_empty() {
                    d.phrase()
                } else {
                    format!(
                        "{} (but the containers of {} read from this machine's own disk, uncapped: see each result's notes)",
                        d.phrase(),
                        uncapped.join(", ")
                    )
                }
            }
        },
        cache: context.cache,
        other_pages,
        verdict: match mix::MixVerdict::of(run, options.target_p99.as_nanos() as u64) {
            Some(mix) => mix.render()?,
            None => verdict::Verdict::of(run, options).render()?,
        },
        sustainable: verdict::Sustainable::of(run, options, charts),
        warnings,
        baseline: comparison.map(baseline::AgainstBaseline::of),
        headline: Figures::of(charts, Section::Headline),
        sizes: sizes(run)
            .into_iter()
            .map(|size| SizeBlock {
                // A size mix's one dataset is named by its mix, not its largest blob.
                label: run
                    .config
                    .size_mix
                    .map_or_else(|| format_bytes(size), |mix| mix.to_string()),
                figures: Figures::of(charts, Section::Size(size)),
                table: Measurements::of(rows.iter().filter(|r| r.size_bytes == size)),
            })
            .collect(),
        under_load: load::UnderLoad::of(run, charts),
        saturation: load::Saturation::of(run),
        disk: Figures::of(charts, Section::Disk),
        loads: loading::Loads::of(run),
        steady: steady::Steady::of(run),
        // Only on the cold page: a steady cell starts from a full cache.
        cold_fill: (context.cache == crate::workload::steady::CacheState::Cold)
            .then(|| cold_fill::ColdFill::of(run))
            .flatten(),
        first_bytes: first_bytes::FirstBytes::of(run),
        writes: writes::Writes::of(run),
        object_store: object_store::ObjectStore::of(run),
        profiles: profiles::Profiles::of(run, context),
        repeats: steady::Repeats::of(context),
        all: Measurements::of(&rows),
        to_run_dir: context.to_run_dir.to_string(),
        has_log: run_dir.join(crate::say::RUN_LOG).is_file(),
        environment: environment::Environment::of(run, run_dir),
        memory: memory::Memory::of(run),
        stored: stored::Stored::of(run),
    };
    Ok(page.render()?)
}

/// What a run measured, in one line: its sizes and data, its cap, its cache, its bytes
/// and where it ran. The reader's question is "for what?", before any verdict.
fn measured_line(run: &RunResults, cache: CacheState) -> String {
    let measured = sizes(run);
    let sized = match (run.config.size_mix, measured.first(), measured.last()) {
        (Some(mix), ..) => format!(
            "the size mix {mix}, {} in one dataset",
            format_bytes(run.config.dataset_bytes)
        ),
        (None, Some(a), Some(b)) if a == b => format!(
            "{} blobs, {} of them",
            format_bytes(*a),
            format_bytes(run.config.dataset_bytes)
        ),
        (None, Some(a), Some(b)) => format!(
            "{} sizes from {} to {}, {} of each",
            measured.len(),
            format_bytes(*a),
            format_bytes(*b),
            format_bytes(run.config.dataset_bytes)
        ),
        _ => "no size".to_string(),
    };
    let cap = match (run.cap.memory_limit_bytes, run.cap.cpu_limit) {
        (None, None) => "uncapped (no memory or CPU limit)".to_string(),
        (Some(b), Some(c)) => format!("under {} of memory and {c} CPUs", format_bytes(b)),
        (Some(b), None) => format!("under {} of memory, CPUs unlimited", format_bytes(b)),
        (None, Some(c)) => format!("memory uncapped, under {c} CPUs"),
    };
    let place = match &run.config.deployment {
        Some(d) => format!("as deployed on {}", d.name),
        None => "on this machine".to_string(),
    };
    // What deflate and zstd made of the blobs where the run measured it (every
    // dataset's the same content; the first sampled, said as measured).
    let deflate = run
        .compressibility
        .first()
        .map(|c| format!(", {}", c.label()))
        .unwrap_or_default();
    let bytes = match run.config.content {
        crate::dataset::documents::Content::Random => format!("random bytes{deflate}"),
        content => format!("{content} content{deflate}"),
    };
    format!(
        "{sized} · {cap} · {} cache · {bytes} · {place}",
        cache.name()
    )
}
