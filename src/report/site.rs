//! `blobrace site`: one static page from many runs (`page::site`). Runs are found in
//! the folders given (a run directory, or a results directory holding runs); the page
//! links each figure to its run's own report by a relative path, so the folder that
//! holds both can be published as it is.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};
use askama::Template;

use super::page::site::{RunRef, SitePage, SiteRow, SiteRun, SiteScore};
use crate::atomic_file::write_atomic;
use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::size::format_bytes;
use crate::stats::format_ns;

/// What was written.
pub struct Site {
    pub index: PathBuf,
    pub runs: usize,
    pub rows: usize,
}

/// Every run under `dirs`: a folder with a results.json is a run; any other, the runs
/// one level below it. A results.json that cannot be read is said and passed over.
pub fn find_runs(dirs: &[PathBuf]) -> Result<Vec<(PathBuf, RunResults)>> {
    let mut found: Vec<(PathBuf, RunResults)> = Vec::new();
    let mut seen_dirs = std::collections::HashSet::new();
    for dir in dirs {
        let candidates: Vec<PathBuf> = if dir.join("results.json").is_file() {
            vec![dir.clone()]
        } else {
            let mut below: Vec<PathBuf> = std::fs::read_dir(dir)
                .with_context(|| {
                    format!(
                        "cannot list {}: give run directories or results directories",
                        dir.display()
                    )
                })?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join("results.json").is_file())
                .collect();
            below.sort();
            below
        };
        for run_dir in candidates {
            // One run given twice (a run directory and its results directory, a path
            // and a link to it, a copy) is one run on the page, not two.
            let real = crate::machine::canonical(&run_dir);
            if !seen_dirs.insert(real) {
                continue;
            }
            match super::load_run(&run_dir) {
                Ok(run) if run.merged_from.is_empty() || !run.results.is_empty() => {
                    if let Some((first, _)) = found
                        .iter()
                        .find(|(_, r): &&(PathBuf, RunResults)| r.run_id == run.run_id)
                    {
                        say!(
                            "site: {} is run {} again (as {}): counted once",
                            run_dir.display(),
                            run.run_id,
                            first.display()
                        );
                        continue;
                    }
                    found.push((run_dir, run))
                }
                Ok(_) => {}
                Err(e) => say!("site: {e:#}; left out"),
            }
        }
    }
    if found.is_empty() {
        bail!(
            "no run found in {}: give run directories (holding results.json) or the results directories that hold them",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(found)
}

/// Write the page of `runs` to `out/index.html`.
pub fn write(runs: &[(PathBuf, RunResults)], out: &Path) -> Result<Site> {
    refuse_output_over_another(out)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let out_abs = std::path::absolute(out)?;
    let floor = EngineKind::floor();
    let (mut site_runs, mut rows, mut scores) = (Vec::new(), Vec::new(), Vec::new());
    for (dir, run) in runs {
        let run_ref = RunRef {
            id: run.run_id.clone(),
            href: relative(&out_abs, &std::path::absolute(dir)?.join("index.html")),
            machine: format!(
                "{} ({}, {} CPUs)",
                run.machine.hostname, run.machine.cpu_model, run.machine.logical_cpus
            ),
            deployment: deployment_label(run),
            date: run
                .started_at
                .get(..10)
                .unwrap_or(&run.started_at)
                .to_string(),
        };
        let mut engines: Vec<&str> = run.results.iter().map(|r| r.engine.name()).collect();
        engines.sort();
        engines.dedup();
        site_runs.push(SiteRun {
            run: run_ref.clone(),
            workload: workload_label(run),
            cap: format!(
                "memory {}, CPU {}",
                run.cap.memory_label(),
                run.cap.cpu_label()
            ),
            engines: engines.join(", "),
            state: if run.complete {
                "complete".into()
            } else if run.finished_at.is_some() {
                "ended before its last cell".into()
            } else {
                "not ended (running, or killed)".into()
            },
            failures: run
                .failures
                .iter()
                .map(|f| {
                    format!(
                        "{} {} {}: {}",
                        crate::serde_name(&f.stage),
                        f.who,
                        f.size,
                        f.why
                    )
                })
                .collect(),
        });
        // (engine, cache) → the ratios to the floor at each size, for the score.
        let mut ratios: std::collections::BTreeMap<(EngineKind, &'static str), Vec<f64>> =
            Default::default();
        for r in &run.results {
            let floor_of = run.results.iter().find(|f| {
                f.engine == floor && f.size_bytes == r.size_bytes && f.scenario == r.scenario
            });
            let l = &r.measured.latency;
            let ratio = |mine: u64, theirs: Option<u64>| -> Option<f64> {
                let theirs = theirs.filter(|&t| t > 0)?;
                Some(mine as f64 / theirs as f64)
            };
            let p50_ratio = ratio(l.p50_ns, floor_of.map(|f| f.measured.latency.p50_ns));
            let p99_ratio = ratio(l.p99_ns, floor_of.map(|f| f.measured.latency.p99_ns));
            let cache = r.scenario.cache.name();
            if r.engine != floor
                && let Some(x) = p50_ratio
            {
                ratios.entry((r.engine, cache)).or_default().push(x);
            }
            let show = |x: Option<f64>| {
                x.map_or_else(|| "no floor in its run".into(), |x| format!("{x:.2}"))
            };
            rows.push(SiteRow {
                run: run_ref.clone(),
                engine: r.engine.name(),
                size: format_bytes(r.size_bytes),
                cache,
                p50: format_ns(l.p50_ns as f64),
                p99: format_ns(l.p99_ns as f64),
                p50_floor: show(p50_ratio),
                p99_floor: show(p99_ratio),
            });
        }
        for ((engine, cache), xs) in ratios {
            let geomean = (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp();
            // A failure names the store (a load, a drop) or the engine's cell
            // ("sqlite-raw.cold"): either leaves cells out of this score.
            let failed = run.failures.iter().any(|f| {
                let cell = f.who.split(['.', ' ']).next().unwrap_or_default();
                cell == engine.name() || f.who == engine.store().name()
            });
            scores.push((
                geomean,
                SiteScore {
                    run: run_ref.clone(),
                    engine: engine.name(),
                    cache,
                    score: format!("{geomean:.2}"),
                    sizes: xs.len(),
                    bar: 0,
                    shade: "",
                    failed,
                },
            ));
        }
    }
    // Per cache state, the best first: the bars read as a ranking, as ClickBench's do.
    scores.sort_by(|(a, sa), (b, sb)| {
        sa.cache
            .cmp(sb.cache)
            .then(a.total_cmp(b))
            .then(sa.engine.cmp(sb.engine))
    });
    let (values, mut scores): (Vec<f64>, Vec<SiteScore>) = scores.into_iter().unzip();
    super::page::site::bars(&mut scores, &values);
    let distinct = |f: fn(&SiteRun) -> &String| {
        let mut v: Vec<String> = site_runs.iter().map(|r| f(r).clone()).collect();
        v.sort();
        v.dedup();
        v
    };
    let page = SitePage {
        machines: distinct(|r| &r.run.machine),
        deployments: distinct(|r| &r.run.deployment),
        dates: distinct(|r| &r.run.date),
        runs: site_runs,
        scores,
        rows,
    };
    let (n_runs, n_rows) = (page.runs.len(), page.rows.len());
    let index = out.join("index.html");
    write_atomic(&index, page.render()?.as_bytes())?;
    Ok(Site {
        index,
        runs: n_runs,
        rows: n_rows,
    })
}

/// What marks a page as the site's own (its template's generator tag): only such a page
/// is written over.
const SITE_MARK: &str = r#"<meta name=generator content="blobrace site">"#;

/// `out` holding another command's output is refused before anything is written: a
/// run's directory (its results.json and report), or an index.html the site did not
/// write (a run's report, a results directory's index). `--out` at a run's directory
/// wrote the site over that run's report page.
fn refuse_output_over_another(out: &Path) -> Result<(), crate::error::InputError> {
    let refuse = |why: String| crate::error::InputError::Value {
        what: "--out",
        input: out.display().to_string(),
        why: format!(
            "{why}: choose a directory of its own for the site (a new one, or one an earlier `blobrace site` wrote)"
        ),
    };
    if out.join("results.json").exists() {
        return Err(refuse(
            "it is a run's directory, and the site's index.html would replace that run's report"
                .into(),
        ));
    }
    let index = out.join("index.html");
    if !index.exists() {
        return Ok(());
    }
    // A site page written before the mark still carries its title.
    let ours = std::fs::read(&index).is_ok_and(|page| {
        let page = String::from_utf8_lossy(&page);
        page.contains(SITE_MARK) || page.contains("<title>blobrace: runs side by side</title>")
    });
    if !ours {
        return Err(refuse(format!(
            "{} is a page `blobrace site` did not write (a report, a results directory's index), or one it cannot read, and would be replaced",
            index.display()
        )));
    }
    Ok(())
}

/// The dataset and how it was read, where not the default.
fn workload_label(run: &RunResults) -> String {
    let mut parts: Vec<String> = run
        .config
        .size_mix
        .iter()
        .map(|m| format!("mix {}", m.get().canonical()))
        .collect();
    parts.extend(run.config.workload());
    if parts.is_empty() {
        "size classes, uniform reads".into()
    } else {
        parts.join(", ")
    }
}

/// "this machine's disk", or the deployment it ran as (named, or its parts).
fn deployment_label(run: &RunResults) -> String {
    let c = &run.config;
    if let Some(d) = &c.deployment {
        return d.name.clone();
    }
    let mut parts = Vec::new();
    if let Some(rtt) = c.network_rtt {
        parts.push(format!("network {rtt}"));
    }
    if let Some(latency) = c.disk_latency {
        parts.push(format!("disk latency {latency}"));
    }
    if let Some(disk) = &c.disk_cap {
        parts.push(format!("disk cap {}", disk.asked));
    }
    if c.readahead_explicit {
        parts.push(format!("readahead {}", c.readahead));
    }
    if parts.is_empty() {
        "the machine's own disk".into()
    } else {
        parts.join(", ")
    }
}

/// `to` relative to the folder `from` (both absolute): "../results/<id>/index.html".
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".into(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::relative;
    use std::path::Path;

    #[test]
    fn a_runs_report_is_linked_relative_to_the_page() {
        assert_eq!(
            relative(Path::new("/w/site"), Path::new("/w/results/r1/index.html")),
            "../results/r1/index.html"
        );
        assert_eq!(
            relative(Path::new("/w"), Path::new("/w/results/r1/index.html")),
            "results/r1/index.html"
        );
    }
}
