//! Headline: p50 and p99 against blob size (log-log), one line per engine, the
//! floor dashed, the latency target as a horizontal line.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, FONT, LABEL_SIZE, Section, TARGET, TITLE_SIZE, bytes_label, draw_empty, engine_color,
    legend, ns_label, plot_err, series_line,
};
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::data::{log_range, series, size_axis, sizes};

pub struct Headline {
    pub target_p99_ns: u64,
}

impl Chart for Headline {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        "headline".into()
    }

    fn caption(&self) -> String {
        format!(
            "p50 and p99 fetch latency against blob size, per engine, with 95% intervals as error bars (a point without one had too few fetches to judge); the floor (a raw pread) dashed; the magenta line is the target p99 ≤ {}",
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
        let p50 = series(run, |r| Some(r.measured.latency.p50_ns as f64));
        let p99 = series(run, |r| Some(r.measured.latency.p99_ns as f64));
        let (Some((x_lo, x_hi, ticks)), Some((y_lo, y_hi))) = (
            size_axis(&sizes(run)),
            log_range(
                p50.iter()
                    .chain(&p99)
                    .flat_map(|s| s.points.iter().map(|p| p.1))
                    .chain(run.results.iter().flat_map(|r| {
                        let iv = r.measured.intervals.clone().unwrap_or_default();
                        [iv.p50, iv.p99]
                            .into_iter()
                            .flatten()
                            .flat_map(|i| [i.lo_ns, i.hi_ns])
                    }))
                    .chain([self.target_p99_ns as f64]),
            ),
        ) else {
            return draw_empty(
                area,
                "Latency against blob size",
                "no measurements in this run",
            );
        };
        let panels = area.split_evenly((1, 2));
        for (panel, (name, q, data)) in panels.iter().zip([("p50", 0.5, &p50), ("p99", 0.99, &p99)])
        {
            let mut chart = ChartBuilder::on(panel)
                .caption(format!("{name} latency"), (FONT, TITLE_SIZE))
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
                .x_desc("blob size")
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
            for s in data.iter() {
                let points = s.points.iter().map(|&(x, y)| (x as f64, y)).collect();
                let floor = s.engine == EngineKind::floor();
                series_line(
                    &mut chart,
                    points,
                    engine_color(s.engine),
                    s.engine.name(),
                    floor,
                    true,
                )?;
            }
            // The 95% intervals, where the result has one.
            chart
                .draw_series(run.results.iter().filter_map(|r| {
                    let iv = r.measured.intervals.as_ref()?.get(q)?;
                    let mid = match q {
                        0.5 => r.measured.latency.p50_ns,
                        _ => r.measured.latency.p99_ns,
                    } as f64;
                    Some(ErrorBar::new_vertical(
                        r.size_bytes as f64,
                        iv.lo_ns.min(mid),
                        mid,
                        iv.hi_ns.max(mid),
                        engine_color(r.engine).stroke_width(2),
                        8,
                    ))
                }))
                .map_err(plot_err)?;
            legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
        Ok(())
    }
}
