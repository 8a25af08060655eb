//! The sustainable rate (`--mode saturate`) as bars: per size, each engine's highest
//! rate whose p99 response time met the target, longest first, the floor's in black
//! beside them; an engine that met it at no rate tried is marked "none". The table
//! under it on the page has the MB/s and the ratios.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, FONT, LABEL_SIZE, MISS, Section, TITLE_SIZE, draw_empty, engine_color, plot_err,
};
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::size::format_bytes;

/// Height of one bar's row, in pixels.
const ROW: u32 = 24;

pub struct SustainableRates {
    pub rows: usize,
}

/// One bar: size, engine, clients, and its rate (None: no rate met the target).
pub struct Bar {
    pub size: u64,
    pub engine: EngineKind,
    pub clients: u32,
    pub rate: Option<f64>,
}

impl SustainableRates {
    /// The bars, by size, then the fastest first ("none" last).
    pub fn bars(run: &RunResults) -> Vec<Bar> {
        let mut bars: Vec<Bar> = run
            .saturations
            .iter()
            .map(|s| Bar {
                size: s.size_bytes,
                engine: s.engine,
                clients: s.clients,
                rate: s.search.sustainable,
            })
            .collect();
        bars.sort_by(|a, b| {
            a.size
                .cmp(&b.size)
                .then(b.rate.unwrap_or(0.0).total_cmp(&a.rate.unwrap_or(0.0)))
                .then(a.engine.cmp(&b.engine))
        });
        bars
    }
}

impl Chart for SustainableRates {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        "sustainable".to_string()
    }

    fn caption(&self) -> String {
        "The highest rate at which each engine's p99 response time met the target, per size and clients (log scale), the fastest first; the floor (a raw pread of the same bytes) in black, \"none\" where even the lowest rate tried missed".to_string()
    }

    fn section(&self) -> Section {
        Section::Sustainable
    }

    fn height(&self) -> u32 {
        110 + ROW * self.rows.max(1) as u32
    }

    fn draw<DB: DrawingBackend>(
        &self,
        run: &RunResults,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        let bars = Self::bars(run);
        let title = "Sustainable rate at the target";
        let rates: Vec<f64> = bars.iter().filter_map(|b| b.rate).collect();
        let (Some(lo), Some(hi)) = (
            rates.iter().copied().reduce(f64::min),
            rates.iter().copied().reduce(f64::max),
        ) else {
            return draw_empty(area, title, "no engine met the target at any rate tried");
        };
        // Bars start a decade below the slowest: each one's length reads on the log axis.
        let (x_lo, x_hi) = (lo / 10.0, hi * 1.6);
        let labels: Vec<String> = bars
            .iter()
            .map(|b| {
                format!(
                    "{} {} ×{}",
                    format_bytes(b.size),
                    b.engine.name(),
                    b.clients
                )
            })
            .collect();
        let n = bars.len();
        let mut chart = ChartBuilder::on(area)
            .caption(title, (FONT, TITLE_SIZE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(230)
            .build_cartesian_2d((x_lo..x_hi).log_scale(), -0.5f64..(n as f64 - 0.5))
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&|y| {
                let i = y.round();
                // Row 0 at the top: the fastest first.
                if (y - i).abs() < 0.01 && i >= 0.0 && (i as usize) < n {
                    labels[n - 1 - i as usize].clone()
                } else {
                    String::new()
                }
            })
            .x_desc("fetches/s with p99 response time ≤ the target")
            .x_label_formatter(&|v| crate::stats::rate_label(*v))
            .label_style((FONT, LABEL_SIZE))
            .draw()
            .map_err(plot_err)?;
        for (i, bar) in bars.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let color = if bar.engine == EngineKind::floor() {
                BLACK
            } else {
                engine_color(bar.engine)
            };
            match bar.rate {
                Some(rate) => {
                    chart
                        .draw_series([Rectangle::new(
                            [(x_lo, y - 0.35), (rate, y + 0.35)],
                            color.filled(),
                        )])
                        .map_err(plot_err)?;
                    chart
                        .draw_series([Text::new(
                            format!(" {}/s", crate::stats::rate_label(rate)),
                            (rate, y + 0.3),
                            (FONT, LABEL_SIZE).into_font(),
                        )])
                        .map_err(plot_err)?;
                }
                None => {
                    chart
                        .draw_series([Text::new(
                            "none: missed at every rate tried",
                            (x_lo, y + 0.3),
                            (FONT, LABEL_SIZE).into_font().color(&MISS),
                        )])
                        .map_err(plot_err)?;
                }
            }
        }
        Ok(())
    }
}
