//! The front page's tables written from results, never typed. README's answer and the
//! tables of docs/seed.md, docs/deployments.md and docs/content.md sit between two
//! markers, the first naming what the table shows and the results it is made from:
//!
//! ```text
//! <!-- table verdict results=results/ID.json cache=steady target=50ms p50-at=64KiB -->
//! (written by `blobrace tables`)
//! <!-- /table -->
//! ```
//!
//! `blobrace tables` rewrites every such table from its results; `blobrace tables
//! --check` fails naming each table that no longer matches (a test runs it over the
//! repository's pages), so a figure on the front page is one a run measured, and a
//! change to how a figure is judged shows on the page in the same commit. Results paths
//! are relative to the page that names them.

pub mod kinds;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::records::results::RunResults;

const OPEN: &str = "<!-- table ";
const CLOSE: &str = "<!-- /table -->";

/// The pages of this repository whose tables come from results.
pub const PAGES: &[&str] = &[
    "README.md",
    "docs/seed.md",
    "docs/deployments.md",
    "docs/content.md",
];

/// One table's marker: its kind and its `key=value` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub kind: String,
    pub settings: BTreeMap<String, String>,
}

impl Marker {
    /// `<!-- table verdict results=a.json cache=steady -->`, trimmed; None for any
    /// other line.
    fn parse(line: &str) -> Option<Result<Marker, String>> {
        let inner = line.trim().strip_prefix(OPEN)?.strip_suffix("-->")?;
        let mut words = inner.split_whitespace();
        let Some(kind) = words.next() else {
            return Some(Err("a table marker names no kind".into()));
        };
        let mut settings = BTreeMap::new();
        for word in words {
            let Some((key, value)) = word.split_once('=') else {
                return Some(Err(format!("`{word}` is not key=value")));
            };
            settings.insert(key.to_string(), value.to_string());
        }
        Some(Ok(Marker {
            kind: kind.to_string(),
            settings,
        }))
    }
}

/// Results files read once however many tables name them.
#[derive(Default)]
pub struct RunsRead(HashMap<PathBuf, RunResults>);

impl RunsRead {
    fn get(&mut self, path: &Path) -> Result<&RunResults> {
        if !self.0.contains_key(path) {
            if !path.exists() {
                bail!(
                    "{} does not exist: `blobrace tables --add-run RUN` copies a run's results there",
                    path.display()
                );
            }
            let run = RunResults::read(path)?;
            self.0.insert(path.to_path_buf(), run);
        }
        Ok(&self.0[path])
    }
}

/// A page's text with every table rewritten from its results. `dir` is the page's
/// folder (results paths are relative to it); `name` is said in errors.
pub fn regenerate(text: &str, dir: &Path, name: &str, runs: &mut RunsRead) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split_inclusive('\n').enumerate();
    while let Some((i, line)) = lines.next() {
        out.push_str(line);
        let Some(marker) = Marker::parse(line) else {
            continue;
        };
        let at = format!("{name}:{}", i + 1);
        let marker = marker.map_err(|why| anyhow::anyhow!("{at}: {why}"))?;
        // The old table is dropped up to its closing marker.
        if !lines.any(|(_, l)| l.trim() == CLOSE) {
            bail!("{at}: the table has no closing `{CLOSE}`");
        }
        let mut read = Vec::new();
        for path in kinds::results_paths(&marker).with_context(|| at.clone())? {
            let run = runs.get(&dir.join(&path)).with_context(|| at.clone())?;
            read.push((path, run.clone()));
        }
        let table = kinds::render(&marker, &read).with_context(|| at.clone())?;
        for row in table {
            out.push_str(&row);
            out.push('\n');
        }
        out.push_str(CLOSE);
        out.push('\n');
    }
    Ok(out)
}

/// The tables of a page that differ from what their results make: one line each, or
/// none.
pub fn stale(text: &str, regenerated: &str, name: &str) -> Vec<String> {
    let tables = |t: &str| -> Vec<(usize, String)> {
        let mut found = Vec::new();
        let mut current: Option<(usize, String)> = None;
        for (i, line) in t.lines().enumerate() {
            if let Some(table) = current.as_mut() {
                table.1.push_str(line);
                table.1.push('\n');
                if line.trim() == CLOSE {
                    found.extend(current.take());
                }
            } else if Marker::parse(line).is_some() {
                current = Some((i + 1, format!("{line}\n")));
            }
        }
        found
    };
    let (now, then) = (tables(text), tables(regenerated));
    now.iter()
        .zip(&then)
        .filter(|(a, b)| a.1 != b.1)
        .map(|((line, _), _)| {
            format!("{name}:{line}: the table no longer matches its results: run `blobrace tables`")
        })
        .collect()
}

/// Every page's tables rewritten (`check` false) or checked (`check` true) under
/// `root`; the lines that name stale tables (empty when all match).
pub fn tables(root: &Path, pages: &[String], check: bool) -> Result<Vec<String>> {
    let mut runs = RunsRead::default();
    let mut stale_tables = Vec::new();
    for page in pages {
        let path = root.join(page);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let dir = path.parent().unwrap_or(root);
        let regenerated = regenerate(&text, dir, page, &mut runs)?;
        if regenerated == text {
            continue;
        }
        if check {
            stale_tables.extend(stale(&text, &regenerated, page));
        } else {
            crate::atomic_file::write_atomic(&path, regenerated.as_bytes())?;
            stale_tables.push(format!("{page}: tables rewritten"));
        }
    }
    Ok(stale_tables)
}

/// Copy a run's results, without their histograms (`RunResults::slim`), to
/// `<dir>/<run id>.json`, for the pages' markers to name.
pub fn add_run(results: &Path, dir: &Path) -> Result<PathBuf> {
    let mut run = RunResults::read(results)?;
    if !run.complete {
        bail!(
            "{} is of a run that did not finish: a page's figures come from a whole run",
            results.display()
        );
    }
    run.slim();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let out = dir.join(format!("{}.json", run.run_id));
    crate::atomic_file::write_atomic(&out, &serde_json::to_vec_pretty(&run)?)?;
    Ok(out)
}

#[cfg(test)]
mod tests;
