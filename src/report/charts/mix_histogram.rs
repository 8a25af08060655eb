//! A size mix's own histogram: per size band (a doubling, or a size written by hand), the share of the dataset's
//! blobs and the share of its bytes, as the loader drew them from the mix's seed. The two
//! differ by design: a long-tailed mix's small blobs are most of its fetches, its large
//! ones most of its bytes, and so of what the cache can hold; the latency per band above
//! reads right only beside both.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Chart, FONT, LABEL_SIZE, Section, TITLE_SIZE, draw_empty, legend, plot_err};
use crate::dataset::mix::{BandGrid, BandShare};
use crate::records::results::RunResults;
use crate::report::data::{mix_grid, mix_shares};
use crate::size::format_bytes;

const BLOBS: RGBColor = RGBColor(66, 114, 196);
const BYTES: RGBColor = RGBColor(237, 125, 49);

pub struct MixHistogram;

impl Chart for MixHistogram {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        "mix-histogram".into()
    }

    fn caption(&self) -> String {
        "The size mix itself: per size band (a doubling of blob size, or one of a few sizes written by hand), the share of the dataset's blobs (blue) and of its bytes (orange), counted over every blob the loader wrote".into()
    }

    fn section(&self) -> Section {
        Section::Headline
    }

    fn height(&self) -> u32 {
        420
    }

    fn draw<DB: DrawingBackend>(
        &self,
        run: &RunResults,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        let shares: Vec<BandShare> = mix_shares(run).unwrap_or_default();
        let blobs: u64 = shares.iter().map(|s| s.blobs).sum();
        let bytes: u64 = shares.iter().map(|s| s.bytes).sum();
        if blobs == 0 || bytes == 0 {
            return draw_empty(area, "The size mix", "this run has no size mix");
        }
        let pct = |part: u64, whole: u64| 100.0 * part as f64 / whole as f64;
        let top = shares
            .iter()
            .flat_map(|s| [pct(s.blobs, blobs), pct(s.bytes, bytes)])
            .fold(0.0, f64::max);
        let n = shares.len();
        // Each band named by where it starts (it ends where the next starts); with many
        // bands every other one, so the names do not run into each other.
        let every = if n > 12 { 2 } else { 1 };
        let labels: Vec<String> = shares
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if i % every == 0 {
                    format_bytes(s.band.low)
                } else {
                    String::new()
                }
            })
            .collect();
        // Room under zero for the bands' labels, drawn in the plot under each bar pair
        // (plotters' axis labels sit on ticks, not under a category).
        let (y_lo, y_hi) = (-top * 0.12, (top * 1.15).max(1.0));
        let mut chart = ChartBuilder::on(area)
            .caption(
                "Share of blobs and of bytes per size band",
                (FONT, TITLE_SIZE),
            )
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..n as f64, y_lo..y_hi)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_desc(match mix_grid(run) {
                Some(BandGrid::Sizes(_)) => "size band: the blobs of the size named",
                _ => "size band: from the size named to twice it",
            })
            .y_desc("% of the dataset")
            .y_label_formatter(&|y| {
                if *y < 0.0 {
                    String::new()
                } else {
                    format!("{y:.0}%")
                }
            })
            .label_style((FONT, LABEL_SIZE))
            .draw()
            .map_err(plot_err)?;
        chart
            .draw_series(LineSeries::new([(0.0, 0.0), (n as f64, 0.0)], BLACK))
            .map_err(plot_err)?;
        let label_style =
            TextStyle::from((FONT, LABEL_SIZE).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        chart
            .draw_series(labels.iter().enumerate().map(|(i, label)| {
                Text::new(
                    label.clone(),
                    (i as f64 + 0.5, -top * 0.02),
                    label_style.clone(),
                )
            }))
            .map_err(plot_err)?;
        for (offset, color, label, of) in
            [(0.1, BLOBS, "blobs", blobs), (0.5, BYTES, "bytes", bytes)]
        {
            chart
                .draw_series(shares.iter().enumerate().map(|(i, s)| {
                    let value = pct(if label == "blobs" { s.blobs } else { s.bytes }, of);
                    Rectangle::new(
                        [(i as f64 + offset, 0.0), (i as f64 + offset + 0.4, value)],
                        color.filled(),
                    )
                }))
                .map_err(plot_err)?
                .label(format!("% of {label}"))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
}
