//! `blobrace merge`: one run from runs made on different machines or at different
//! times (the shares of a split run, `--share i/n`). Cells measured in one run only
//! are kept as they were measured. A cell measured in more than one run (the same
//! engine, size, cache state and repeat) is one cell of all their fetches: its
//! histograms added (`stats::hdr`), its percentiles read from the sum, its windows
//! one after another. Such a cell must have been measured on the same data under the
//! same cap: seeds, rows, bytes and caps are compared, and what differs refuses the
//! merge. A load of many clients or a saturation search measured in two runs is
//! refused too: its rate is one machine's, and two machines' do not add up.
//! A size mix's cells join band by band, each band's fetches as a cell's.
//! Every cell keeps the run it came from (`EngineResult::runs`), and the merged run
//! lists each run's machine, cap, share and times (`RunResults::merged_from`).

use std::collections::BTreeMap;

use anyhow::{Context, Result};

use crate::cap::CapReport;
use crate::error::InputError;
use crate::records::merged_run::MergedRun;
use crate::records::results::{EngineResult, RunResults, new_run_id};
use crate::stats::bands::BandSummary;
use crate::stats::{Summary, hdr, interval};

/// The record of `run` as one of a merged run's runs.
fn merged_run_of(run: &RunResults) -> MergedRun {
    MergedRun {
        run_id: run.run_id.clone(),
        machine: run.machine.clone(),
        cap: run.cap.clone(),
        share: run.config.share,
        started_at: run.started_at.clone(),
        finished_at: run.finished_at.clone(),
        complete: run.complete,
        command: run.command.clone(),
        provenance: run.provenance.clone(),
        results: run.results.len(),
    }
}

/// The runs `run` holds: itself, or for a merged run the runs it was merged from.
fn sources_of(run: &RunResults) -> Vec<MergedRun> {
    if run.merged_from.is_empty() {
        vec![merged_run_of(run)]
    } else {
        run.merged_from.clone()
    }
}

/// Each cell names the runs it holds: a measured run's cells their own.
fn name_cells(run: &mut RunResults) {
    let id = run.run_id.clone();
    let cells = run
        .results
        .iter_mut()
        .chain(run.load_results.iter_mut().map(|l| &mut l.result));
    for r in cells.filter(|r| r.runs.is_empty()) {
        r.runs = vec![id.clone()];
    }
}

/// The merged run of `runs` (two or more, merged runs among them), to be written
/// under `results_dir`.
pub fn merge(runs: Vec<RunResults>, results_dir: &std::path::Path) -> Result<RunResults> {
    if let Some(open) = runs.iter().find(|r| r.finished_at.is_none()) {
        return Err(InputError::Merge(format!(
            "run {} has not ended: it is still being measured, or it was killed; wait for it to end (or continue it with the command that started it), then merge",
            open.run_id
        ))
        .into());
    }
    let mut runs = runs.into_iter();
    let mut merged = runs.next().context("nothing to merge")?;
    let mut sources = sources_of(&merged);
    name_cells(&mut merged);
    for mut run in runs {
        if let Some(why) = why_not_one_run(&merged, &run) {
            return Err(InputError::Merge(why).into());
        }
        for source in sources_of(&run) {
            if sources.iter().any(|s| s.run_id == source.run_id) {
                return Err(InputError::Merge(format!(
                    "run {} is in more than one of them (given twice, or inside a merged run): its fetches would count twice",
                    source.run_id
                ))
                .into());
            }
            sources.push(source);
        }
        name_cells(&mut run);
        absorb(&mut merged, run)?;
    }
    let ids: Vec<&str> = sources.iter().map(|s| s.run_id.as_str()).collect();
    merged.command = format!("blobrace merge {}", ids.join(" "));
    merged.run_id = new_run_id();
    merged.started_at = sources
        .iter()
        .map(|s| s.started_at.clone())
        .min()
        .expect("two runs");
    merged.finished_at = sources
        .iter()
        .map(|s| s.finished_at.clone())
        .collect::<Option<Vec<_>>>()
        .and_then(|f| f.into_iter().max());
    merged.complete = sources.iter().all(|s| s.complete);
    merged.config.share = None;
    merged.config.results_dir = results_dir.to_path_buf();
    merged.config.sizes.sort();
    merged.config.sizes.dedup();
    merged.merged_from = sources;
    // Each run merged keeps its own build and variables (`merged_from`).
    merged.provenance = None;
    // A merged run is never continued: its parts are runs of their own.
    merged.resume_key.clear();
    Ok(merged)
}

/// Why `run` cannot be a part of the same run as `merged` (flags, dataset, workload,
/// disk cap, deployment, layout differ), or None. `blobrace merge` refuses on it, and
/// `blobrace variants` advises a merge only where it is None.
pub fn why_not_one_run(merged: &RunResults, run: &RunResults) -> Option<String> {
    let (mine, theirs) = (how_measured(merged), how_measured(run));
    if let Some(((what, a), (_, b))) = mine.iter().zip(&theirs).find(|(a, b)| a != b) {
        return Some(format!(
            "run {} was measured with {what} {a}, run {} with {what} {b}: the parts of one run share its flags (give every machine the same ones, and each its own --share)",
            merged.run_id, run.run_id
        ));
    }
    let (layout, theirs) = (merged.config.layout_label(), run.config.layout_label());
    if layout != theirs {
        return Some(format!(
            "run {} read {layout}, but run {} read {theirs}: merge joins the parts of one run; set layouts and workloads side by side with `blobrace variants`",
            merged.run_id, run.run_id
        ));
    }
    // What `compare` refuses as two experiments, merge refuses as two runs: one
    // place decides (`comparable::differences`). The machine and the engines'
    // versions may differ: a run's shares run on machines of their own.
    if let Some((what, a, b)) = super::comparable::differences(merged, run)
        .into_iter()
        .find(|(what, _, _)| matches!(*what, "dataset" | "workload" | "disk-cap" | "deployment"))
    {
        return Some(format!(
            "run {} was measured with {what} {a}, run {} with {what} {b}: the parts of one run share its flags (give every machine the same ones, and each its own --share); set runs that differ in it side by side with `blobrace compare --vary {what}`",
            merged.run_id, run.run_id
        ));
    }
    None
}

/// What every part of one run shares (its flags but the sizes and engines), as
/// (what, value) pairs in a fixed order.
fn how_measured(run: &RunResults) -> Vec<(&'static str, String)> {
    let c = &run.config;
    vec![
        ("seed", c.seed.to_string()),
        ("dataset bytes", c.dataset_bytes.to_string()),
        // Text and random bytes are two datasets, never halves of one run.
        ("content", c.content.to_string()),
        ("warm-up", format!("{:?}", c.warmup)),
        ("measuring time", format!("{:?}", c.measure)),
        ("precision", format!("{:?}", c.precision)),
        ("cache states", format!("{:?}", c.cache)),
        ("repeats", c.repeat.to_string()),
        ("clients", format!("{:?}", c.clients)),
        // Fetches under different caps are two experiments, not two halves of one.
        (
            "memory cap",
            c.cap
                .memory_bytes
                .map_or("none".into(), crate::size::format_bytes),
        ),
        (
            "CPU cap",
            c.cap.cpus.map_or("none".into(), |cpus| cpus.to_string()),
        ),
        ("engines asked", c.engines_asked().join(",")),
        // A mix is the dataset's sizes: two mixes are two datasets.
        (
            "size mix",
            c.size_mix
                .map_or("none (size classes)".into(), |m| m.get().canonical()),
        ),
    ]
}

/// Add `run`'s cells to `merged`.
fn absorb(merged: &mut RunResults, run: RunResults) -> Result<()> {
    let id = run.run_id.clone();
    if !merged.driver.split('+').any(|d| d == run.driver) {
        merged.driver = format!("{}+{}", merged.driver, run.driver);
    }
    for r in run.results {
        let same = merged.results.iter_mut().find(|m| {
            m.engine == r.engine && m.size_bytes == r.size_bytes && m.scenario == r.scenario
        });
        match same {
            Some(m) => *m = merged_result(m, &r)?,
            None => merged.results.push(r),
        }
    }
    for l in run.load_results {
        let r = &l.result;
        if let Some(m) = merged.load_results.iter().find(|m| {
            m.result.engine == r.engine
                && m.result.size_bytes == r.size_bytes
                && m.result.scenario == r.scenario
                && m.load.point == l.load.point
        }) {
            return Err(InputError::Merge(format!(
                "the load of {} clients on {} at {} was measured in runs {} and {id}: a load's rate is its own machine's, and two do not add up; give each size to one share (--share i/n)",
                l.load.point.clients,
                r.engine.name(),
                r.size,
                m.result.runs.join(", ")
            ))
            .into());
        }
        merged.load_results.push(l);
    }
    for s in run.saturations {
        if merged.saturations.iter().any(|m| {
            m.engine == s.engine
                && m.size_bytes == s.size_bytes
                && m.scenario == s.scenario
                && m.clients == s.clients
        }) {
            return Err(InputError::Merge(format!(
                "the sustainable rate of {} at {} with {} clients was searched in two runs (the second {id}): a rate is one machine's; give each size to one share (--share i/n)",
                s.engine.name(),
                s.size,
                s.clients
            ))
            .into());
        }
        merged.saturations.push(s);
    }
    merged.loads.extend(run.loads);
    merged.server_fits.extend(run.server_fits);
    merged.skipped_loads.extend(run.skipped_loads);
    for d in run.disk_limits {
        if merged.disk_limit(d.size_bytes, d.queue_depth).is_none() {
            merged.disk_limits.push(d);
        }
    }
    merged.profiles.extend(run.profiles);
    // Against the cells before this run: one run holds one entry per repeat.
    let before = merged.first_bytes.len();
    for f in run.first_bytes {
        if merged.first_bytes[..before]
            .iter()
            .any(|m| m.engine == f.engine && m.size_bytes == f.size_bytes && m.cache == f.cache)
        {
            return Err(InputError::Merge(format!(
                "the time to the first bytes of {} at {} {} was measured in two runs (the second {id}): it keeps percentiles, not histograms, so they cannot be added; give each size to one share (--share i/n)",
                f.engine.name(),
                f.size,
                f.cache
            ))
            .into());
        }
        merged.first_bytes.push(f);
    }
    merged.failures.extend(run.failures);
    for size in run.config.sizes {
        merged.config.sizes.push(size);
    }
    for engine in run.config.engines {
        if !merged.config.engines.contains(&engine) {
            merged.config.engines.push(engine);
        }
    }
    Ok(())
}

/// One cell of both results' fetches, refused where they were not measured alike.
fn merged_result(a: &EngineResult, b: &EngineResult) -> Result<EngineResult> {
    let mut differs = Vec::new();
    let mut compare = |what: &str, x: String, y: String| {
        if x != y {
            differs.push(format!(
                "{what} {x} in {} but {y} in {}",
                a.runs.join("+"),
                b.runs.join("+")
            ));
        }
    };
    compare(
        "seed",
        a.dataset.seed.to_string(),
        b.dataset.seed.to_string(),
    );
    compare(
        "rows",
        a.dataset.rows.to_string(),
        b.dataset.rows.to_string(),
    );
    compare(
        "dataset bytes",
        a.dataset.bytes.to_string(),
        b.dataset.bytes.to_string(),
    );
    let cap = |c: &Option<CapReport>| match c {
        // A disk cap sets what a miss costs: runs on other disk caps are other runs.
        Some(c) => format!(
            "memory {}, CPU {}, disk {}",
            c.memory_label(),
            c.cpu_label(),
            c.disk
                .as_ref()
                .map_or("uncapped".into(), |d| d.in_force.label())
        ),
        None => "unknown".into(),
    };
    compare("cap", cap(&a.cap), cap(&b.cap));
    // What the engine reported of itself (versions, caches, the floor's read pattern):
    // another server or method is another measurement. Not where its files are (each
    // machine has its own) nor what a calibration measured on the way. Each setting
    // that differs is named, with how to pin it where one can.
    let kept = |k: &String| {
        !["measured", "file", "path", "location"]
            .iter()
            .any(|w| k.contains(w))
    };
    let keys: std::collections::BTreeSet<&String> = a
        .settings
        .keys()
        .chain(b.settings.keys())
        .filter(|k| kept(k))
        .collect();
    let unset = String::from("(not set)");
    for key in keys {
        let (x, y) = (
            a.settings.get(key).unwrap_or(&unset),
            b.settings.get(key).unwrap_or(&unset),
        );
        if x != y {
            let pin = if key == "read pattern" {
                format!(
                    " (the floor times its read patterns when it opens and takes the fastest, so two machines or two hours may pick apart: measure again with {}={x} on every share)",
                    crate::db::floor::engine::PIN_VARIABLE
                )
            } else {
                String::new()
            };
            compare(&format!("setting '{key}'{pin}:"), x.clone(), y.clone());
        }
    }
    if !differs.is_empty() {
        return Err(InputError::Merge(format!(
            "{} at {} {} was measured in both, differently: {}",
            a.engine.name(),
            a.size,
            a.scenario.cache.name(),
            differs.join("; ")
        ))
        .into());
    }
    let who = || format!("{} at {}", a.engine.name(), a.size);
    let mut m = a.clone();
    m.measured = merged_summary(&a.measured, &b.measured).with_context(who)?;
    m.warm_up = merged_summary(&a.warm_up, &b.warm_up).with_context(who)?;
    m.runs = a.runs.iter().chain(&b.runs).cloned().collect();
    m.criterion_samples = a
        .criterion_samples
        .zip(b.criterion_samples)
        .map(|(x, y)| x + y);
    // What was true of one machine's measurement only.
    m.precision = None;
    m.container = None;
    m.disk_probes = None;
    m.step_memory = None;
    m.process_peak_rss_bytes = a.process_peak_rss_bytes.max(b.process_peak_rss_bytes);
    m.started_at = a.started_at.clone().min(b.started_at.clone());
    m.finished_at = a.finished_at.clone().max(b.finished_at.clone());
    Ok(m)
}

/// Every fetch of both phases: from their exact histograms, never from percentiles.
pub fn merged_summary(a: &Summary, b: &Summary) -> Result<Summary> {
    let (Some(ha), Some(hb)) = (&a.hdr, &b.hdr) else {
        return Err(InputError::Merge(
            "a result was written before blobrace kept exact histograms: measure it again to merge it".into(),
        )
        .into());
    };
    let sum = ha.add(hb)?;
    let all = hdr::decode(&sum.all)?;
    let split = match (&sum.hits, &sum.misses) {
        (Some(h), Some(m)) => Some((hdr::decode(h)?, hdr::decode(m)?)),
        _ => None,
    };
    let disk_bytes_total = a
        .disk_bytes_total
        .zip(b.disk_bytes_total)
        .map(|(x, y)| x + y);
    // Each run's windows count from its own first fetch: b's follow a's.
    let mut windows = a.windows.clone();
    let width = crate::stats::window::WINDOW_NS as f64 / 1e9;
    let shift = match (a.windows.last(), b.windows.first()) {
        (Some(last), Some(first)) => last.start_s + width - first.start_s,
        _ => 0.0,
    };
    windows.extend(b.windows.iter().map(|w| crate::stats::Window {
        start_s: w.start_s + shift,
        ..w.clone()
    }));
    let mut summary = Summary::of_histograms(
        &all,
        split.as_ref().map(|(h, m)| (h, m)),
        disk_bytes_total,
        a.bytes_returned + b.bytes_returned,
        windows,
    );
    if a.intervals.is_some() || b.intervals.is_some() {
        summary.intervals = Some(interval::intervals(&summary.windows));
    }
    summary.bands = merged_bands(&a.bands, &b.bands)?;
    Ok(summary)
}

/// A size mix's bands of both phases: a band measured in both is one band of all
/// their fetches, as a whole phase is (`merged_summary`); one in either only is kept
/// as it was measured (a share's few fetches of a rare size).
fn merged_bands(a: &[BandSummary], b: &[BandSummary]) -> Result<Vec<BandSummary>> {
    // A mix of a few sizes has a band per size since 2026-12-03, doublings before: the
    // two cannot be added band by band.
    let per_size = |bands: &[BandSummary]| bands.iter().any(|b| b.high == b.low + 1);
    let doublings = |bands: &[BandSummary]| bands.iter().any(|b| b.high != b.low + 1);
    if (per_size(a) && doublings(b)) || (doublings(a) && per_size(b)) {
        return Err(InputError::Merge(
            "one run gives its mix's bands per size, the other per doubling (written by an older blobrace): measure the older run's mix again to merge them".into(),
        )
        .into());
    }
    let mut bands = a.to_vec();
    for theirs in b {
        match bands.iter_mut().find(|mine| mine.band() == theirs.band()) {
            Some(mine) => {
                let summary = merged_summary(&mine.summary, &theirs.summary)
                    .with_context(|| format!("the size band {}", mine.band))?;
                *mine = BandSummary::of_summary(mine.band(), summary);
            }
            None => bands.push(theirs.clone()),
        }
    }
    bands.sort_by_key(|b| b.low);
    Ok(bands)
}

/// Runs by id under `results_dir`, or run directories, read.
pub fn read_runs(ids: &[String], results_dir: &std::path::Path) -> Result<Vec<RunResults>> {
    ids.iter()
        .map(|id| {
            let file = RunResults::dir_named(id, results_dir).join("results.json");
            if !file.is_file() {
                return Err(InputError::Merge(format!(
                    "no run {id}: neither a run directory nor a run under {}",
                    results_dir.display()
                ))
                .into());
            }
            RunResults::read(&file)
        })
        .collect()
}

/// How many cells each run gave, for the line `merge` prints.
pub fn cells_by_run(run: &RunResults) -> BTreeMap<String, usize> {
    let mut by = BTreeMap::new();
    for r in &run.results {
        for id in &r.runs {
            *by.entry(id.clone()).or_insert(0) += 1;
        }
    }
    by
}
