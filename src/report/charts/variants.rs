//! The variants page's chart: at one size and cache state, each layout's p50 and
//! p99 ÷ its engine's default layout, a pair of bars per (engine, layout), log scale.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Chart, FONT, LABEL_SIZE, Section, TITLE_SIZE, engine_color, plot_err};
use crate::report::variant_rows::VariantRow;
use crate::size::format_bytes;
use crate::workload::steady::CacheState;

pub struct LayoutRatios {
    pub size: u64,
    pub cache: CacheState,
}

impl LayoutRatios {
    /// The rows it draws: the layouts other than the default at its size and cache
    /// state that have a default to be divided by.
    pub fn rows<'a>(&self, rows: &'a [VariantRow]) -> Vec<&'a VariantRow> {
        rows.iter()
            .filter(|r| r.size_bytes == self.size && r.cache == self.cache && !r.reference)
            .filter(|r| r.p50_ratio.is_some())
            .collect()
    }
}

impl Chart for LayoutRatios {
    type Input = [VariantRow];

    fn file_stem(&self) -> String {
        format!("variants-{}-{}", format_bytes(self.size), self.cache.name())
    }

    fn caption(&self) -> String {
        format!(
            "{}: each layout's p50 (filled) and p99 (outlined) ÷ its engine's default layout, one colour per engine; the line at 1 is the default",
            self.file_stem()
        )
    }

    fn section(&self) -> Section {
        Section::Variants
    }

    fn height(&self) -> u32 {
        // Room under the bars for labels up to `LABEL_CHARS`, turned upright.
        640
    }

    fn draw<DB: DrawingBackend>(
        &self,
        rows: &[VariantRow],
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        draw_on(&self.rows(rows), self.size, self.cache, area)
    }
}

/// The most characters of a layout's name under its bars.
const LABEL_CHARS: usize = 30;

/// A layout's name on the chart's axis: `uuidv7`, `page 16K`, `mmap 4GiB`.
fn short_layout(layout: &str) -> String {
    layout
        .replace("key ", "")
        .replace("page 16384", "page 16K")
        .replace("page 65536", "page 64K")
        .replace("storage ", "pg ")
        .replace("live dataset, no writer", "no writer")
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
    let labels: Vec<String> = rows
        .iter()
        .map(|r| match r.clients {
            1 => short_layout(&r.layout),
            n => format!("{} ×{n}", short_layout(&r.layout)),
        })
        .collect();
    // A deployment's or workload's name can be long: cut to LABEL_CHARS (the tables
    // have it whole), and the label area sized for the longest, so no label runs into
    // the axis title or off the picture.
    let labels: Vec<String> = labels
        .into_iter()
        .map(|l| match l.char_indices().nth(LABEL_CHARS) {
            Some((at, _)) => format!("{}…", &l[..at]),
            None => l,
        })
        .collect();
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u32;
    let label_area = (longest * 9 + 16).clamp(90, LABEL_CHARS as u32 * 9 + 25);
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
        .x_label_area_size(label_area)
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
