//! The commands over stored runs: `report` (one run, optionally beside a baseline),
//! `merge` (runs made apart as one) and `variants` (layouts side by side).

use anyhow::{Context, Result};

use super::cli::{MergeArgs, ReportArgs, VariantsArgs};
use crate::records::results::RunResults;

pub(super) fn report(args: ReportArgs) -> Result<()> {
    use crate::report::{self, ReportOptions};
    let noise = args.noise;
    let run_dir = report::run_dir(&args.results_dir, args.run.as_deref())?;
    let run = report::load_run(&run_dir)?;
    let target_p99 = args.target_p99.unwrap_or(run.config.target_p99);
    let baseline = args
        .baseline
        .as_deref()
        .map(|id| report::load_run(&report::run_dir(&args.results_dir, Some(id))?))
        .transpose()?;
    let options = ReportOptions { target_p99, noise };
    // One comparison per cache state, made once: its table here, its section on
    // that state's page.
    let comparisons: Vec<report::compare::Comparison> = match &baseline {
        Some(baseline) => run
            .caches()
            .into_iter()
            .map(|cache| report::compare::Comparison::of(baseline, &run, cache, noise))
            .collect(),
        None => Vec::new(),
    };
    for comparison in &comparisons {
        crate::say::show_text(&comparison.table());
    }
    let rendered = report::render_run(&run_dir, &run, &comparisons, &options)
        .with_context(|| {
            format!(
                "the report of {} is not finished (its results are untouched, and each file is whole or not written): fix the cause below and run this command again",
                run_dir.display()
            )
        })?;
    say!("{}", rendered.line());
    Ok(())
}

pub(super) fn merge(args: MergeArgs) -> Result<()> {
    use crate::records::merge;
    use crate::report;
    let runs = merge::read_runs(&args.runs, &args.results_dir)?;
    let merged = merge::merge(runs, &args.results_dir)?;
    let dir = merged.write()?;
    for (id, cells) in merge::cells_by_run(&merged) {
        say!("merged: {cells} one-client result(s) from run {id}");
    }
    let options = report::ReportOptions {
        target_p99: merged.config.target_p99,
        noise: 0.10,
    };
    let rendered = report::render(&dir, &options)?;
    say!("{}", rendered.line());
    Ok(())
}

pub(super) fn variants(args: VariantsArgs) -> Result<()> {
    use crate::report;
    let runs = read_runs(&args.runs, &args.results_dir)?;
    let dir = args.results_dir.join(format!(
        "variants-{}",
        crate::records::results::new_run_id()
    ));
    let written = report::variants::write(&runs, &dir)?;
    say!(
        "variants: {} ({} rows, {} charts)",
        written.index.display(),
        written.rows,
        written.charts
    );
    Ok(())
}

/// Runs named by id (a directory under `results_dir`) or by their directory.
pub(super) fn read_runs(ids: &[String], results_dir: &std::path::Path) -> Result<Vec<RunResults>> {
    use crate::report;
    ids.iter()
        .map(|id| {
            let dir = RunResults::dir_named(id, results_dir);
            // report::run_dir again for its message: the runs there are named.
            let dir = if dir.is_dir() {
                dir
            } else {
                report::run_dir(results_dir, Some(id))?
            };
            report::load_run(&dir)
        })
        .collect()
}
