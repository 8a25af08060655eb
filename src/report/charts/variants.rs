//! The variants page's chart: at one size and cache state, each engine's p50 and p99
//! under each layout, workload or deployment, one row per (engine, variant), log
//! scale. Horizontal bars so every row's name is written level and whole beside it
//! (a deployment's layout runs to 70 characters; cut to 30 under upright bars, two
//! deployments read alike and their labels ran into each other); the figures and the
//! ratio to the engine's default in a column on the right.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Chart, FONT, LABEL_SIZE, Section, TITLE_SIZE, engine_color, plot_err};
use crate::report::variant_rows::VariantRow;
use crate::size::format_bytes;
use crate::stats::format_ns;
use crate::workload::steady::CacheState;

/// The most characters on one line of a row's name; a name takes two lines at most.
const LINE_CHARS: usize = 36;
/// Pixels a line of a row's name takes, and a row (two lines and the gap between rows).
const LINE_PX: i32 = 18;
const ROW_PX: u32 = 46;
/// The title and the x axis's labels and name.
const FRAME_PX: u32 = 130;
/// The figures' column on the right.
const FIGURES_PX: u32 = 200;

pub struct VariantLatencies {
    pub size: u64,
    pub cache: CacheState,
    /// Its rows, counted when made: its height depends on them.
    count: usize,
}

impl VariantLatencies {
    pub fn new(size: u64, cache: CacheState, rows: &[VariantRow]) -> Self {
        let mut chart = VariantLatencies {
            size,
            cache,
            count: 0,
        };
        chart.count = chart.rows(rows).len();
        chart
    }

    /// The rows it draws, top to bottom: each engine's variants at its size and cache
    /// state, its default first.
    pub fn rows<'a>(&self, rows: &'a [VariantRow]) -> Vec<&'a VariantRow> {
        let mut mine: Vec<&VariantRow> = rows
            .iter()
            .filter(|r| r.size_bytes == self.size && r.cache == self.cache)
            .collect();
        mine.sort_by_key(|r| (r.engine.name(), r.clients, !r.reference));
        mine
    }
}

impl Chart for VariantLatencies {
    type Input = [VariantRow];

    fn file_stem(&self) -> String {
        format!("variants-{}-{}", format_bytes(self.size), self.cache.name())
    }

    fn caption(&self) -> String {
        format!(
            "{}: each engine's p50 (filled) and p99 (outlined) under each variant, log scale; on the right the two and the p50 × its engine's default",
            self.file_stem()
        )
    }

    fn section(&self) -> Section {
        Section::Variants
    }

    fn height(&self) -> u32 {
        FRAME_PX + ROW_PX * self.count.max(1) as u32
    }

    fn draw<DB: DrawingBackend>(
        &self,
        rows: &[VariantRow],
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        draw_on(&self.rows(rows), self.size, self.cache, area)
    }
}

/// A layout's words, shorter: `uuidv7`, `page 16K`, `mmap 4GiB`.
fn short_layout(layout: &str) -> String {
    layout
        .replace("key ", "")
        .replace("page 16384", "page 16K")
        .replace("page 65536", "page 64K")
        .replace("storage ", "pg ")
        .replace("live dataset, no writer", "no writer")
}

/// A row's name in at most two lines of `LINE_CHARS`: the engine, then the variant
/// with its deployment's name first (what tells two deployments apart leads), cut
/// with "…" past two lines (the table below has it whole).
pub fn row_name(r: &VariantRow) -> Vec<String> {
    let layout = short_layout(&r.layout);
    let mut parts: Vec<&str> = layout.split(", ").collect();
    if let Some(at) = parts.iter().position(|p| p.starts_with("deployment ")) {
        let d = parts.remove(at);
        parts.insert(0, d.trim_start_matches("deployment "));
    }
    let mut text = format!("{}: {}", r.engine.name(), parts.join(", "));
    if r.clients > 1 {
        text.push_str(&format!(" ×{}", r.clients));
    }
    wrap(&text, LINE_CHARS, 2)
}

/// `text` in lines of at most `width` characters, broken at spaces, at most `lines`
/// of them (the last cut with "…" where more was left).
fn wrap(text: &str, width: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let fits = line.chars().count() + 1 + word.chars().count() <= width;
        if line.is_empty() || fits {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        } else {
            out.push(std::mem::take(&mut line));
            line.push_str(word);
        }
    }
    out.push(line);
    let cut = out.len() > lines;
    out.truncate(lines);
    for l in &mut out {
        if l.chars().count() > width {
            *l = l.chars().take(width - 1).collect();
            l.push('…');
        }
    }
    if cut && let Some(last) = out.last_mut() {
        if last.chars().count() >= width {
            *last = last.chars().take(width - 1).collect();
        }
        last.push('…');
    }
    out
}

fn draw_on<DB: DrawingBackend>(
    rows: &[&VariantRow],
    size: u64,
    cache: CacheState,
    area: &DrawingArea<DB, Shift>,
) -> Result<()> {
    let names: Vec<Vec<String>> = rows.iter().map(|r| row_name(r)).collect();
    let longest = names.iter().flatten().map(|l| l.chars().count()).max();
    // DejaVu Sans at 15 px: about 8.5 px a character.
    let names_px = (longest.unwrap_or(0) as u32 * 17 / 2 + 20).max(80);
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|r| [r.p50_ns, r.p99_ns])
        .filter(|v| *v > 0.0)
        .collect();
    let lo = values.iter().copied().fold(f64::MAX, f64::min).min(1e6) / 1.5;
    let hi = values.iter().copied().fold(0.0, f64::max).max(lo * 10.0) * 1.3;
    let n = rows.len().max(1);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "{} {}: each engine's p50 and p99 per variant",
                format_bytes(size),
                cache.name()
            ),
            (FONT, TITLE_SIZE),
        )
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(names_px)
        .right_y_label_area_size(FIGURES_PX)
        .build_cartesian_2d((lo..hi).log_scale(), -0.5f64..(n as f64 - 0.5))
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .y_label_formatter(&|_| String::new())
        // The axis's figures are written below (`latency_ticks`): plotters' own on a
        // log axis spanning less than a decade are 30, 40, ... 100 µs, some twice,
        // written over each other.
        .x_label_formatter(&|_| String::new())
        .x_desc("latency per fetch, log scale (p50 filled, p99 outlined)")
        .label_style((FONT, LABEL_SIZE))
        .draw()
        .map_err(plot_err)?;
    // Names and figures written by hand at each row's centre, level: one per row, so
    // they cannot run into each other (a row is taller than two lines).
    let base = area.get_base_pixel();
    let names_style = TextStyle::from((FONT, LABEL_SIZE).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Right, VPos::Center));
    let figures_style = TextStyle::from((FONT, LABEL_SIZE - 1).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, r) in rows.iter().enumerate() {
        // The first row on top.
        let y = (n - 1 - i) as f64;
        let color = engine_color(r.engine);
        chart
            .draw_series([
                Rectangle::new(
                    [(lo, y + 0.05), (r.p50_ns.max(lo), y + 0.36)],
                    color.filled(),
                ),
                Rectangle::new(
                    [(lo, y - 0.36), (r.p99_ns.max(lo), y - 0.05)],
                    color.stroke_width(2),
                ),
            ])
            .map_err(plot_err)?;
        let (left, mid) = chart.backend_coord(&(lo, y));
        let (right, _) = chart.backend_coord(&(hi, y));
        let (left, mid, right) = (left - base.0, mid - base.1, right - base.0);
        let lines = &names[i];
        for (k, line) in lines.iter().enumerate() {
            let dy = (2 * k as i32 + 1 - lines.len() as i32) * LINE_PX / 2;
            area.draw(&Text::new(
                line.clone(),
                (left - 8, mid + dy),
                names_style.clone(),
            ))
            .map_err(plot_err)?;
        }
        let ratio = match (r.reference, r.p50_ratio) {
            (true, _) => "default".to_string(),
            (false, Some(x)) => format!("×{x:.2}"),
            (false, None) => "no default".to_string(),
        };
        area.draw(&Text::new(
            format!("{} / {}  {ratio}", format_ns(r.p50_ns), format_ns(r.p99_ns)),
            (right + 10, mid),
            figures_style.clone(),
        ))
        .map_err(plot_err)?;
    }
    let (plot_left, bottom) = chart.backend_coord(&(lo, -0.5));
    let (plot_right, _) = chart.backend_coord(&(hi, -0.5));
    let ticks_style = TextStyle::from((FONT, LABEL_SIZE).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for value in latency_ticks(lo, hi, f64::from(plot_right - plot_left)) {
        let (x, _) = chart.backend_coord(&(value, -0.5));
        area.draw(&Text::new(
            format_ns(value),
            (x - base.0, bottom - base.1 + 6),
            ticks_style.clone(),
        ))
        .map_err(plot_err)?;
    }
    Ok(())
}

/// The figures written under a log axis from `lo` to `hi` drawn `px` wide: 1, 2 and 5
/// of each decade where a decade is wide, 1 where it is not, every other decade (or
/// fewer) where even that would crowd; never two closer than a label's width.
fn latency_ticks(lo: f64, hi: f64, px: f64) -> Vec<f64> {
    // "100.0µs" at 15 px: about 60 px, and a gap.
    const LABEL_PX: f64 = 75.0;
    let decades = (hi / lo).log10().max(1e-9);
    let per_decade = px / decades;
    // 1 to 2 and 5 to 10 are the narrowest steps of 1, 2, 5: 0.3 of a decade.
    let mantissas: &[f64] = if per_decade * 2f64.log10() >= LABEL_PX {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let step = (LABEL_PX / per_decade).ceil().max(1.0) as i32;
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    (first..=last)
        .filter(|e| e.rem_euclid(step) == 0)
        .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
        .filter(|v| (lo..=hi).contains(v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{latency_ticks, wrap};

    #[test]
    fn the_axis_figures_are_never_closer_than_a_label() {
        for (lo, hi, px) in [
            (25e3, 120e3, 600.0),
            (1e3, 1e8, 400.0),
            (2e3, 9e3, 650.0),
            (1e2, 1e12, 300.0),
        ] {
            let ticks = latency_ticks(lo, hi, px);
            let at = |v: f64| px * (v / lo).log10() / (hi / lo).log10();
            assert!(
                ticks.windows(2).all(|w| at(w[1]) - at(w[0]) >= 75.0),
                "{lo}..{hi} over {px} px: {ticks:?}"
            );
        }
        // Less than a decade wide: 1, 2 and 5 where they fall.
        assert_eq!(latency_ticks(25e3, 120e3, 600.0), [50e3, 100e3]);
        // Ten decades in 300 px: every third decade.
        assert_eq!(latency_ticks(1e2, 1e12, 300.0), [1e3, 1e6, 1e9, 1e12]);
    }

    #[test]
    fn a_name_wraps_at_spaces_into_two_lines_at_most_and_says_where_it_was_cut() {
        assert_eq!(wrap("sqlite-raw: default", 36, 2), ["sqlite-raw: default"]);
        let two = wrap(
            "postgres-raw: aws-gp3-cross-az, disk cap gp3, disk latency 1ms",
            36,
            2,
        );
        assert_eq!(
            two,
            [
                "postgres-raw: aws-gp3-cross-az, disk",
                "cap gp3, disk latency 1ms"
            ]
        );
        let cut = wrap(
            "postgres-raw: aws-gp3-cross-az, disk cap gp3, disk latency 1ms, network rtt 1ms, readahead 128",
            36,
            2,
        );
        assert_eq!(cut.len(), 2);
        assert!(cut.iter().all(|l| l.chars().count() <= 36), "{cut:?}");
        assert!(cut[1].ends_with('…'), "{cut:?}");
        let long_word = wrap(&"x".repeat(50), 36, 2);
        assert_eq!(long_word, [format!("{}…", "x".repeat(35))]);
    }
}
