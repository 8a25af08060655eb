//! Per size class under load: throughput against latency, one line per engine
//! through its loads (1 client, then more clients or higher rates): x the fetches/s
//! it achieved, y its p99 (solid) and p50 (thin) headline latency, log. Where a line
//! turns up, adding load only queues. The floor dashed; the target as a magenta line;
//! the disk's own O_DIRECT random reads at each client count as grey vertical lines
//! (the physical limit: no engine reading from this disk can pass them uncached).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, DISK_LIMIT, FONT, LABEL_SIZE, Section, TARGET, TITLE_SIZE, draw_empty, engine_color,
    legend, ns_label, plot_err, series_line,
};
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::data::{disk_rates, load_curve, load_engines, log_range};
use crate::size::format_bytes;

pub struct ThroughputLatency {
    pub size: u64,
    pub target_p99_ns: u64,
}

impl Chart for ThroughputLatency {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        format!("throughput-{}", format_bytes(self.size))
    }

    fn caption(&self) -> String {
        format!(
            "{} under load: latency against the fetches/s achieved, one line per engine through its loads (1 client: 1 ÷ its mean latency; more clients: closed loop, service time; a rate: open loop, response time from when each fetch was due); p99 thick with dots, p50 thin; the floor dashed; grey dashed verticals: the disk's own random reads of the same block with as many at once as clients (O_DIRECT, measured in this run); the magenta line is the target p99 ≤ {}",
            format_bytes(self.size),
            crate::stats::format_ns(self.target_p99_ns as f64)
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
        let curves: Vec<_> = load_engines(run, self.size)
            .into_iter()
            .map(|e| (e, load_curve(run, e, self.size)))
            .filter(|(_, c)| !c.is_empty())
            .collect();
        let title = format!(
            "{} blobs: latency against throughput",
            format_bytes(self.size)
        );
        let disk = disk_rates(run, self.size);
        let xs = log_range(
            curves
                .iter()
                .flat_map(|(_, c)| c.iter().map(|p| p.rate))
                .chain(disk.iter().map(|&(_, rate)| rate)),
        );
        let ys = log_range(
            curves
                .iter()
                .flat_map(|(_, c)| c.iter().flat_map(|p| [p.p50_ns, p.p99_ns]))
                .chain([self.target_p99_ns as f64]),
        );
        let (Some((x_lo, x_hi)), Some((y_lo, y_hi))) = (xs, ys) else {
            return draw_empty(area, &title, "no loads measured at this size");
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
            .x_desc("fetches/s achieved")
            .y_desc("latency (p99 thick, p50 thin)")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&ns_label)
            .label_style((FONT, LABEL_SIZE))
            .draw()
            .map_err(plot_err)?;
        let target = self.target_p99_ns as f64;
        chart
            .draw_series(LineSeries::new(
                [(x_lo, target), (x_hi, target)],
                TARGET.stroke_width(1),
            ))
            .map_err(plot_err)?;
        for &(depth, rate) in &disk {
            series_line(
                &mut chart,
                vec![(rate, y_lo), (rate, y_hi)],
                DISK_LIMIT,
                &format!("disk: {depth} O_DIRECT reads at once"),
                true,
                false,
            )?;
        }
        for (engine, points) in curves {
            let floor = engine == EngineKind::floor();
            let color = engine_color(engine);
            let p99: Vec<(f64, f64)> = points.iter().map(|p| (p.rate, p.p99_ns)).collect();
            series_line(&mut chart, p99, color, engine.name(), floor, true)?;
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|p| (p.rate, p.p50_ns)),
                    color.stroke_width(1),
                ))
                .map_err(plot_err)?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    }
}
