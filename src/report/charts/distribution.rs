//! Per size class: each engine's latency distribution (log time axis, one row per
//! engine), cache hits and misses in their own colours — a bimodal shape explains
//! itself: the left hump read nothing from disk, the right one did.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, FONT, HIT, LABEL_SIZE, MISS, Section, TITLE_SIZE, UNKNOWN, draw_empty, ns_label,
    plot_err,
};
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::data::{Bar, bars, engines, log_range};
use crate::size::format_bytes;

pub struct Distribution {
    pub size: u64,
    /// How the size is named: `64KiB`, or a size mix's name.
    pub label: String,
    /// Engines with a distribution at this size: one row each.
    pub rows: usize,
}

const ROW_HEIGHT: u32 = 120;

impl Distribution {
    pub fn rows(run: &RunResults, size: u64) -> Vec<(EngineKind, Vec<Bar>)> {
        engines(run)
            .into_iter()
            .filter_map(|e| {
                let h = run.result(e, size)?.measured.histogram.as_ref()?;
                Some((e, bars(h)))
            })
            .filter(|(_, b)| !b.is_empty())
            .collect()
    }
}

impl Chart for Distribution {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        format!("distribution-{}", format_bytes(self.size))
    }

    fn caption(&self) -> String {
        format!(
            "{}: share of fetches per latency bin, per engine; green = cache hit (no disk read), red = miss, grey = unknown (no disk counter)",
            self.label
        )
    }

    fn section(&self) -> Section {
        Section::Size(self.size)
    }

    fn height(&self) -> u32 {
        60 + ROW_HEIGHT * self.rows.max(1) as u32
    }

    fn draw<DB: DrawingBackend>(
        &self,
        run: &RunResults,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        let rows = Self::rows(run, self.size);
        let title = format!("{} blobs: latency distribution", self.label);
        let Some((lo, hi)) = log_range(
            rows.iter()
                .flat_map(|(_, b)| b.iter().flat_map(|b| [b.lo_ns, b.hi_ns])),
        ) else {
            return draw_empty(
                area,
                &title,
                "no per-fetch distribution recorded for this size",
            );
        };
        let area = area.titled(&title, (FONT, TITLE_SIZE)).map_err(plot_err)?;
        let panels = area.split_evenly((rows.len(), 1));
        for (i, (panel, (engine, bars))) in panels.iter().zip(&rows).enumerate() {
            let last = i + 1 == rows.len();
            let top = bars
                .iter()
                .map(|b| b.hits + b.misses + b.unknown)
                .fold(0.0, f64::max)
                * 1.1;
            let mut chart = ChartBuilder::on(panel)
                .margin_right(20)
                // Room between panels, so one panel's top label clears the "0%" below it.
                .margin_top(8)
                .x_label_area_size(if last { 35 } else { 0 })
                .y_label_area_size(110)
                .build_cartesian_2d((lo..hi).log_scale(), 0f64..top)
                .map_err(plot_err)?;
            let mut mesh = chart.configure_mesh();
            mesh.y_desc(engine.name())
                .y_labels(3)
                .y_max_light_lines(1)
                .y_label_formatter(&|v| format!("{:.0}%", v * 100.0))
                .x_label_formatter(&ns_label)
                .label_style((FONT, LABEL_SIZE - 2))
                .axis_desc_style((FONT, LABEL_SIZE));
            // Every panel keeps the latency grid (its labels only show under the last one,
            // the others have no label area) so bars can be read across panels.
            mesh.draw().map_err(plot_err)?;
            // Stacked per bin: hits at the bottom, then misses, then unknown.
            for (from, to, color) in [(0u8, 1u8, HIT), (1, 2, MISS), (2, 3, UNKNOWN)] {
                chart
                    .draw_series(bars.iter().map(|b| {
                        let parts = [b.hits, b.misses, b.unknown];
                        let y0: f64 = parts[..from as usize].iter().sum();
                        let y1: f64 = parts[..to as usize].iter().sum();
                        Rectangle::new([(b.lo_ns, y0), (b.hi_ns, y1)], color.filled())
                    }))
                    .map_err(plot_err)?;
            }
        }
        Ok(())
    }
}
