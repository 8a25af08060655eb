//! Per size class under load: how throughput grows with clients (closed loop), one
//! line per engine from 1 client (1 ÷ its mean latency) through each client count,
//! the floor dashed, and the disk's own O_DIRECT reads at as many at once in grey:
//! where an engine's line flattens below the disk's, something other than the disk
//! (a lock, a CPU, a server's workers) stops it.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, DISK_LIMIT, FONT, LABEL_SIZE, Section, TITLE_SIZE, draw_empty, engine_color, legend,
    plot_err, series_line,
};
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::data::{clients_curve, disk_rates, load_engines, log_range};
use crate::size::format_bytes;

pub struct ClientsThroughput {
    pub size: u64,
}

impl ClientsThroughput {
    /// Whether a run has closed-loop loads at `size` (else no chart).
    pub fn applies(run: &RunResults, size: u64) -> bool {
        run.load_results
            .iter()
            .any(|l| l.result.size_bytes == size && l.load.point.rate.is_none())
    }
}

impl Chart for ClientsThroughput {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        format!("clients-{}", format_bytes(self.size))
    }

    fn caption(&self) -> String {
        format!(
            "{}: fetches/s against clients (closed loop: each client fetches again as soon as its last fetch ended), one line per engine, the floor dashed; grey: the disk's own random reads of the same block with as many at once (O_DIRECT)",
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
        let curves: Vec<(EngineKind, Vec<(f64, f64)>)> = load_engines(run, self.size)
            .into_iter()
            .map(|e| (e, clients_curve(run, e, self.size)))
            .filter(|(_, c)| !c.is_empty())
            .collect();
        let disk: Vec<(f64, f64)> = disk_rates(run, self.size)
            .into_iter()
            .map(|(depth, rate)| (f64::from(depth), rate))
            .collect();
        let title = format!(
            "{} blobs: throughput against clients",
            format_bytes(self.size)
        );
        let all = || curves.iter().flat_map(|(_, c)| c.iter()).chain(disk.iter());
        let (Some((x_lo, x_hi)), Some((y_lo, y_hi))) =
            (log_range(all().map(|p| p.0)), log_range(all().map(|p| p.1)))
        else {
            return draw_empty(area, &title, "no closed-loop loads at this size");
        };
        let mut chart = ChartBuilder::on(area)
            .caption(title, (FONT, TITLE_SIZE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale())
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("clients")
            .y_desc("fetches/s")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style((FONT, LABEL_SIZE))
            .draw()
            .map_err(plot_err)?;
        if !disk.is_empty() {
            series_line(
                &mut chart,
                disk,
                DISK_LIMIT,
                "disk: O_DIRECT reads",
                true,
                true,
            )?;
        }
        for (engine, points) in curves {
            let floor = engine == EngineKind::floor();
            series_line(
                &mut chart,
                points,
                engine_color(engine),
                engine.name(),
                floor,
                true,
            )?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    }
}
