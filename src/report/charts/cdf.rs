//! Per size class: the CDF of fetch latency of every engine on one log-x chart,
//! with the floor (a raw pread of the same bytes) dashed as the reference.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, FONT, LABEL_SIZE, Section, TITLE_SIZE, draw_empty, engine_color, legend, ns_label,
    plot_err, series_line,
};
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::data::{cdf, engines, log_range};
use crate::size::format_bytes;

pub struct Cdf {
    pub size: u64,
    /// How the size is named: `64KiB`, or a size mix's name.
    pub label: String,
}

impl Chart for Cdf {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        format!("cdf-{}", format_bytes(self.size))
    }

    fn caption(&self) -> String {
        format!(
            "{}: share of fetches at or under a latency (CDF), all engines; the floor dashed",
            self.label
        )
    }

    fn section(&self) -> Section {
        Section::Size(self.size)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        run: &RunResults,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        let curves: Vec<(EngineKind, Vec<(f64, f64)>)> = engines(run)
            .into_iter()
            .filter_map(|e| {
                let h = run.result(e, self.size)?.measured.histogram.as_ref()?;
                Some((e, cdf(h)))
            })
            .filter(|(_, c)| !c.is_empty())
            .collect();
        let title = format!("{} blobs: latency CDF", self.label);
        let Some((lo, hi)) = log_range(curves.iter().flat_map(|(_, c)| c.iter().map(|p| p.0)))
        else {
            return draw_empty(
                area,
                &title,
                "no per-fetch distribution recorded for this size",
            );
        };
        let mut chart = ChartBuilder::on(area)
            .caption(title, (FONT, TITLE_SIZE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((lo..hi).log_scale(), 0f64..1f64)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("fetch latency")
            .y_desc("share of fetches")
            .x_label_formatter(&ns_label)
            .y_label_formatter(&|v| format!("{:.0}%", v * 100.0))
            .label_style((FONT, LABEL_SIZE))
            .draw()
            .map_err(plot_err)?;
        for (engine, points) in curves {
            let floor = engine == EngineKind::floor();
            series_line(
                &mut chart,
                points,
                engine_color(engine),
                engine.name(),
                floor,
                false,
            )?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }
}
