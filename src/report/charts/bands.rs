//! A size mix's headline: p50 and p99 against blob size, one point per size band (at
//! the band's middle, log-log), one line per engine, the floor dashed, the latency
//! target as a horizontal line. A band with fewer than 100 fetches is left out (its
//! p99 would be one of its slowest few fetches).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, FONT, LABEL_SIZE, Section, TARGET, TITLE_SIZE, bytes_label, draw_empty, engine_color,
    legend, ns_label, plot_err, series_line,
};
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::data::{engines, log_range};

/// Fewer fetches than this and a band is not drawn.
const FETCHES_TO_DRAW: u64 = 100;

pub struct BandsChart {
    pub target_p99_ns: u64,
}

/// A band's middle, its p50 and its p99.
type BandPoint = (f64, f64, f64);

/// Per engine, its bands with enough fetches.
fn points(run: &RunResults) -> Vec<(EngineKind, Vec<BandPoint>)> {
    engines(run)
        .into_iter()
        .filter_map(|engine| {
            let r = run.results.iter().find(|r| r.engine == engine)?;
            let points = r
                .measured
                .bands
                .iter()
                .filter(|b| b.count >= FETCHES_TO_DRAW)
                .map(|b| {
                    (
                        ((b.low as f64) * (b.high as f64)).sqrt(),
                        b.latency.p50_ns as f64,
                        b.latency.p99_ns as f64,
                    )
                })
                .collect();
            Some((engine, points))
        })
        .collect()
}

impl Chart for BandsChart {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        "bands".into()
    }

    fn caption(&self) -> String {
        format!(
            "The size mix: p50 and p99 fetch latency against blob size, one point per size band (a doubling, or one of a few sizes written by hand; bands with under {FETCHES_TO_DRAW} fetches left out), per engine; the floor (a raw pread) dashed; the magenta line is the target p99 ≤ {}",
            crate::stats::format_ns(self.target_p99_ns as f64)
        )
    }

    fn section(&self) -> Section {
        Section::Headline
    }

    fn draw<DB: DrawingBackend>(
        &self,
        run: &RunResults,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        let all = points(run);
        let xs: Vec<f64> = all
            .iter()
            .flat_map(|(_, p)| p.iter().map(|p| p.0))
            .collect();
        let x_lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let x_hi = xs.iter().copied().fold(0.0, f64::max);
        let y = log_range(
            all.iter()
                .flat_map(|(_, p)| p.iter().flat_map(|p| [p.1, p.2]))
                .chain([self.target_p99_ns as f64]),
        );
        let (Some((y_lo, y_hi)), true) = (y, x_hi > 0.0) else {
            return draw_empty(
                area,
                "Latency against blob size over the mix",
                "no band with enough fetches in this run",
            );
        };
        let (x_lo, x_hi) = (x_lo / 1.6, x_hi * 1.6);
        // Ticks at powers of two (whole KiB and MiB), at most 8 of them.
        let (first, last) = (x_lo.log2().ceil() as i32, x_hi.log2().floor() as i32);
        let step = ((last - first) / 8 + 1).max(1) as usize;
        let ticks: Vec<f64> = (first..=last).step_by(step).map(|e| 2f64.powi(e)).collect();
        let panels = area.split_evenly((1, 2));
        for (panel, (name, p99)) in panels.iter().zip([("p50", false), ("p99", true)]) {
            let mut chart = ChartBuilder::on(panel)
                .caption(format!("{name} latency per size band"), (FONT, TITLE_SIZE))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(70)
                .build_cartesian_2d(
                    (x_lo..x_hi).log_scale().with_key_points(ticks.clone()),
                    (y_lo..y_hi).log_scale(),
                )
                .map_err(plot_err)?;
            chart
                .configure_mesh()
                .x_desc("blob size (band middle)")
                .y_desc(name)
                .x_label_formatter(&bytes_label)
                .y_label_formatter(&ns_label)
                .label_style((FONT, LABEL_SIZE))
                .draw()
                .map_err(plot_err)?;
            chart
                .draw_series(LineSeries::new(
                    [
                        (x_lo, self.target_p99_ns as f64),
                        (x_hi, self.target_p99_ns as f64),
                    ],
                    TARGET.stroke_width(2),
                ))
                .map_err(plot_err)?
                .label("target p99")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], TARGET.stroke_width(2)));
            for (engine, points) in &all {
                let line = points
                    .iter()
                    .map(|&(x, p50, p99v)| (x, if p99 { p99v } else { p50 }))
                    .collect();
                let floor = *engine == EngineKind::floor();
                series_line(
                    &mut chart,
                    line,
                    engine_color(*engine),
                    engine.name(),
                    floor,
                    true,
                )?;
            }
            legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
        Ok(())
    }
}
