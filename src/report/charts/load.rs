//! Load throughput (MB/s) per store and size class, for datasets this run loaded.
//! Datasets reused from an earlier run have no figure here, and the chart says so.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, FONT, LABEL_SIZE, Section, TITLE_SIZE, bytes_label, draw_empty, legend, plot_err,
    series_line,
};
use crate::db::registry::EngineKind;
use crate::db::registry::StoreKind;
use crate::records::results::RunResults;
use crate::report::data::{log_range, size_axis};

pub struct LoadThroughput;

/// A store takes the colour of the first engine reading it (its ORM engine).
fn colour_of(store: StoreKind) -> RGBColor {
    EngineKind::all()
        .find(|e| e.store() == store)
        .map(super::engine_color)
        .unwrap_or(super::UNKNOWN)
}

impl Chart for LoadThroughput {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        "load".into()
    }

    fn caption(&self) -> String {
        "Load throughput (MB/s of blob bytes written) per store and size class, for the datasets this run loaded".into()
    }

    fn section(&self) -> Section {
        Section::Disk
    }

    fn draw<DB: DrawingBackend>(
        &self,
        run: &RunResults,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        let mut stores: Vec<StoreKind> = run.loads.iter().map(|l| l.store).collect();
        stores.sort();
        stores.dedup();
        let lines: Vec<(StoreKind, Vec<(f64, f64)>)> = stores
            .into_iter()
            .map(|store| {
                let mut points: Vec<(f64, f64)> = run
                    .loads
                    .iter()
                    .filter(|l| l.store == store)
                    .filter_map(|l| Some((l.size_bytes as f64, l.mb_per_s?)))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                (store, points)
            })
            .filter(|(_, p)| !p.is_empty())
            .collect();
        let title = "Load throughput";
        let load_sizes: Vec<u64> = lines
            .iter()
            .flat_map(|(_, p)| p.iter().map(|p| p.0 as u64))
            .collect();
        let (Some((x_lo, x_hi, ticks)), Some((_, y_hi))) = (
            size_axis(&load_sizes),
            log_range(lines.iter().flat_map(|(_, p)| p.iter().map(|p| p.1))),
        ) else {
            return draw_empty(
                area,
                title,
                "every dataset was already loaded: this run has no load figures (see the run that loaded them)",
            );
        };
        let mut chart = ChartBuilder::on(area)
            .caption(title, (FONT, TITLE_SIZE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((x_lo..x_hi).log_scale().with_key_points(ticks), 0f64..y_hi)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("blob size")
            .y_desc("MB/s")
            .x_label_formatter(&bytes_label)
            .label_style((FONT, LABEL_SIZE))
            .draw()
            .map_err(plot_err)?;
        for (store, points) in lines {
            series_line(
                &mut chart,
                points,
                colour_of(store),
                store.name(),
                false,
                true,
            )?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
}
