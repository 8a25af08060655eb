//! The page of `blobrace variants` (`templates/report/variants.html`): the runs
//! compared, then per engine each layout's figures and their ratios to the default
//! layout, then the `VariantLatencies` charts.

use askama::Template;

use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::charts::{Chart, VariantLatencies};
use crate::report::variant_rows::VariantRow;
use crate::size::{disk_label, format_bytes};
use crate::stats::format_ns;

use super::markup::{Figure, Figures};

pub(super) struct ComparedRun {
    id: String,
    layout: String,
    engines: String,
    regime: String,
}

pub(super) struct LayoutRow {
    size: String,
    cache: &'static str,
    clients: u32,
    layout: String,
    p50: String,
    p50_ratio: String,
    p99: String,
    p99_ratio: String,
    vs_floor: String,
    load: String,
    load_ratio: String,
    on_disk: String,
    on_disk_ratio: String,
    per_blob_byte: String,
    hit_ratio: String,
    disk_per_fetch: String,
    run_id: String,
}

pub(super) struct EngineLayouts {
    engine: &'static str,
    rows: Vec<LayoutRow>,
}

#[derive(Template)]
#[template(path = "report/variants.html")]
struct VariantsPage {
    runs: Vec<ComparedRun>,
    engines: Vec<EngineLayouts>,
    figures: Figures,
}

fn ratio_cell(ratio: Option<f64>) -> String {
    match ratio {
        Some(r) => format!("{r:.2}x"),
        None => "—".into(),
    }
}

impl LayoutRow {
    fn of(r: &VariantRow) -> Self {
        LayoutRow {
            size: format_bytes(r.size_bytes),
            cache: r.cache.name(),
            clients: r.clients,
            layout: r.layout.clone(),
            p50: format_ns(r.p50_ns),
            p50_ratio: ratio_cell(r.p50_ratio),
            p99: format_ns(r.p99_ns),
            p99_ratio: ratio_cell(r.p99_ratio),
            vs_floor: r
                .p50_vs_floor
                .map(|f| format!("{f:.2}"))
                .unwrap_or_else(|| "no floor in its run".into()),
            load: r
                .load_mb_per_s
                .map(|m| format!("{m:.0}"))
                .unwrap_or_else(|| "loaded before".into()),
            load_ratio: ratio_cell(r.load_ratio),
            on_disk: disk_label(r.disk_bytes),
            on_disk_ratio: ratio_cell(r.disk_ratio),
            per_blob_byte: r
                .per_blob_byte
                .map(|x| format!("{x:.2}"))
                .unwrap_or_else(|| "unavailable".into()),
            hit_ratio: r
                .hit_ratio
                .map(|h| format!("{:.1}%", h * 100.0))
                .unwrap_or_else(|| "unavailable".into()),
            disk_per_fetch: crate::stats::disk_per_fetch_label(r.disk_per_fetch),
            run_id: r.run_id.clone(),
        }
    }
}

/// The variants page of `runs`: their compared `rows` and the charts drawn of them.
pub fn variants(
    runs: &[RunResults],
    rows: &[VariantRow],
    charts: &[VariantLatencies],
) -> anyhow::Result<String> {
    let runs = runs
        .iter()
        .map(|run| {
            // One client's results, or a run of more clients only: its loads'.
            let measured = || {
                run.results
                    .iter()
                    .chain(run.load_results.iter().map(|l| &l.result))
            };
            let mut engines: Vec<&str> = measured().map(|r| r.engine.name()).collect();
            engines.dedup();
            ComparedRun {
                id: run.run_id.clone(),
                layout: run.config.layout_label(),
                engines: engines.join(", "),
                regime: measured()
                    .next()
                    .map(|r| r.regime.label())
                    .unwrap_or_default(),
            }
        })
        .collect();
    let mut engines: Vec<EngineKind> = rows.iter().map(|r| r.engine).collect();
    engines.sort();
    engines.dedup();
    let page = VariantsPage {
        runs,
        engines: engines
            .into_iter()
            .map(|engine| EngineLayouts {
                engine: engine.name(),
                rows: rows
                    .iter()
                    .filter(|r| r.engine == engine)
                    .map(LayoutRow::of)
                    .collect(),
            })
            .collect(),
        figures: Figures {
            figures: charts
                .iter()
                .map(|c| Figure {
                    stem: c.file_stem(),
                    caption: c.caption(),
                })
                .collect(),
        },
    };
    Ok(page.render()?)
}
