//! A size mix's latency against blob size as a heat map, one panel per engine: a column
//! per size band, a row per latency bin (8 to a decade), each cell shaded by the share of
//! the band's fetches that took that long. The bands chart gives two percentiles per band;
//! this shows every fetch, from the band's exact histogram: two humps in a column are
//! hits and misses, a column that climbs with blob size is a store that copies the
//! whole value.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Chart, FONT, LABEL_SIZE, Section, TITLE_SIZE, draw_empty, ns_label, plot_err};
use crate::dataset::mix::Band;
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::data::{engines, log_range};

/// Latency bins per decade.
const BINS_PER_DECADE: f64 = 8.0;
/// Panels side by side.
const COLUMNS: usize = 4;
const PANEL_HEIGHT: u32 = 240;
/// The darkest shade: a cell holding every fetch of its band.
const DARK: RGBColor = RGBColor(8, 48, 107);

pub struct BandHeatmap {
    /// Engines with band histograms (the panels).
    pub panels: usize,
}

/// One engine's bands: per band, its fetches counted per latency bin (the bin's lower
/// edge in ns, its count) and the band's fetches in all.
type Columns = Vec<(Band, Vec<(f64, u64)>, u64)>;

/// Per engine with band histograms, its columns.
pub fn columns(run: &RunResults) -> Vec<(EngineKind, Columns)> {
    engines(run)
        .into_iter()
        .filter_map(|engine| {
            let r = run.results.iter().find(|r| r.engine == engine)?;
            let columns: Columns = r
                .measured
                .bands
                .iter()
                .filter_map(|b| {
                    let h = crate::stats::hdr::decode(&b.hdr.as_ref()?.all).ok()?;
                    let mut bins: Vec<(f64, u64)> = Vec::new();
                    for v in h.iter_recorded() {
                        let ns = (v.value_iterated_to() as f64).max(1.0);
                        let edge =
                            10f64.powf((ns.log10() * BINS_PER_DECADE).floor() / BINS_PER_DECADE);
                        match bins.last_mut() {
                            Some((at, n)) if (*at - edge).abs() < edge * 1e-9 => {
                                *n += v.count_at_value()
                            }
                            _ => bins.push((edge, v.count_at_value())),
                        }
                    }
                    (!h.is_empty()).then(|| (b.band(), bins, h.len()))
                })
                .collect();
            (!columns.is_empty()).then_some((engine, columns))
        })
        .collect()
}

/// White at 0, `DARK` at 1; a square root, so a bin of a few percent still shows.
fn shade(share: f64) -> RGBColor {
    let t = share.clamp(0.0, 1.0).sqrt();
    let mix = |light: u8, dark: u8| {
        (f64::from(light) + (f64::from(dark) - f64::from(light)) * t).round() as u8
    };
    RGBColor(mix(255, DARK.0), mix(255, DARK.1), mix(255, DARK.2))
}

impl Chart for BandHeatmap {
    type Input = RunResults;

    fn file_stem(&self) -> String {
        "band-heatmap".into()
    }

    fn caption(&self) -> String {
        "Every fetch of the size mix, latency against blob size: per engine, a column per size band, a row per latency bin (8 to a decade, log scale), each cell shaded by the share of the band's fetches in it (darkest: all of them), from the band's exact histogram".into()
    }

    fn section(&self) -> Section {
        Section::Headline
    }

    fn height(&self) -> u32 {
        40 + PANEL_HEIGHT * self.panels.div_ceil(COLUMNS).max(1) as u32
    }

    fn draw<DB: DrawingBackend>(
        &self,
        run: &RunResults,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        let all = columns(run);
        let mut bands: Vec<Band> = all
            .iter()
            .flat_map(|(_, c)| c.iter().map(|(band, _, _)| *band))
            .collect();
        bands.sort();
        bands.dedup();
        let step = 10f64.powf(1.0 / BINS_PER_DECADE);
        // Each bin's both edges: a cell is drawn from its lower edge to its upper one.
        let y = log_range(all.iter().flat_map(|(_, c)| {
            c.iter()
                .flat_map(|(_, bins, _)| bins.iter().flat_map(|b| [b.0, b.0 * step]))
        }));
        let (Some((y_lo, y_hi)), false) = (y, bands.is_empty()) else {
            return draw_empty(
                area,
                "Every fetch of the mix",
                "no band histogram in this run",
            );
        };
        let rows = all.len().div_ceil(COLUMNS).max(1);
        let area = area
            .titled("Every fetch of the mix, per size band", (FONT, TITLE_SIZE))
            .map_err(plot_err)?;
        let panels = area.split_evenly((rows, COLUMNS));
        let n = bands.len();
        // A band named under the middle of its column by where it starts (a doubling ends
        // where the next starts): each where there are few, else one in every few, so
        // the names do not run into each other in a quarter of the page's width.
        let every = n.div_ceil(4);
        for (panel, (engine, columns)) in panels.iter().zip(&all) {
            let mut chart = ChartBuilder::on(panel)
                .caption(engine.name(), (FONT, LABEL_SIZE))
                .margin(6)
                .x_label_area_size(34)
                .y_label_area_size(56)
                .build_cartesian_2d((0..n as i32).into_segmented(), (y_lo..y_hi).log_scale())
                .map_err(plot_err)?;
            chart
                .configure_mesh()
                .disable_mesh()
                .x_labels(n + 1)
                .x_label_formatter(&|x: &SegmentValue<i32>| match *x {
                    SegmentValue::CenterOf(i) if i >= 0 && (i as usize).is_multiple_of(every) => {
                        bands
                            .get(i as usize)
                            .map(|band| crate::size::format_bytes(band.low))
                            .unwrap_or_default()
                    }
                    _ => String::new(),
                })
                .y_label_formatter(&ns_label)
                .label_style((FONT, LABEL_SIZE - 4))
                .draw()
                .map_err(plot_err)?;
            let cells = columns.iter().flat_map(|(band, bins, total)| {
                let x = bands.binary_search(band).unwrap_or(0) as i32;
                bins.iter().map(move |&(lo, count)| {
                    Rectangle::new(
                        [
                            (SegmentValue::Exact(x), lo),
                            (SegmentValue::Exact(x + 1), lo * step),
                        ],
                        shade(count as f64 / *total as f64).filled(),
                    )
                })
            });
            chart.draw_series(cells).map_err(plot_err)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_white_when_empty_and_darkest_when_it_holds_the_whole_band() {
        assert_eq!(shade(0.0), RGBColor(255, 255, 255));
        assert_eq!(shade(1.0), DARK);
        // A few percent still shows: a quarter of the way to the darkest at 6.25%.
        let RGBColor(r, _, _) = shade(0.0625);
        assert_eq!(
            r,
            (255.0 - (255.0 - f64::from(DARK.0)) * 0.25).round() as u8
        );
    }
}
