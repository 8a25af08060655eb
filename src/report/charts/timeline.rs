//! Per size class: how each engine's state moved, window by window (200 ms), from
//! its first warm-up fetch to its last measured one: p50 and p99 of each window
//! (log scale, left) and its cache hit ratio (right), with a line where the
//! measurement began. A cache still filling shows as a rising hit ratio and falling
//! latencies; a flat stretch after the line is a steady state that was measured.
//! With `--write-rate`, the writer's slowest change of each second is drawn on the
//! same axis (dots): a checkpoint or a vacuum shows as a tall dot, and whether the
//! readers' p99 rose in the same second shows beside it. The writer stops right
//! after the last measured fetch, so its seconds are placed to end where the last
//! window ends (to within that window: 200 ms); it started before the measurement's
//! own warm-up, after any steady-state settling drawn to its left.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, FONT, HIT, LABEL_SIZE, Section, TARGET, TITLE_SIZE, UNKNOWN, draw_empty, engine_color,
    ns_label, plot_err,
};
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::data::{TimelinePoint, engines, log_range, timeline};
use crate::size::format_bytes;

pub struct Timeline {
    pub size: u64,
    /// How the size is named: `64KiB`, or a size mix's name.
    pub label: String,
    /// Engines with windows at this size: one row each.
    pub rows: usize,
}

const ROW_HEIGHT: u32 = 150;

/// An engine's windows, where its measurement began, and its writer's slowest change
/// per second (t, ns), empty without a writer.
type Row = (EngineKind, Vec<TimelinePoint>, Option<f64>, Vec<(f64, f64)>);

impl Timeline {
    pub fn rows(run: &RunResults, size: u64) -> Vec<Row> {
        engines(run)
            .into_iter()
            .filter_map(|e| {
                let result = run.result(e, size)?;
                let (points, measure_start) = timeline(result);
                let window_s = crate::stats::window::WINDOW_NS as f64 / 1e9;
                let end = points.last().map_or(0.0, |p| p.t_s + window_s / 2.0);
                let writes = result.writer.as_ref().map_or_else(Vec::new, |w| {
                    let origin = (end - w.ran_s).max(0.0);
                    w.per_second
                        .iter()
                        .enumerate()
                        .filter(|(_, (n, _))| *n > 0)
                        .map(|(s, (_, ms))| (origin + s as f64 + 0.5, ms * 1e6))
                        .collect()
                });
                (!points.is_empty()).then_some((e, points, measure_start, writes))
            })
            .collect()
    }
}

impl Chart for Timeline {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        format!("timeline-{}", format_bytes(self.size))
    }

    fn caption(&self) -> String {
        format!(
            "{}: each engine over time, per 200 ms window from its first warm-up fetch: p50 (solid) and p99 (thin) latency, left, log scale; cache hit ratio (green), right; the grey line is where the measurement began; red dots, where a writer ran (--write-rate): its slowest change of each second",
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
        let title = format!("{} blobs: warm-up and measurement over time", self.label);
        let t_max = rows
            .iter()
            .flat_map(|(_, p, _, _)| p.iter().map(|p| p.t_s))
            .fold(0.0, f64::max);
        let Some((lo, hi)) = log_range(rows.iter().flat_map(|(_, p, _, w)| {
            p.iter()
                .flat_map(|p| [p.p50_ns, p.p99_ns])
                .chain(w.iter().map(|(_, ns)| *ns))
        })) else {
            return draw_empty(area, &title, "no windows recorded for this size");
        };
        let x_hi = t_max * 1.02 + 0.1;
        let area = area.titled(&title, (FONT, TITLE_SIZE)).map_err(plot_err)?;
        let panels = area.split_evenly((rows.len(), 1));
        for (i, (panel, (engine, points, measure_start, writes))) in
            panels.iter().zip(&rows).enumerate()
        {
            let last = i + 1 == rows.len();
            let mut chart = ChartBuilder::on(panel)
                .margin_top(8)
                .margin_right(10)
                .x_label_area_size(if last { 35 } else { 0 })
                .y_label_area_size(110)
                .right_y_label_area_size(45)
                .build_cartesian_2d(0f64..x_hi, (lo..hi).log_scale())
                .map_err(plot_err)?
                .set_secondary_coord(0f64..x_hi, 0f64..1f64);
            chart
                .configure_mesh()
                .y_desc(engine.name())
                .y_labels(3)
                .x_desc(if last {
                    "seconds from the first fetch"
                } else {
                    ""
                })
                .y_label_formatter(&ns_label)
                .x_label_formatter(&|s| format!("{s:.1}s"))
                .label_style((FONT, LABEL_SIZE - 2))
                .axis_desc_style((FONT, LABEL_SIZE))
                .draw()
                .map_err(plot_err)?;
            chart
                .configure_secondary_axes()
                .y_labels(3)
                .y_label_formatter(&|v| format!("{:.0}%", v * 100.0))
                .label_style((FONT, LABEL_SIZE - 2))
                .draw()
                .map_err(plot_err)?;
            if let Some(t) = measure_start {
                chart
                    .draw_series(LineSeries::new(
                        [(*t, lo), (*t, hi)],
                        UNKNOWN.stroke_width(2),
                    ))
                    .map_err(plot_err)?;
            }
            let color = engine_color(*engine);
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|p| (p.t_s, p.p99_ns)),
                    color.mix(0.5).stroke_width(1),
                ))
                .map_err(plot_err)?;
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|p| (p.t_s, p.p50_ns)),
                    color.stroke_width(2),
                ))
                .map_err(plot_err)?;
            chart
                .draw_series(
                    writes
                        .iter()
                        .map(|&(t, ns)| Circle::new((t, ns), 3, TARGET.filled())),
                )
                .map_err(plot_err)?;
            chart
                .draw_secondary_series(LineSeries::new(
                    points.iter().filter_map(|p| Some((p.t_s, p.hit_ratio?))),
                    HIT.stroke_width(2),
                ))
                .map_err(plot_err)?;
        }
        Ok(())
    }
}
