//! The report's charts: one file per kind, each a `Chart` that says which section
//! of the page it belongs to; `AnyChart::all_for` lists them. Every chart is drawn
//! twice, to SVG (for the page) and PNG (beside it), with the shared style below.
//! Text uses the bundled DejaVu Sans, so no system font is needed.

mod amplification;
mod band_heatmap;
mod bands;
mod cdf;
mod clients;
mod distribution;
mod first_bytes;
mod headline;
mod load;
mod mix_histogram;
mod response;
mod sustainable;
mod throughput;
mod timeline;
mod variants;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::atomic_file::{make_atomic, write_atomic};
use crate::records::results::RunResults;

pub use amplification::Amplification;
pub use band_heatmap::BandHeatmap;
pub use bands::BandsChart;
pub use cdf::Cdf;
pub use clients::ClientsThroughput;
pub use distribution::Distribution;
pub use first_bytes::FirstBytesChart;
pub use headline::Headline;
pub use load::LoadThroughput;
pub use mix_histogram::MixHistogram;
pub use response::ResponseCdf;
pub use sustainable::SustainableRates;
pub use throughput::ThroughputLatency;
pub use timeline::Timeline;
pub use variants::VariantLatencies;

pub const WIDTH: u32 = 1000;
pub const FONT: &str = "sans-serif";
pub const TITLE_SIZE: u32 = 22;
pub const LABEL_SIZE: u32 = 15;
pub const HIT: RGBColor = RGBColor(46, 160, 67);
pub const MISS: RGBColor = RGBColor(214, 69, 65);
pub const UNKNOWN: RGBColor = RGBColor(150, 150, 150);
/// The target line: magenta, far from every engine's colour (its red, 200/30/30, was
/// LMDB's red, and the two could not be told apart in README's picture).
pub const TARGET: RGBColor = RGBColor(255, 0, 160);
/// The disk's own O_DIRECT throughput, the physical limit of a load.
pub const DISK_LIMIT: RGBColor = RGBColor(150, 150, 150);

pub use crate::report::palette::engine_color;

/// Where on the report page a chart goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Right after the verdict: the one chart of the whole run.
    Headline,
    /// The sustainable rate's section (`--mode saturate`), above its table.
    Sustainable,
    /// Under its size class's heading, above that size's table.
    Size(u64),
    /// "Disk reads and loading", above the load table.
    Disk,
    /// "Under load", under its size class's heading there.
    Load(u64),
    /// The page of `blobrace variants`, which has no other section.
    Variants,
}

/// The bundled font, registered once for plotters' text rendering. plotters is
/// built with `ab_glyph` (no system fonts), and features unify across the build:
/// criterion's own charts draw through the same plotters, so the benches call
/// this before criterion draws anything, or criterion fails with FontUnavailable.
pub fn register_font() -> Result<()> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(
                FONT,
                FontStyle::Normal,
                include_bytes!("../../../assets/fonts/DejaVuSans.ttf"),
            )
            .map_err(|_| "the bundled font assets/fonts/DejaVuSans.ttf is not a valid TTF".into())
        })
        .clone()
        .map_err(|e| anyhow!(e))
}

/// Plotters' errors carry the backend's error type: flatten them to anyhow.
pub fn plot_err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing failed: {e:?}")
}

/// A chart kind. `draw` is generic over the backend, so one body serves SVG and PNG.
pub trait Chart {
    /// What it is drawn from: a run (`RunResults`) for a run's report, the compared
    /// rows for the variants page.
    type Input: ?Sized;
    /// File name without extension, e.g. `cdf-64KiB`.
    fn file_stem(&self) -> String;
    /// What the page says above the chart.
    fn caption(&self) -> String;
    /// The section of the page it belongs to.
    fn section(&self) -> Section;
    fn height(&self) -> u32 {
        560
    }
    fn draw<DB: DrawingBackend>(
        &self,
        input: &Self::Input,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()>;
}

/// Draw `chart` to `<dir>/<stem>.svg` and `<dir>/<stem>.png`; returns the SVG path.
pub fn render<C: Chart>(chart: &C, input: &C::Input, dir: &Path) -> Result<PathBuf> {
    register_font()?;
    let stem = chart.file_stem();
    let height = chart.height();
    let svg = dir.join(format!("{stem}.svg"));
    let png = dir.join(format!("{stem}.png"));
    // Each file drawn whole, then put in place: a full disk or a failing chart never
    // leaves half a picture under a chart's name.
    let mut text = String::new();
    {
        let area = SVGBackend::with_string(&mut text, (WIDTH, height)).into_drawing_area();
        area.fill(&WHITE).map_err(plot_err)?;
        chart.draw(input, &area)?;
        area.present().map_err(plot_err)?;
    }
    write_atomic(&svg, text.as_bytes())?;
    make_atomic(&png, |partial| {
        let area = BitMapBackend::new(partial, (WIDTH, height)).into_drawing_area();
        area.fill(&WHITE).map_err(plot_err)?;
        chart.draw(input, &area)?;
        area.present().map_err(plot_err)
    })?;
    Ok(svg)
}

/// Every chart of a report.
pub enum AnyChart {
    Headline(Headline),
    Bands(BandsChart),
    BandHeatmap(BandHeatmap),
    MixHistogram(MixHistogram),
    Distribution(Distribution),
    Cdf(Cdf),
    FirstBytes(FirstBytesChart),
    Amplification(Amplification),
    Load(LoadThroughput),
    Throughput(ThroughputLatency),
    Clients(ClientsThroughput),
    Response(ResponseCdf),
    Timeline(Timeline),
    Sustainable(SustainableRates),
}

macro_rules! each_chart {
    ($self:expr, $c:ident => $body:expr) => {
        match $self {
            AnyChart::Headline($c) => $body,
            AnyChart::Bands($c) => $body,
            AnyChart::BandHeatmap($c) => $body,
            AnyChart::MixHistogram($c) => $body,
            AnyChart::Distribution($c) => $body,
            AnyChart::Cdf($c) => $body,
            AnyChart::FirstBytes($c) => $body,
            AnyChart::Amplification($c) => $body,
            AnyChart::Load($c) => $body,
            AnyChart::Throughput($c) => $body,
            AnyChart::Clients($c) => $body,
            AnyChart::Response($c) => $body,
            AnyChart::Timeline($c) => $body,
            AnyChart::Sustainable($c) => $body,
        }
    };
}

impl AnyChart {
    /// The charts of a run, in page order.
    pub fn all_for(run: &RunResults, target_p99_ns: u64) -> Vec<AnyChart> {
        // A size mix is one dataset: its latency against size is per size band.
        // ... beside the mix's own histogram (how much of it each band is).
        let mut charts = match run.config.size_mix {
            Some(_) => vec![
                AnyChart::Bands(BandsChart { target_p99_ns }),
                AnyChart::BandHeatmap(BandHeatmap {
                    panels: band_heatmap::columns(run).len(),
                }),
                AnyChart::MixHistogram(MixHistogram),
            ],
            None => vec![AnyChart::Headline(Headline { target_p99_ns })],
        };
        if !run.saturations.is_empty() {
            charts.push(AnyChart::Sustainable(SustainableRates {
                rows: run.saturations.len(),
            }));
        }
        for size in super::data::sizes(run) {
            let label = super::data::size_name(run, size);
            let rows = Distribution::rows(run, size).len();
            charts.push(AnyChart::Distribution(Distribution {
                size,
                label: label.clone(),
                rows,
            }));
            charts.push(AnyChart::Cdf(Cdf {
                size,
                label: label.clone(),
            }));
            if FirstBytesChart::applies(run, size) {
                let rows = FirstBytesChart::rows(run, size).len();
                charts.push(AnyChart::FirstBytes(FirstBytesChart { size, rows }));
            }
            let rows = Timeline::rows(run, size).len();
            charts.push(AnyChart::Timeline(Timeline { size, label, rows }));
        }
        for size in super::data::load_sizes(run) {
            charts.push(AnyChart::Throughput(ThroughputLatency {
                size,
                target_p99_ns,
            }));
            if ClientsThroughput::applies(run, size) {
                charts.push(AnyChart::Clients(ClientsThroughput { size }));
            }
            if ResponseCdf::applies(run, size) {
                charts.push(AnyChart::Response(ResponseCdf { size }));
            }
        }
        charts.push(AnyChart::Amplification(Amplification));
        charts.push(AnyChart::Load(LoadThroughput));
        charts
    }

    pub fn file_stem(&self) -> String {
        each_chart!(self, c => c.file_stem())
    }

    pub fn caption(&self) -> String {
        each_chart!(self, c => c.caption())
    }

    pub fn section(&self) -> Section {
        each_chart!(self, c => c.section())
    }

    /// Draw to `<dir>/<stem>.svg` and `<dir>/<stem>.png`; returns the SVG path.
    pub fn render(&self, run: &RunResults, dir: &Path) -> Result<PathBuf> {
        each_chart!(self, c => render(c, run, dir))
    }
}

/// A chart with nothing to show says so in its area instead of drawing empty axes.
pub fn draw_empty<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    why: &str,
) -> Result<()> {
    let area = area.titled(title, (FONT, TITLE_SIZE)).map_err(plot_err)?;
    let (_, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        why.to_string(),
        (20, h as i32 / 2),
        (FONT, LABEL_SIZE + 2).into_font().color(&UNKNOWN),
    ))
    .map_err(plot_err)?;
    Ok(())
}

/// One engine's (or store's) line with its legend entry, dashed for the floor,
/// with a dot on every measured point when `markers`.
pub fn series_line<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    points: Vec<(f64, f64)>,
    color: RGBColor,
    label: &str,
    dashed: bool,
    markers: bool,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let style = color.stroke_width(2);
    let drawn = if dashed {
        chart.draw_series(DashedLineSeries::new(points.clone(), 8, 5, style))
    } else {
        chart.draw_series(LineSeries::new(points.clone(), style))
    };
    drawn
        .map_err(plot_err)?
        .label(label)
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], style));
    if markers {
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(plot_err)?;
    }
    Ok(())
}

/// The legend box, same look on every chart.
pub fn legend<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .configure_series_labels()
        .position(position)
        .label_font((FONT, LABEL_SIZE - 2))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(plot_err)
}

/// `1µs`, `64KiB`: axis labels.
pub fn ns_label(ns: &f64) -> String {
    crate::stats::format_ns(*ns)
}

pub fn bytes_label(bytes: &f64) -> String {
    crate::size::format_bytes(*bytes as u64)
}
