//! Per size of 1 MiB and more: the time to the first bytes of every engine that
//! streams, one row each on a log time axis: a dot at its first piece's p50, a bar to
//! the end of its streamed fetch's p50, and a black cross at its ordinary whole
//! fetch's p50, so "first bytes soon, whole value late" reads at a glance. Engines
//! that read whole values only are named under the chart, never drawn as 0.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, FONT, LABEL_SIZE, Section, TITLE_SIZE, UNKNOWN, draw_empty, engine_color, ns_label,
    plot_err,
};
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::data::log_range;
use crate::size::format_bytes;

pub struct FirstBytesChart {
    pub size: u64,
    /// Engines drawn (rows), for the chart's height.
    pub rows: usize,
}

/// One engine's p50s at the size, in nanoseconds.
pub struct Row {
    pub engine: EngineKind,
    pub first: f64,
    pub streamed_end: f64,
    /// Its ordinary whole fetch at the same size and cache state, where measured.
    pub whole: Option<f64>,
}

impl FirstBytesChart {
    /// Whether the run streamed anything at `size` (measured or said why not).
    pub fn applies(run: &RunResults, size: u64) -> bool {
        run.first_bytes.iter().any(|f| f.size_bytes == size)
    }

    /// The engines that streamed at `size`, in the run's order.
    pub fn rows(run: &RunResults, size: u64) -> Vec<Row> {
        run.first_bytes
            .iter()
            .filter(|f| f.size_bytes == size)
            .filter_map(|f| {
                let m = f.measured?;
                let whole = run
                    .results
                    .iter()
                    .find(|r| {
                        r.engine == f.engine
                            && r.size_bytes == size
                            && r.scenario.cache.name() == f.cache
                    })
                    .map(|r| r.measured.latency.p50_ns as f64);
                Some(Row {
                    engine: f.engine,
                    first: m.first_p50_ns as f64,
                    streamed_end: m.whole_p50_ns as f64,
                    whole,
                })
            })
            .collect()
    }

    /// The engines at `size` that read whole values only.
    fn whole_only(run: &RunResults, size: u64) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = run
            .first_bytes
            .iter()
            .filter(|f| f.size_bytes == size && f.measured.is_none())
            .map(|f| f.engine.name())
            .collect();
        names.dedup();
        names
    }
}

impl Chart for FirstBytesChart {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        format!("first-bytes-{}", format_bytes(self.size))
    }

    fn caption(&self) -> String {
        format!(
            "{}: time to the first bytes, p50: the dot is the first 64 KiB piece, the bar runs to the end of the streamed fetch, the black cross is the ordinary whole fetch (p99s in the table under \"Time to the first bytes\")",
            format_bytes(self.size)
        )
    }

    fn section(&self) -> Section {
        Section::Size(self.size)
    }

    fn height(&self) -> u32 {
        140 + 44 * self.rows.max(1) as u32
    }

    fn draw<DB: DrawingBackend>(
        &self,
        run: &RunResults,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        let title = format!("{}: time to the first bytes", format_bytes(self.size));
        let rows = Self::rows(run, self.size);
        let whole_only = Self::whole_only(run, self.size);
        let values = rows
            .iter()
            .flat_map(|r| [Some(r.first), Some(r.streamed_end), r.whole])
            .flatten();
        let Some((lo, hi)) = log_range(values) else {
            return draw_empty(
                area,
                &title,
                &format!(
                    "no engine streamed at this size (whole value only: {})",
                    whole_only.join(", ")
                ),
            );
        };
        let n = rows.len() as i32;
        let names: Vec<&str> = rows.iter().map(|r| r.engine.name()).collect();
        let label = |v: &SegmentValue<i32>| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                names.get(*i as usize).copied().unwrap_or("").to_string()
            }
            SegmentValue::Last => String::new(),
        };
        let mut chart = ChartBuilder::on(area)
            .caption(&title, (FONT, TITLE_SIZE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(120)
            .build_cartesian_2d((lo..hi).log_scale(), (0..(n - 1).max(0)).into_segmented())
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc("p50 (log scale)")
            .x_label_formatter(&ns_label)
            .y_labels(rows.len())
            .y_label_formatter(&label)
            .label_style((FONT, LABEL_SIZE))
            .draw()
            .map_err(plot_err)?;
        for (i, row) in rows.iter().enumerate() {
            let y = || SegmentValue::CenterOf(i as i32);
            let color = engine_color(row.engine);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(row.first, y()), (row.streamed_end, y())],
                    color.mix(0.6).stroke_width(10),
                )))
                .map_err(plot_err)?;
            chart
                .draw_series(std::iter::once(Circle::new(
                    (row.first, y()),
                    7,
                    color.filled(),
                )))
                .map_err(plot_err)?;
            if let Some(whole) = row.whole {
                chart
                    .draw_series(std::iter::once(Cross::new(
                        (whole, y()),
                        8,
                        BLACK.stroke_width(3),
                    )))
                    .map_err(plot_err)?;
            }
        }
        if !whole_only.is_empty() {
            let (_, h) = area.dim_in_pixel();
            area.draw(&Text::new(
                format!("whole value only: {}", whole_only.join(", ")),
                (130, h as i32 - 18),
                (FONT, LABEL_SIZE).into_font().color(&UNKNOWN),
            ))
            .map_err(plot_err)?;
        }
        Ok(())
    }
}
