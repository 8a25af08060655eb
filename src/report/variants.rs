//! How should I store my blobs? The same engines measured under different dataset
//! layouts (`--key`, `--sqlite-page-size`, `--sqlite-mmap-size`, `--pg-storage`), side
//! by side: per engine and size, each layout's p50 and p99, load MB/s and bytes on
//! disk, and each as a ratio to the engine's default layout.
//!
//! A layout is a dataset of its own, so each is one run (`scripts/variants.sh` runs
//! them back to back); `blobrace variants RUN...` reads their results. The disk drifts
//! between runs, so each result also shows its p50 ÷ the floor of its own run where
//! that run measured the floor (the floor reads by offset: no layout changes it, and a
//! keyed run's floor reads the same file as any other's).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::Serialize;

use super::charts::{FONT, LABEL_SIZE, TITLE_SIZE, WIDTH, engine_color, plot_err, register_font};
use super::page::{CSS, esc};
use crate::db::registry::EngineKind;
use crate::db::registry::StoreKind;
use crate::load::{LoadOutcome, disk_label};
use crate::results::{RunResults, write_atomic};
use crate::size::format_bytes;
use crate::stats::format_ns;
use crate::steady::CacheState;

/// The layout of `store`'s datasets in `run`: the choices that differ from the
/// defaults and apply to that store ("key uuidv7", "page 16384"); empty: the default.
pub fn layout_of(run: &RunResults, store: StoreKind) -> Vec<String> {
    let config = &run.config;
    let mut parts = Vec::new();
    if store.has_keys() && config.key.is_binary() {
        parts.push(format!("key {}", config.key));
    }
    parts.extend(store.db().layout(&config.locations()));
    parts
}

/// One engine at one size and cache state under one layout.
#[derive(Debug, Clone, Serialize)]
pub struct VariantRow {
    pub engine: EngineKind,
    pub size_bytes: u64,
    pub cache: CacheState,
    /// "default", or the layout's choices joined: "key uuidv7, page 16384".
    pub layout: String,
    pub run_id: String,
    pub p50_ns: f64,
    pub p99_ns: f64,
    /// This ÷ the engine's default layout at the same size and cache state (None:
    /// no run measured the default).
    pub p50_ratio: Option<f64>,
    pub p99_ratio: Option<f64>,
    /// p50 ÷ the floor's p50 in the same run (None where that run had no floor).
    pub p50_vs_floor: Option<f64>,
    /// MB/s of the load, where this run loaded it (None: it was loaded before).
    pub load_mb_per_s: Option<f64>,
    pub load_ratio: Option<f64>,
    pub disk_bytes: Option<u64>,
    pub disk_ratio: Option<f64>,
}

impl VariantRow {
    fn is_default(&self) -> bool {
        self.layout == "default"
    }
}

/// Every (engine, size, cache, layout) of the runs with a layout choice for their
/// store (fs and the floor have none). The first run given wins where two measured
/// the same; rows come in engine, size, cache order, the default layout first.
pub fn rows(runs: &[RunResults]) -> Vec<VariantRow> {
    let mut by_key: BTreeMap<(EngineKind, u64, CacheState, bool, String), VariantRow> =
        BTreeMap::new();
    for run in runs {
        for r in run.results.iter().filter(|r| r.scenario.repeat == 1) {
            let store = r.engine.store();
            // Keys are a layout choice of every store that has them; fs and the
            // floor have neither keys nor layout choices.
            if !store.has_keys() {
                continue;
            }
            let parts = layout_of(run, store);
            let layout = if parts.is_empty() {
                "default".to_string()
            } else {
                parts.join(", ")
            };
            let load = run
                .loads
                .iter()
                .find(|l| l.store == store && l.size_bytes == r.size_bytes);
            let floor = run
                .results
                .iter()
                .find(|f| {
                    f.engine == EngineKind::floor()
                        && f.size_bytes == r.size_bytes
                        && f.scenario == r.scenario
                })
                .map(|f| f.measured.latency.p50_ns as f64);
            let p50 = r.measured.latency.p50_ns as f64;
            let key = (
                r.engine,
                r.size_bytes,
                r.scenario.cache,
                layout != "default",
                layout.clone(),
            );
            by_key.entry(key).or_insert(VariantRow {
                engine: r.engine,
                size_bytes: r.size_bytes,
                cache: r.scenario.cache,
                layout,
                run_id: run.run_id.clone(),
                p50_ns: p50,
                p99_ns: r.measured.latency.p99_ns as f64,
                p50_ratio: None,
                p99_ratio: None,
                p50_vs_floor: floor.filter(|f| *f > 0.0).map(|f| p50 / f),
                load_mb_per_s: load
                    .filter(|l| l.outcome != LoadOutcome::AlreadyLoaded)
                    .and_then(|l| l.mb_per_s),
                load_ratio: None,
                disk_bytes: load.and_then(|l| l.disk_bytes),
                disk_ratio: None,
            });
        }
    }
    let mut rows: Vec<VariantRow> = by_key.into_values().collect();
    let defaults: BTreeMap<(EngineKind, u64, CacheState), VariantRow> = rows
        .iter()
        .filter(|r| r.is_default())
        .map(|r| ((r.engine, r.size_bytes, r.cache), r.clone()))
        .collect();
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    for row in &mut rows {
        let Some(d) = defaults.get(&(row.engine, row.size_bytes, row.cache)) else {
            continue;
        };
        row.p50_ratio = ratio(Some(row.p50_ns), Some(d.p50_ns));
        row.p99_ratio = ratio(Some(row.p99_ns), Some(d.p99_ns));
        row.load_ratio = ratio(row.load_mb_per_s, d.load_mb_per_s);
        row.disk_ratio = ratio(
            row.disk_bytes.map(|b| b as f64),
            d.disk_bytes.map(|b| b as f64),
        );
    }
    rows
}

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
        let of_group: Vec<&VariantRow> = rows
            .iter()
            .filter(|r| r.size_bytes == size && r.cache == cache && !r.is_default())
            .filter(|r| r.p50_ratio.is_some())
            .collect();
        if of_group.is_empty() {
            continue;
        }
        let stem = format!("variants-{}-{}", format_bytes(size), cache.name());
        draw(&of_group, size, cache, &dir.join(format!("{stem}.svg")))?;
        charts.push(stem);
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

fn page(runs: &[RunResults], rows: &[VariantRow], charts: &[String]) -> String {
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
    for stem in charts {
        let _ = writeln!(
            p,
            "<figure><img src=\"{stem}.svg\" alt=\"{stem}\" width=1000><figcaption>{stem}: each layout's p50 (filled) and p99 (outlined) ÷ its engine's default layout, one colour per engine; the line at 1 is the default.</figcaption></figure>"
        );
    }
    p.push_str("</body></html>\n");
    p
}

/// A layout's name on the chart's axis: `uuidv7`, `page 16K`, `mmap 4GiB`.
fn short_layout(layout: &str) -> String {
    layout
        .replace("key ", "")
        .replace("page 16384", "page 16K")
        .replace("page 65536", "page 64K")
        .replace("storage ", "pg ")
}

/// Bars of p50 and p99 ÷ the default, one pair per (engine, layout), log scale.
fn draw(rows: &[&VariantRow], size: u64, cache: CacheState, svg: &Path) -> Result<()> {
    register_font()?;
    let area = SVGBackend::new(svg, (WIDTH, 520)).into_drawing_area();
    area.fill(&WHITE).map_err(plot_err)?;
    draw_on(rows, size, cache, &area)?;
    area.present().map_err(plot_err)?;
    Ok(())
}

fn draw_on<DB: DrawingBackend>(
    rows: &[&VariantRow],
    size: u64,
    cache: CacheState,
    area: &DrawingArea<DB, Shift>,
) -> Result<()> {
    let ratios: Vec<f64> = rows
        .iter()
        .flat_map(|r| [r.p50_ratio, r.p99_ratio])
        .flatten()
        .chain([1.0])
        .collect();
    let lo = ratios.iter().copied().fold(f64::MAX, f64::min) / 1.25;
    // Headroom above the tallest bar for the legend.
    let hi = ratios.iter().copied().fold(0.0, f64::max) * 2.2;
    let labels: Vec<String> = rows.iter().map(|r| short_layout(&r.layout)).collect();
    let n = rows.len();
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "{} {}: each layout ÷ its engine's default",
                format_bytes(size),
                cache.name()
            ),
            (FONT, TITLE_SIZE),
        )
        .margin(12)
        .x_label_area_size(90)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (lo..hi).log_scale())
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 0.01 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc("× default layout (p50 filled, p99 outlined)")
        .y_label_formatter(&|y| format!("{y:.2}x"))
        .label_style((FONT, LABEL_SIZE))
        .x_label_style(
            (FONT, LABEL_SIZE)
                .into_font()
                .transform(FontTransform::Rotate90),
        )
        .draw()
        .map_err(plot_err)?;
    chart
        .draw_series(LineSeries::new(
            [(-0.5, 1.0), (n as f64 - 0.5, 1.0)],
            BLACK.stroke_width(1),
        ))
        .map_err(plot_err)?;
    let mut named = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let x = i as f64;
        let color = engine_color(r.engine);
        let mut bars = Vec::new();
        if let Some(p50) = r.p50_ratio {
            bars.push(Rectangle::new([(x - 0.35, 1.0), (x, p50)], color.filled()));
        }
        if let Some(p99) = r.p99_ratio {
            bars.push(Rectangle::new(
                [(x, 1.0), (x + 0.35, p99)],
                color.stroke_width(2),
            ));
        }
        let series = chart.draw_series(bars).map_err(plot_err)?;
        if !named.contains(&r.engine) {
            named.push(r.engine);
            series.label(r.engine.name()).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
            });
        }
        if let Some(p50) = r.p50_ratio {
            chart
                .draw_series([Text::new(
                    format!("{p50:.2}x"),
                    (x - 0.33, p50.max(1.0) * 1.02),
                    (FONT, LABEL_SIZE - 2).into_font().color(&BLACK),
                )])
                .map_err(plot_err)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font((FONT, LABEL_SIZE))
        .draw()
        .map_err(plot_err)?;
    Ok(())
}
