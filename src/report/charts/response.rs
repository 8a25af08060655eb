//! Per size class, open loop: the CDF of each load's service time (start → end,
//! dashed) beside its response time (due → end, solid). The gap between them is
//! the queueing a closed loop hides (coordinated omission): a stall delays every
//! fetch due behind it, and only the response time counts that wait.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, FONT, LABEL_SIZE, Section, TITLE_SIZE, draw_empty, engine_color, legend, ns_label,
    plot_err, series_line,
};
use crate::records::results::RunResults;
use crate::report::data::{cdf, log_range};
use crate::size::format_bytes;

pub struct ResponseCdf {
    pub size: u64,
}

impl ResponseCdf {
    /// Whether a run has open-loop loads at `size` (else no chart).
    pub fn applies(run: &RunResults, size: u64) -> bool {
        run.load_results
            .iter()
            .any(|l| l.result.size_bytes == size && l.load.response_histogram.is_some())
    }
}

impl Chart for ResponseCdf {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        format!("response-{}", format_bytes(self.size))
    }

    fn caption(&self) -> String {
        format!(
            "{} open loop: share of fetches at or under a latency (CDF), per load: response time from when each fetch was due (solid) and service time from when it started (dashed); the gap is time spent waiting to start",
            format_bytes(self.size)
        )
    }

    fn section(&self) -> Section {
        Section::Load(self.size)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        run: &RunResults,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        // (engine, load, response CDF, service CDF)
        let curves: Vec<_> = run
            .load_results
            .iter()
            .filter(|l| l.result.size_bytes == self.size)
            .filter_map(|l| {
                let response = cdf(l.load.response_histogram.as_ref()?);
                let service = l
                    .result
                    .measured
                    .histogram
                    .as_ref()
                    .map(cdf)
                    .unwrap_or_default();
                Some((l.result.engine, l.load.point.label(), response, service))
            })
            .filter(|(_, _, r, _)| !r.is_empty())
            .collect();
        let title = format!(
            "{} blobs: response vs service time",
            format_bytes(self.size)
        );
        let xs = log_range(
            curves
                .iter()
                .flat_map(|(_, _, r, s)| r.iter().chain(s.iter()).map(|p| p.0)),
        );
        let Some((lo, hi)) = xs else {
            return draw_empty(area, &title, "no open-loop loads at this size");
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
            .x_desc("latency")
            .y_desc("share of fetches")
            .x_label_formatter(&ns_label)
            .y_label_formatter(&|v| format!("{:.0}%", v * 100.0))
            .label_style((FONT, LABEL_SIZE))
            .draw()
            .map_err(plot_err)?;
        for (engine, load, response, service) in curves {
            let color = engine_color(engine);
            let name = engine.name();
            series_line(
                &mut chart,
                response,
                color,
                &format!("{name} {load} response"),
                false,
                false,
            )?;
            if !service.is_empty() {
                series_line(
                    &mut chart,
                    service,
                    color,
                    &format!("{name} {load} service"),
                    true,
                    false,
                )?;
            }
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }
}
