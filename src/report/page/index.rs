//! The results directory's entry points: `latest.html`, which sends the browser to
//! the newest report, and `index.html`, which lists them all
//! (`templates/report/latest.html`, `reports.html`).

use askama::Template;

#[derive(Template)]
#[template(path = "report/latest.html")]
struct Latest<'a> {
    latest: &'a str,
}

#[derive(Template)]
#[template(path = "report/reports.html")]
struct Reports<'a> {
    /// Run ids, newest first.
    runs: &'a [&'a str],
}

/// A page that redirects to the report of run `latest`.
pub fn latest(latest: &str) -> anyhow::Result<String> {
    Ok(Latest { latest }.render()?)
}

/// A page listing the reports of `runs` (newest first).
pub fn reports(runs: &[&str]) -> anyhow::Result<String> {
    Ok(Reports { runs }.render()?)
}
