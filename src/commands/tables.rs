//! `blobrace tables`: the front page's tables written from results, or checked against
//! them (`report::front_page`), and a run's results kept for the pages to cite.

use anyhow::{Result, bail};

use crate::report::front_page;

#[derive(clap::Args)]
pub struct TablesArgs {
    /// Pages whose marked tables to write, relative to --root. Default: README.md,
    /// docs/seed.md, docs/deployments.md, docs/content.md.
    pub pages: Vec<String>,
    /// Write nothing; exit 1 naming each table that no longer matches its results
    /// (what the tests run).
    #[arg(long)]
    pub check: bool,
    /// Keep a finished run's results for the pages (its id under --results-dir, or its
    /// directory): copied without their histograms to `<root>/docs/results/<id>.json`,
    /// which a marker's `results=` names. The tables are then written as usual.
    #[arg(long, value_name = "RUN")]
    pub add_run: Vec<String>,
    /// The repository the pages are in.
    #[arg(long, default_value = ".")]
    pub root: std::path::PathBuf,
    /// Where runs are stored (for --add-run).
    #[arg(long, env = "BLOBRACE_RESULTS_DIR", default_value = "charts")]
    pub results_dir: std::path::PathBuf,
}

pub fn tables(args: TablesArgs) -> Result<()> {
    for run in &args.add_run {
        let dir = crate::records::results::RunResults::dir_named(run, &args.results_dir);
        let kept = front_page::add_run(&dir.join("results.json"), &args.root.join("docs/results"))?;
        say!("tables: kept {}", kept.display());
    }
    let pages: Vec<String> = match args.pages.is_empty() {
        true => front_page::PAGES.iter().map(|p| p.to_string()).collect(),
        false => args.pages,
    };
    let said = front_page::tables(&args.root, &pages, args.check)?;
    if args.check && !said.is_empty() {
        bail!("{} table(s) stale:\n  {}", said.len(), said.join("\n  "));
    }
    match said.is_empty() {
        true => say!("tables: every table matches its results"),
        false => say!("{}", said.join("\n")),
    }
    Ok(())
}
