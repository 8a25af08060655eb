//! Continuing a run that stopped before its end. The full profile runs for hours: a
//! closed laptop lid, a CI timeout, Ctrl-C or a server that failed under it must not
//! cost the cells already measured. A run whose flags resolve to the same settings
//! (`resume_key`: the data, the cap asked for, timings, engines, sizes...) finds the
//! newest run with that key in the results directory; where that one is unfinished
//! (stopped, or ended with failed steps) it continues it in the same directory, under
//! the same run id: its measured cells are kept (`RunResults::keep_done_cells_only`),
//! only the missing ones are measured, and one report covers the whole, part by part.
//! `--fresh` starts over.

use std::path::Path;

use anyhow::{Result, bail};

use crate::config::RunConfig;
use crate::db::registry::EngineKind;
use crate::db::registry::StoreKind;
use crate::load::LoadOutcome;
use crate::records::results::{RESULTS_SCHEMA_VERSION, RunResults, Scenario};
use crate::records::run_parts::{CellKey, RunPart, cells_per_part};

/// What two runs must share for one to continue the other: the resolved settings,
/// less those that change nothing measured (stop at the first failure or not, engines
/// named or defaulted, where results go: the search is inside it anyway).
pub fn resume_key(config: &RunConfig) -> String {
    let mut value = serde_json::to_value(config).expect("a RunConfig serializes");
    if let Some(map) = value.as_object_mut() {
        for field in [
            "fail_fast",
            "no_wait",
            "engines_explicit",
            "results_dir",
            "left_out",
            "metrics_addr",
        ] {
            map.remove(field);
        }
        // The engines asked for, those a run left out (a server not up) among them: the
        // key is taken before they are left out, and a run's recorded settings are
        // after, so a key computed again from them must put them back.
        map.insert("engines".into(), serde_json::json!(config.engines_asked()));
        // The data directory by what it is (`machine::canonical`): `data`, `./data` and
        // its absolute path are one, for the run to continue and the one still going.
        map.insert(
            "data_dir".into(),
            serde_json::json!(crate::machine::canonical(&config.data_dir)),
        );
    }
    value.to_string()
}

/// Every readable run in `results_dir` (foreign directories are not runs to continue,
/// and are passed over; a results.json that cannot be read is said, since the run it
/// held is not continued).
pub fn earlier_runs(results_dir: &Path) -> Vec<RunResults> {
    let Ok(entries) = std::fs::read_dir(results_dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let file = e.path().join("results.json");
            match RunResults::read(&file) {
                Ok(run) => Some(run),
                Err(why) if file.is_file() => {
                    say!("note: {why:#}; that run is not continued (a new one starts), and it stays as it is");
                    None
                }
                Err(_) => None,
            }
        })
        .filter(|r| r.schema_version == RESULTS_SCHEMA_VERSION)
        .collect()
}

/// The newest unfinished run of `runs` that this one would have continued but for a
/// few settings, and those settings: a changed timing flag started a new run without
/// a word. None where the nearest differs in more (another experiment altogether).
pub fn near_miss(key: &str, runs: &[RunResults]) -> Option<(String, Vec<String>)> {
    let mine: serde_json::Value = serde_json::from_str(key).ok()?;
    let mine = mine.as_object()?;
    runs.iter()
        .filter(|r| r.merged_from.is_empty() && (!r.complete || !r.failures.is_empty()))
        .filter(|r| !same_settings(r, key))
        .filter_map(|r| {
            let theirs: serde_json::Value = serde_json::from_str(&resume_key(&r.config)).ok()?;
            let theirs = theirs.as_object()?;
            let differ: Vec<String> = mine
                .keys()
                .chain(theirs.keys())
                .filter(|k| mine.get(*k) != theirs.get(*k))
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            (!differ.is_empty() && differ.len() <= 3).then_some((r, differ))
        })
        .max_by(|(a, _), (b, _)| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)))
        .map(|(r, differ)| (r.run_id.clone(), differ))
}

/// Whether `earlier` ran with the settings whose key is `key`. Its key is also
/// computed again from its settings as this blobrace reads them: a run stopped by an
/// older blobrace (whose settings lacked one added since, so its stored key does too)
/// is continued by the same flags where the new setting is at its default, since its
/// cells were measured that way; a full run in parts outlives an upgrade between them.
fn same_settings(earlier: &RunResults, key: &str) -> bool {
    earlier.resume_key == key || resume_key(&earlier.config) == key
}

/// The run this one continues: the newest of `runs` with `key`, where it is
/// unfinished. None for `--fresh`, or where the newest with that key is complete.
pub fn to_continue(config: &RunConfig, key: &str, runs: Vec<RunResults>) -> Option<RunResults> {
    if config.fresh {
        return None;
    }
    let newest = runs
        .into_iter()
        .filter(|r| same_settings(r, key) && r.merged_from.is_empty())
        .max_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)))?;
    (!newest.complete || !newest.failures.is_empty()).then_some(newest)
}

/// `earlier`'s last part where it is still running on this host in another process:
/// two processes must not measure one run (nor, through it, one dataset) at once.
pub fn still_running(earlier: &RunResults, host: &str) -> Option<u32> {
    let part = earlier.parts.last()?;
    if part.finished_at.is_some() || part.host != host || part.pid == std::process::id() {
        return None;
    }
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", part.pid)).ok()?;
    let cmdline = String::from_utf8_lossy(&cmdline);
    (cmdline.contains("blobrace") || cmdline.contains("fetch")).then_some(part.pid)
}

/// `now` (a new run's results, its one part) continuing `earlier`: the earlier run's
/// id, directory, loads and measured cells, this process's settings, cap and machine,
/// its part added. Refused where the cap this process got is not the one the earlier
/// parts ran under: their cells and these would not stand under one cap.
pub fn continue_run(mut earlier: RunResults, now: RunResults) -> Result<RunResults> {
    let (was, is) = (&earlier.cap, &now.cap);
    // The disk too: the same flags may have got a disk cap in one part and not another.
    let disk = |c: &crate::cap::CapReport| c.disk.as_ref().map(|d| d.in_force_label());
    if was.memory_limit_bytes != is.memory_limit_bytes
        || was.cpu_limit != is.cpu_limit
        || disk(was) != disk(is)
    {
        bail!(
            "run {} (in {}) stopped before its end and these flags would continue it, but it ran under a cap of {} and {}{}, and this process got {} and {}{}: its cells and the next ones would not stand under one cap. Continue it where it got that cap, or start a new run with --fresh (BLOBRACE_FRESH=1)",
            earlier.run_id,
            earlier.dir().display(),
            was.memory_label(),
            was.cpu_label(),
            disk(was).map(|d| format!(", disk {d}")).unwrap_or_default(),
            is.memory_label(),
            is.cpu_label(),
            disk(is).map(|d| format!(", disk {d}")).unwrap_or_default(),
        );
    }
    // The same asked readahead may have been set in one part and not another (run
    // as root once, then not): cells read through different windows are not one run.
    let readahead = |r: &RunResults| r.readahead.as_ref().map(|r| r.data_kb());
    if let (Some(was), Some(is)) = (readahead(&earlier), readahead(&now))
        && was != is
    {
        let kb = |v: Option<u64>| v.map_or("unavailable".into(), |k| format!("{k} KiB"));
        bail!(
            "run {} (in {}) stopped before its end and these flags would continue it, but its disk's readahead was {} and is {} now: its cells and the next ones would not stand on one disk setting. Continue it where the readahead can be set as asked (as root), or start a new run with --fresh (BLOBRACE_FRESH=1)",
            earlier.run_id,
            earlier.dir().display(),
            kb(was),
            kb(is),
        );
    }
    earlier.keep_done_cells_only();
    earlier.readahead = now.readahead;
    earlier.network = now.network;
    earlier.slow_disk = now.slow_disk;
    earlier.config = now.config;
    // The key of the settings as this blobrace writes them (an older one's lacked any
    // added since): the next part finds the run by either.
    earlier.resume_key = now.resume_key;
    earlier.cap = now.cap;
    earlier.machine = now.machine;
    earlier.complete = false;
    earlier.finished_at = None;
    earlier.server_fits = now.server_fits;
    earlier.runner_image = now.runner_image;
    earlier.parts.extend(now.parts);
    Ok(earlier)
}

/// This process's part, starting now.
pub fn new_part(command: &str, host: &str) -> RunPart {
    RunPart {
        started_at: crate::now_rfc3339(),
        finished_at: None,
        command: command.to_string(),
        host: host.to_string(),
        pid: std::process::id(),
        cells_measured: 0,
        load_seconds: 0.0,
        measure_seconds: 0.0,
        total_seconds: 0.0,
        disk_plan: Vec::new(),
        ended: None,
    }
}

/// Seconds a row of each store took to load at each size, from the loads recorded
/// in `runs` (the newest first load of each): what the start of a run estimates its
/// loads from.
#[derive(Debug, Default, Clone)]
pub struct LoadRates {
    /// (store, blob size in bytes) → (seconds per row, when recorded).
    rates: Vec<((StoreKind, u64), (f64, String))>,
}

impl LoadRates {
    pub fn of(runs: &[RunResults]) -> Self {
        let mut rates = LoadRates::default();
        // A size mix's loads are rows of many sizes, not of its largest blob's (the key).
        for run in runs.iter().filter(|r| r.config.size_mix.is_none()) {
            for load in &run.loads {
                let rows = load.rows.saturating_sub(load.resumed_from_row);
                if load.outcome != LoadOutcome::Loaded || rows == 0 || load.seconds <= 0.0 {
                    continue;
                }
                let key = (load.store, load.size_bytes);
                let rate = (load.seconds / rows as f64, run.started_at.clone());
                match rates.rates.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, old)) if old.1 < rate.1 => *old = rate,
                    Some(_) => {}
                    None => rates.rates.push((key, rate)),
                }
            }
        }
        rates
    }

    /// About how long `rows` rows of `store` at `size_bytes` take to load; None where
    /// no load of that store and size was recorded here.
    pub fn seconds(&self, store: StoreKind, size_bytes: u64, rows: u64) -> Option<f64> {
        self.rates
            .iter()
            .find(|(k, _)| *k == (store, size_bytes))
            .map(|(_, (per_row, _))| per_row * rows as f64)
    }

    /// Record a load just made (it estimates the next sizes' loads better than a
    /// guess).
    pub fn learn(&mut self, store: StoreKind, size_bytes: u64, rows: u64, seconds: f64) {
        if rows == 0 || seconds <= 0.0 {
            return;
        }
        let rate = (seconds / rows as f64, crate::now_rfc3339());
        match self
            .rates
            .iter_mut()
            .find(|(k, _)| *k == (store, size_bytes))
        {
            Some((_, old)) => *old = rate,
            None => self.rates.push(((store, size_bytes), rate)),
        }
    }
}

/// What a dry run says of the unfinished run (`to_continue`) the same command would continue.
pub fn continue_line(earlier: &RunResults) -> String {
    format!(
        "continues: run {} in {}, stopped with {} cell(s) measured to their end: those are kept, the rest measured (--fresh starts a new run)",
        earlier.run_id,
        earlier.dir().display(),
        earlier.done_cells.len()
    )
}

/// `37 of 168 cells measured (run X, part 1 from 15:02, interrupted)`: what a
/// continued run says it starts from.
pub fn continued_line(run: &RunResults) -> String {
    let per_part = cells_per_part(&run.parts, &run.done_cells);
    let parts: Vec<String> = run
        .parts
        .iter()
        .zip(&per_part)
        .take(run.parts.len().saturating_sub(1))
        .enumerate()
        .map(|(i, (part, cells))| {
            format!(
                "part {} from {}: {} cell(s), {}",
                i + 1,
                part.started_at,
                cells,
                part.ended
                    .as_deref()
                    .unwrap_or("stopped without a word (killed?)")
            )
        })
        .collect();
    format!(
        "continuing run {} in {} ({}); `--fresh` (BLOBRACE_FRESH=1) starts a new run instead",
        run.run_id,
        run.dir().display(),
        parts.join("; ")
    )
}

/// What a continued run keeps of the run it continues.
impl RunResults {
    /// Whether `cell` was measured to its end in this run (in any part).
    pub fn is_done(&self, cell: &CellKey) -> bool {
        self.done_cells.iter().any(|d| d.cell == *cell)
    }

    /// Forget what a stopped part recorded of cells it did not finish (a cell's 1-client
    /// result whose 16-client load was cut off, a cell whose server failed) and every
    /// failure, so the next part measures those cells once, whole. Loads, disk limits
    /// and done cells stay.
    pub fn keep_done_cells_only(&mut self) {
        let done: Vec<CellKey> = self.done_cells.iter().map(|d| d.cell).collect();
        let is_done = |engine: EngineKind, size_bytes: u64, s: Scenario| {
            done.iter().any(|c| {
                (c.engine, c.size.bytes(), c.cache, c.repeat)
                    == (engine, size_bytes, s.cache, s.repeat)
            })
        };
        // Profiles and streamed fetches name their cell by words, without a repeat.
        let named_done = |engine: &str, size: &str, cache: &str| {
            done.iter().any(|c| {
                c.engine.name() == engine && c.size.to_string() == size && c.cache.name() == cache
            })
        };
        self.results
            .retain(|r| is_done(r.engine, r.size_bytes, r.scenario));
        self.load_results
            .retain(|l| is_done(l.result.engine, l.result.size_bytes, l.result.scenario));
        self.saturations
            .retain(|s| is_done(s.engine, s.size_bytes, s.scenario));
        // A skipped load names no scenario: kept where any of its engine's cells at
        // that size is done (it is skipped again, the same way, where not).
        self.skipped_loads.retain(|s| {
            done.iter()
                .any(|c| c.engine == s.engine && c.size.bytes() == s.size_bytes)
        });
        self.profiles
            .retain(|p| named_done(&p.engine, &p.size, &p.cache));
        self.first_bytes
            .retain(|f| named_done(f.engine.name(), &f.size, &f.cache));
        self.failures.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(args: &[&str]) -> RunConfig {
        crate::config::resolve_flags(args).unwrap()
    }

    fn cap() -> crate::cap::CapReport {
        use crate::cap::{CapMethod, CapReport, CapRequest};
        CapReport {
            requested: CapRequest {
                memory_bytes: Some(1 << 30),
                cpus: Some(2.0),
            },
            memory_limit_bytes: Some(1 << 30),
            cpu_limit: Some(2.0),
            origin: CapMethod::V1Child.origin(),
            method: CapMethod::V1Child,
            cgroup_version: "v1".into(),
            cgroup: "/x".into(),
            notes: vec![],
            housekeeping: vec![],
            disk: None,
        }
    }

    fn run(config: &RunConfig, started_at: &str, complete: bool, failed: bool) -> RunResults {
        let json = serde_json::json!({
            "schema_version": RESULTS_SCHEMA_VERSION,
            "run_id": format!("run-{started_at}"),
            "started_at": started_at,
            "finished_at": null,
            "complete": complete,
            "driver": "blobrace measure",
            "command": "blobrace measure",
            "config": config,
            "cap": cap(),
            "machine": crate::machine::MachineFacts::collect(std::path::Path::new(".")),
            "loads": [],
            "results": [],
            "failures": if failed {
                serde_json::json!([{"stage": "measure", "who": "sqlite", "size": 1024, "why": "gone", "at": started_at}])
            } else {
                serde_json::json!([])
            },
            "resume_key": resume_key(config),
        });
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_run_under_a_disk_cap_is_not_continued_by_one_without() {
        // A run stopped under --disk-cap gp3 is not the run the same flags without it
        // continue, nor one of other limits.
        let key = |args: &[&str]| resume_key(&config(args));
        assert_ne!(key(&["--disk-cap", "gp3"]), key(&[]));
        assert_ne!(
            key(&["--disk-cap", "gp3"]),
            key(&["--disk-cap", "riops=500"])
        );
        assert_eq!(key(&["--disk-cap", "none"]), key(&[]));
    }

    #[test]
    fn only_the_newest_run_with_the_same_settings_is_continued_and_only_unfinished() {
        let asked = config(&["--engines", "floor", "--sizes", "1KiB"]);
        let key = resume_key(&asked);
        let ids = |runs| to_continue(&asked, &key, runs).map(|r| r.run_id);
        // Stopped: continued.
        assert_eq!(
            ids(vec![run(&asked, "1", false, false)]).as_deref(),
            Some("run-1")
        );
        // Ended with failed steps: continued (they are measured again).
        assert_eq!(
            ids(vec![run(&asked, "1", true, true)]).as_deref(),
            Some("run-1")
        );
        // The newest with these settings is complete: a new run, even where an older
        // one stopped.
        let runs = vec![
            run(&asked, "1", false, false),
            run(&asked, "2", true, false),
        ];
        assert_eq!(ids(runs), None);
        // Other settings: never continued.
        let other = config(&["--engines", "floor", "--sizes", "1KiB", "--measure", "3s"]);
        assert_eq!(ids(vec![run(&other, "1", false, false)]), None);
        // --fresh: never.
        let fresh = config(&["--engines", "floor", "--sizes", "1KiB", "--fresh"]);
        assert_eq!(
            resume_key(&fresh),
            key,
            "--fresh is not a setting of the run"
        );
        assert!(to_continue(&fresh, &key, vec![run(&asked, "1", false, false)]).is_none());
        // Stopping at the first failure or not changes nothing measured.
        let fail_fast = config(&["--engines", "floor", "--sizes", "1KiB", "--fail-fast"]);
        assert_eq!(resume_key(&fail_fast), key);
    }

    #[test]
    fn a_run_written_before_a_setting_existed_is_continued_while_that_setting_is_at_its_default() {
        let asked = config(&["--engines", "floor", "--sizes", "1KiB"]);
        // As an older blobrace wrote it: no sqlite_page_size in its settings, nor in
        // the key it stored.
        let mut json = serde_json::to_value(run(&asked, "1", false, false)).unwrap();
        json["config"]
            .as_object_mut()
            .unwrap()
            .remove("sqlite_page_size");
        let mut old_settings = serde_json::to_value(&asked).unwrap();
        for field in [
            "fail_fast",
            "no_wait",
            "engines_explicit",
            "results_dir",
            "sqlite_page_size",
        ] {
            old_settings.as_object_mut().unwrap().remove(field);
        }
        json["resume_key"] = old_settings.to_string().into();
        let earlier: RunResults = serde_json::from_value(json).unwrap();
        let key = resume_key(&asked);
        assert_ne!(earlier.resume_key, key, "the stored key lacks the setting");
        let continued = to_continue(&asked, &key, vec![earlier.clone()]).map(|r| r.run_id);
        assert_eq!(continued.as_deref(), Some("run-1"));
        // The new setting away from its default: another run.
        let other = config(&[
            "--engines",
            "floor",
            "--sizes",
            "1KiB",
            "--sqlite-page-size",
            "8192",
        ]);
        assert!(to_continue(&other, &resume_key(&other), vec![earlier]).is_none());
    }

    #[test]
    fn a_run_that_left_a_server_out_is_continued_from_its_recorded_settings() {
        // The key is taken from the settings as asked; a run records them after it
        // left out the servers that did not answer.
        let asked = config(&[]);
        let key = resume_key(&asked);
        let mut earlier = run(&asked, "1", false, false);
        earlier.resume_key = "an older blobrace's key".into();
        let left: Vec<String> = vec!["mysql".into(), "mysql-raw".into()];
        earlier
            .config
            .engines
            .retain(|e| !left.contains(&e.name().to_string()));
        earlier.config.left_out = vec![crate::config::LeftOut {
            engines: left,
            why: "not up".into(),
        }];
        let continued = to_continue(&asked, &key, vec![earlier]).map(|r| r.run_id);
        assert_eq!(continued.as_deref(), Some("run-1"));
    }

    #[test]
    fn a_run_that_differs_in_a_flag_or_two_is_named_and_another_experiment_is_not() {
        let asked = config(&["--measure", "3s"]);
        let key = resume_key(&asked);
        let stopped = run(
            &config(&["--measure", "2s"]),
            "2026-12-01T00:00:00Z",
            false,
            false,
        );
        let (id, differ) = near_miss(&key, std::slice::from_ref(&stopped)).unwrap();
        assert_eq!(
            (id, differ),
            (stopped.run_id.clone(), vec!["measure".to_string()])
        );
        // Finished, or the very run this one continues: nothing to say.
        let done = run(
            &config(&["--measure", "2s"]),
            "2026-12-01T00:00:00Z",
            true,
            false,
        );
        assert!(near_miss(&key, &[done]).is_none());
        let same = run(&asked, "2026-12-01T00:00:00Z", false, false);
        assert!(near_miss(&key, &[same]).is_none());
        let other = config(&[
            "--sizes",
            "4MiB",
            "--seed",
            "9",
            "--cap",
            "none",
            "--dataset-bytes",
            "8MiB",
        ]);
        let other = run(&other, "2026-12-01T00:00:00Z", false, false);
        assert!(near_miss(&key, &[other]).is_none(), "another experiment");
    }

    #[test]
    fn a_run_under_another_cap_is_not_continued() {
        let asked = config(&["--engines", "floor", "--sizes", "1KiB"]);
        let earlier = run(&asked, "1", false, false);
        let mut now = run(&asked, "2", false, false);
        now.cap.memory_limit_bytes = Some(512 << 20);
        let refused = continue_run(earlier.clone(), now).unwrap_err().to_string();
        assert!(
            refused.contains("run run-1")
                && refused.contains("512MiB")
                && refused.contains("--fresh"),
            "{refused}"
        );
        let same = run(&asked, "2", false, false);
        let continued = continue_run(earlier, same).unwrap();
        assert_eq!(continued.run_id, "run-1");
    }
}
