//! Disk bytes read per fetch against blob size, per engine: read amplification.
//! The grey diagonal is the blob itself (what a perfect cold read costs);
//! engines whose disk counter is unavailable are named, not drawn as 0.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, FONT, LABEL_SIZE, Section, TITLE_SIZE, UNKNOWN, bytes_label, draw_empty, engine_color,
    legend, plot_err, series_line,
};
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::data::{engines, log_range, series, size_axis};

pub struct Amplification;

impl Chart for Amplification {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        "disk-per-fetch".into()
    }

    fn caption(&self) -> String {
        "Bytes read from storage per fetch against blob size (cache hits count as 0 bytes); the grey diagonal is the blob size itself".into()
    }

    fn section(&self) -> Section {
        Section::Disk
    }

    fn draw<DB: DrawingBackend>(
        &self,
        run: &RunResults,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        let data = series(run, |r| {
            r.measured.disk_bytes_per_fetch.filter(|d| *d > 0.0)
        });
        let missing: Vec<&str> = engines(run)
            .into_iter()
            .filter(|e| !data.iter().any(|s| s.engine == *e))
            .map(EngineKind::name)
            .collect();
        let title = "Disk bytes read per fetch";
        let sizes = crate::report::data::sizes(run);
        let (Some((x_lo, x_hi, ticks)), Some((y_lo, y_hi))) = (
            size_axis(&sizes),
            log_range(
                data.iter()
                    .flat_map(|s| s.points.iter().map(|p| p.1))
                    .chain(sizes.iter().map(|&s| s as f64)),
            ),
        ) else {
            return draw_empty(area, title, "no disk counter was available in this run");
        };
        let mut chart = ChartBuilder::on(area)
            .caption(title, (FONT, TITLE_SIZE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(
                (x_lo..x_hi).log_scale().with_key_points(ticks),
                (y_lo..y_hi).log_scale(),
            )
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("blob size")
            .y_desc("disk bytes per fetch")
            .x_label_formatter(&bytes_label)
            .y_label_formatter(&bytes_label)
            .label_style((FONT, LABEL_SIZE))
            .draw()
            .map_err(plot_err)?;
        chart
            .draw_series(LineSeries::new(
                [(x_lo, x_lo), (x_hi, x_hi)],
                UNKNOWN.stroke_width(1),
            ))
            .map_err(plot_err)?
            .label("blob size")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], UNKNOWN.stroke_width(1)));
        for s in &data {
            let points = s.points.iter().map(|&(x, y)| (x as f64, y)).collect();
            series_line(
                &mut chart,
                points,
                engine_color(s.engine),
                s.engine.name(),
                false,
                true,
            )?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        if !missing.is_empty() {
            let (_, h) = area.dim_in_pixel();
            area.draw(&Text::new(
                format!("unavailable (no disk counter): {}", missing.join(", ")),
                (90, h as i32 - 18),
                (FONT, LABEL_SIZE).into_font().color(&UNKNOWN),
            ))
            .map_err(plot_err)?;
        }
        Ok(())
    }
}
