//! The page of `blobrace variants` (how should I store my blobs?): the same engines
//! under different dataset layouts side by side (`variant_rows`), per engine and size,
//! each layout's p50 and p99, load MB/s and bytes on disk, and each as a ratio to the
//! engine's default layout; a `VariantLatencies` chart per size and cache state.
//!
//! A layout is a dataset of its own, so each is one run (`scripts/variants.sh` runs
//! them back to back); `blobrace variants RUN...` reads their results. The disk drifts
//! between runs, so each result also shows its p50 ÷ the floor of its own run where
//! that run measured the floor (the floor reads by offset: no layout changes it, and a
//! keyed run's floor reads the same file as any other's).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::charts::{VariantLatencies, render};
use super::page;
use super::variant_rows::rows;
use crate::atomic_file::write_atomic;
use crate::records::results::RunResults;
use crate::workload::steady::CacheState;

/// What `write` produced.
pub struct Written {
    pub index: PathBuf,
    pub rows: usize,
    pub charts: usize,
}

/// The variants page of `runs` in `dir`: index.html, variants.json, one chart per
/// size and cache state.
pub fn write(runs: &[RunResults], dir: &Path) -> Result<Written> {
    if runs.len() < 2 {
        bail!(
            "variants compares layouts measured in separate runs: give at least two run ids (one per layout; scripts/variants.sh runs them)"
        );
    }
    // Each row is one layout: a second run of a layout would be left out unseen (two
    // runs whose p99s differed tenfold showed as one).
    for (i, a) in runs.iter().enumerate() {
        if let Some(b) = runs[..i]
            .iter()
            .find(|b| b.config.layout_label() == a.config.layout_label())
        {
            // A merge advised only where merge takes them (`why_not_one_run`).
            let merge = match crate::records::merge::why_not_one_run(b, a) {
                None => ", or `blobrace merge` them into one run and give that".to_string(),
                Some(why) => format!(" (they cannot be merged into one: {why})"),
            };
            bail!(
                "runs {} and {} measured the same layout ({}): variants shows one run per layout. Compare the two with `blobrace report --run {} --baseline {}`{merge}",
                b.run_id,
                a.run_id,
                a.config.layout_label(),
                a.run_id,
                b.run_id
            );
        }
    }
    let rows = rows(runs);
    if rows.is_empty() {
        bail!(
            "none of these runs measured an engine with a layout choice (SQLite and the servers have them; fs and the floor do not)"
        );
    }
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create the variants page's directory {}: give a --results-dir you can write in",
            dir.display()
        )
    })?;
    write_atomic(
        &dir.join("variants.json"),
        &serde_json::to_vec_pretty(&rows)?,
    )?;
    let mut charts = Vec::new();
    let groups: Vec<(u64, CacheState)> = {
        let mut g: Vec<_> = rows.iter().map(|r| (r.size_bytes, r.cache)).collect();
        g.sort();
        g.dedup();
        g
    };
    for (size, cache) in groups {
        let chart = VariantLatencies::new(size, cache, &rows);
        render(&chart, &rows, dir)?;
        charts.push(chart);
    }
    let index = dir.join("index.html");
    write_atomic(&index, page::variants(runs, &rows, &charts)?.as_bytes())?;
    Ok(Written {
        index,
        rows: rows.len(),
        charts: charts.len(),
    })
}
