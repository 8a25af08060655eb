//! The page of `blobrace site` (`templates/report/site.html`): many runs (machines,
//! deployments, dates) on one static page. Each engine's p50 and p99 per size beside the
//! floor of its own run, a score per run and engine normalised by that floor
//! (ClickBench's model: the geometric mean of the ratios, lower is better), filters by
//! machine, deployment and date, every run's failures, and each figure linked to its
//! run's own report.

use askama::Template;

/// A run as every row of it names it, and is filtered by.
#[derive(Clone)]
pub struct RunRef {
    pub id: String,
    /// Its report, relative to the page.
    pub href: String,
    pub machine: String,
    pub deployment: String,
    pub date: String,
}

pub struct SiteRun {
    pub run: RunRef,
    /// The dataset and how it was read, where not the default (a size mix, zipfian reads).
    pub workload: String,
    pub cap: String,
    pub engines: String,
    /// "complete", or how far it got.
    pub state: String,
    pub failures: Vec<String>,
}

pub struct SiteRow {
    pub run: RunRef,
    pub engine: &'static str,
    pub size: String,
    pub cache: &'static str,
    pub p50: String,
    pub p99: String,
    /// p50 ÷ the floor's p50 at the same size and cache in the same run.
    pub p50_floor: String,
    pub p99_floor: String,
}

pub struct SiteScore {
    pub run: RunRef,
    pub engine: &'static str,
    pub cache: &'static str,
    /// The geometric mean of p50 ÷ floor over the sizes both measured.
    pub score: String,
    pub sizes: usize,
    /// Its bar's length, in percent of the longest (`bars`).
    pub bar: u32,
    /// How far from the disk it is, for the bar's colour: `near` (within 1.5x of the
    /// floor), `mid` (within 4x), `far`.
    pub shade: &'static str,
    /// The run recorded a failure of this engine: its score leaves those cells out.
    pub failed: bool,
}

/// Each score's bar: on a log scale from the best score to the worst (ratios span
/// decades; a linear bar would flatten all but the slowest), never under 3%.
pub fn bars(scores: &mut [SiteScore], values: &[f64]) {
    let lo = values.iter().copied().fold(f64::MAX, f64::min).min(1.0);
    let hi = values.iter().copied().fold(f64::MIN, f64::max);
    for (s, &v) in scores.iter_mut().zip(values) {
        let share = if hi > lo {
            (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            1.0
        };
        s.bar = (3.0 + 97.0 * share).round().clamp(3.0, 100.0) as u32;
        s.shade = match v {
            v if v <= 1.5 => "near",
            v if v <= 4.0 => "mid",
            _ => "far",
        };
    }
}

#[derive(Template)]
#[template(path = "report/site.html")]
pub struct SitePage {
    pub runs: Vec<SiteRun>,
    pub scores: Vec<SiteScore>,
    pub rows: Vec<SiteRow>,
    pub machines: Vec<String>,
    pub deployments: Vec<String>,
    pub dates: Vec<String>,
}
