//! The page of `blobrace variants` (how should I store my blobs?): the same engines
//! under different dataset layouts side by side (`variant_rows`), per engine and size,
//! each layout's p50 and p99, load MB/s and bytes on disk, and each as a ratio to the
//! engine's default layout; a `LayoutRatios` chart per size and cache state.
//!
//! A layout is a dataset of its own, so each is one run (`scripts/variants.sh` runs
//! them back to back); `blobrace variants RUN...` reads their results. The disk drifts
//! between runs, so each result also shows its p50 ÷ the floor of its own run where
//! that run measured the floor (the floor reads by offset: no layout changes it, and a
//! keyed run's floor reads the same file as any other's).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::charts::{Chart, LayoutRatios, render};
use super::page::{CSS, esc};
use super::variant_rows::{VariantRow, rows};
use crate::db::registry::EngineKind;
use crate::load::disk_label;
use crate::results::{RunResults, write_atomic};
use crate::size::format_bytes;
use crate::stats::format_ns;
use crate::steady::CacheState;

/// What `write` produced.
pub struct Written {
    pub index: PathBuf,
    pub rows: usize,
    pub charts: usize,
}

/// The variants page of `runs` in `dir`: index.html, variants.json, one chart per
/// size and cache state.
pub fn write(runs: &[RunResults], dir: &Path) -> Result<Written> {
    if runs.len() < 2 {
        bail!(
            "variants compares layouts measured in separate runs: give at least two run ids (one per layout; scripts/variants.sh runs them)"
        );
    }
    let rows = rows(runs);
    if rows.is_empty() {
        bail!(
            "none of these runs measured an engine with a layout choice (SQLite and the servers have them; fs and the floor do not)"
        );
    }
    std::fs::create_dir_all(dir)?;
    write_atomic(
        &dir.join("variants.json"),
        &serde_json::to_vec_pretty(&rows)?,
    )?;
    let mut charts = Vec::new();
    let groups: Vec<(u64, CacheState)> = {
        let mut g: Vec<_> = rows.iter().map(|r| (r.size_bytes, r.cache)).collect();
        g.sort();
        g.dedup();
        g
    };
    for (size, cache) in groups {
        let chart = LayoutRatios { size, cache };
        if chart.rows(&rows).is_empty() {
            continue;
        }
        render(&chart, &rows, dir)?;
        charts.push(chart);
    }
    let index = dir.join("index.html");
    write_atomic(&index, page(runs, &rows, &charts).as_bytes())?;
    Ok(Written {
        index,
        rows: rows.len(),
        charts: charts.len(),
    })
}

fn ratio_cell(ratio: Option<f64>) -> String {
    match ratio {
        Some(r) => format!("{r:.2}x"),
        None => "—".into(),
    }
}

fn page(runs: &[RunResults], rows: &[VariantRow], charts: &[LayoutRatios]) -> String {
    let mut p = format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>blobrace variants</title><style>{}</style></head><body>\n<h1>blobrace: how should I store my blobs?</h1>\n<p>The same engines under different dataset layouts, one run per layout. Each figure is also given as a ratio to the engine's <b>default</b> layout at the same size and cache state (below 1: faster, smaller; for load MB/s above 1 is faster). The disk drifts between runs: <b>÷ floor</b> is the p50 ÷ the floor's p50 in the same run, where that run measured the floor (a raw pread, which no layout changes), so a ratio that moved only with the disk shows there. Load MB/s is shown where the run loaded the dataset itself.</p>\n<h2>Runs</h2>\n<table><tr><th class=l>run</th><th class=l>layout</th><th class=l>engines</th><th class=l>data / cap</th></tr>\n",
        CSS
    );
    for run in runs {
        let mut engines: Vec<&str> = run.results.iter().map(|r| r.engine.name()).collect();
        engines.dedup();
        let regime = run
            .results
            .first()
            .map(|r| r.regime.label())
            .unwrap_or_default();
        let _ = writeln!(
            p,
            "<tr><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td></tr>",
            esc(&run.run_id),
            esc(&run.config.layout_label()),
            esc(&engines.join(", ")),
            esc(&regime)
        );
    }
    p.push_str("</table>\n");
    let mut engines: Vec<EngineKind> = rows.iter().map(|r| r.engine).collect();
    engines.sort();
    engines.dedup();
    for engine in engines {
        let _ = writeln!(
            p,
            "<h2>{}</h2>\n<table><tr><th class=l>size</th><th class=l>cache</th><th class=l>layout</th><th>p50</th><th>× default</th><th>p99</th><th>× default</th><th>÷ floor (p50)</th><th>load MB/s</th><th>× default</th><th>on disk</th><th>× default</th><th class=l>run</th></tr>",
            engine.name()
        );
        for r in rows.iter().filter(|r| r.engine == engine) {
            let _ = writeln!(
                p,
                "<tr><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=l>{}</td></tr>",
                format_bytes(r.size_bytes),
                r.cache.name(),
                esc(&r.layout),
                format_ns(r.p50_ns),
                ratio_cell(r.p50_ratio),
                format_ns(r.p99_ns),
                ratio_cell(r.p99_ratio),
                r.p50_vs_floor
                    .map(|f| format!("{f:.2}"))
                    .unwrap_or_else(|| "no floor in its run".into()),
                r.load_mb_per_s
                    .map(|m| format!("{m:.0}"))
                    .unwrap_or_else(|| "loaded before".into()),
                ratio_cell(r.load_ratio),
                disk_label(r.disk_bytes),
                ratio_cell(r.disk_ratio),
                esc(&r.run_id),
            );
        }
        p.push_str("</table>\n");
    }
    if !charts.is_empty() {
        p.push_str("<h2>Charts</h2>\n");
    }
    for chart in charts {
        let stem = chart.file_stem();
        let _ = writeln!(
            p,
            "<figure><img src=\"{stem}.svg\" alt=\"{stem}\" width=1000><figcaption>{} (<a href=\"{stem}.png\">PNG</a>)</figcaption></figure>",
            esc(&chart.caption())
        );
    }
    p.push_str("</body></html>\n");
    p
}
