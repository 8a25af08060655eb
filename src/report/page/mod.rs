//! The report page: verdict first, then charts, tables and the environment, one
//! file per section, each a function of the run that returns its HTML. Self-contained:
//! inline CSS, charts as files beside it, no network. Charts land in the section they
//! declare (`Chart::section`).

mod baseline;
mod environment;
mod load;
mod loading;
mod markup;
mod memory;
mod profiles;
mod steady;
mod verdict;
mod warnings;

use std::fmt::Write as _;
use std::path::Path;

use crate::report::ReportOptions;
use crate::report::charts::{AnyChart, Section};
use crate::report::compare::Comparison;
use crate::report::data::sizes;
use crate::results::RunResults;
use crate::size::format_bytes;
use crate::steady::CacheState;
use crate::summary::rows;

use baseline::against_baseline;
use environment::environment;
use load::{load_section, saturation_section};
use loading::loads;
pub(crate) use markup::esc;
use markup::{figures, table};
use profiles::profiles_section;
use steady::{repeats_table, steady_table};
use verdict::{header, scenario_line, sustainable_verdict, verdict};
use warnings::warnings_box;

// `td.w` may break anywhere: image digests and container paths are long unbroken
// words that would otherwise widen the environment table past the page.
pub(super) const CSS: &str = "body{font-family:DejaVu Sans,Verdana,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}td.w{overflow-wrap:anywhere}.warn{background:#fff3cd;border:2px solid #d39e00;padding:.8em 1.2em;margin:1em 0}
.warn li{margin:.3em 0}.bad{color:#b00020;font-weight:bold}.good{color:#1b7f3b;font-weight:bold}
figure{margin:1.5em 0}figure img{width:100%;border:1px solid #ddd}figcaption{font-size:.9em;color:#555}
code{background:#f3f3f3;padding:.1em .3em}.muted{color:#777}";

/// Where a page sits in its run: `page` draws one cache state's view of it.
pub struct PageContext<'a> {
    /// The whole run: every cache state and repeat.
    pub full: &'a RunResults,
    pub cache: CacheState,
    /// The cache state of the run directory's own page.
    pub primary: CacheState,
    /// From this page's directory to the run directory: "" or "../".
    pub to_run_dir: &'a str,
}

pub fn page(
    run: &RunResults,
    run_dir: &Path,
    charts: &[AnyChart],
    comparison: Option<&Comparison>,
    options: &ReportOptions,
    context: &PageContext,
) -> String {
    let rows = rows(run);
    let mut p = header(run);
    p.push_str(&scenario_line(context));
    p.push_str(&verdict(run, options));
    p.push_str(&sustainable_verdict(run, options));
    p.push_str(&warnings_box(run));
    if let Some(c) = comparison {
        p.push_str(&against_baseline(c));
    }
    p.push_str("<h2 id=headline>Latency against blob size</h2>\n");
    p.push_str(&figures(charts, Section::Headline));
    for size in sizes(run) {
        let label = format_bytes(size);
        let _ = writeln!(p, "<h2 id=size-{label}>{label} blobs</h2>");
        p.push_str(&figures(charts, Section::Size(size)));
        p.push_str(&table(rows.iter().filter(|r| r.size_bytes == size)));
    }
    p.push_str(&load_section(run, charts));
    p.push_str(&saturation_section(run));
    p.push_str("<h2 id=disk>Disk reads and loading</h2>\n");
    p.push_str(&figures(charts, Section::Disk));
    p.push_str(&loads(run));
    p.push_str(&steady_table(run));
    p.push_str(&profiles_section(run, context));
    p.push_str(&repeats_table(context));
    p.push_str("<h2 id=table>All measurements</h2>\n");
    p.push_str(&table(&rows));
    let _ = writeln!(
        p,
        "<p>Also as <a href=\"{to}summary.csv\">summary.csv</a> and <a href=\"{to}summary.json\">summary.json</a> (every cache state and repeat); everything in <a href=\"{to}results.json\">results.json</a>.</p>",
        to = context.to_run_dir
    );
    p.push_str(&environment(run, run_dir));
    p.push_str(&memory::section(run));
    // For people and for the report test: did every chart load and draw?
    p.push_str("<script>window.addEventListener('load',()=>{const imgs=[...document.querySelectorAll('img.chart')];const ok=imgs.filter(i=>i.complete&&i.naturalWidth>0);document.body.dataset.chartsLoaded=ok.length+'/'+imgs.length;document.body.dataset.chartBoxes=JSON.stringify(imgs.map(i=>{const r=i.getBoundingClientRect();return[Math.round(r.left),Math.round(r.top+window.scrollY),Math.round(r.width),Math.round(r.height)]}));});</script>\n</body></html>\n");
    p
}
