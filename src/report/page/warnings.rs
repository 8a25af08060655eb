//! The yellow box: everything a reader must not miss before reading any number.

use std::fmt::Write as _;

use crate::results::{RegimeVerdict, RunResults};
use crate::size::format_bytes;

use super::markup::esc;

/// Everything a reader must not miss: what failed, uncapped, unavailable, fits in
/// memory, incomplete. Said once each: a note that holds for several results names
/// them on one line, and the measuring process's own cap notes are said once for
/// every engine it runs (not per result). Housekeeping (stale cgroups removed) is
/// not here: it is in the run's details.
pub(super) fn warnings(run: &RunResults) -> Vec<String> {
    let mut w = Vec::new();
    for f in &run.failures {
        w.push(format!(
            "<b>Failed</b>: {} of {} at {}, so it is missing below: {}",
            f.stage,
            esc(&f.who),
            f.size,
            esc(&f.why)
        ));
    }
    for beat in crate::floor_check::beating_the_floor(run) {
        w.push(format!(
            "<b>Beat the floor</b>: {}, so its \"÷ floor\" below 1 is a finding about the floor, not the engine: {}",
            esc(&format!("{} {}", beat.who, beat.by)),
            esc(&beat.why)
        ));
    }
    let short: Vec<String> = run
        .results
        .iter()
        .filter_map(|r| {
            let p = r.precision.as_ref().filter(|p| !p.met())?;
            Some(format!(
                "{} {} {} ({})",
                r.engine,
                r.size,
                r.scenario.cache.name(),
                p.label()
            ))
        })
        .collect();
    if !short.is_empty() {
        w.push(format!(
            "<b>Precision not reached</b> in {} of {} results (--precision, within --measure-limit): their intervals are wider than asked, so fewer differences are judged: {}",
            short.len(),
            run.results.len(),
            esc(&short.join("; "))
        ));
    }
    for pressed in crate::fs_pressure::pressed(run) {
        w.push(format!(
            "<b>Files under metadata pressure</b>: {}: {}",
            esc(&pressed.who),
            esc(&pressed.why)
        ));
    }
    if !run.complete {
        w.push("This run did not complete: some engines or sizes are missing.".into());
    }
    if run.cap.memory_limit_bytes.is_none() {
        w.push(format!(
            "The measuring process was <b>uncapped</b> ({}): the embedded engines could use all of the machine's memory.",
            esc(&run.cap.notes.join("; "))
        ));
    } else if !run.cap.notes.is_empty() {
        w.push(format!(
            "The measuring process's cap (SQLite, files, the floor): {}",
            esc(&run.cap.notes.join("; "))
        ));
    }
    // (note, results it holds for), in the order first seen.
    let mut per_result: Vec<(String, Vec<String>)> = Vec::new();
    let mut note = |text: String, who: &str| match per_result.iter_mut().find(|(t, _)| *t == text) {
        Some((_, whos)) => {
            if !whos.iter().any(|x| x == who) {
                whos.push(who.to_string());
            }
        }
        None => per_result.push((text, vec![who.to_string()])),
    };
    for r in &run.results {
        let who = format!("{} {}", r.engine.name(), r.size);
        match &r.cap {
            None => note("the cap is <b>unavailable</b> (the server container was not found through Docker).".into(), &who),
            Some(c) if c.memory_limit_bytes.is_none() => {
                note(format!("ran <b>uncapped</b> ({}).", esc(&c.cgroup)), &who)
            }
            // The process's own cap: said once above.
            Some(c) if c.notes == run.cap.notes => {}
            Some(c) if !c.notes.is_empty() => note(esc(&c.notes.join("; ")), &who),
            _ => {}
        }
        if r.measured.disk_bytes_per_fetch.is_none() {
            note(
                format!(
                    "disk bytes per fetch and hits/misses are <b>unavailable</b> ({}).",
                    esc(&r.disk_counter)
                ),
                &who,
            );
        }
        if let Some(changed) = r.disk_probes.as_ref().and_then(|p| p.changed()) {
            note(
                format!(
                    "{}: compare it with the floor of the same round, not across runs.",
                    esc(&changed)
                ),
                &who,
            );
        }
        if let Some(p) = &r.disk_probes
            && let (Err(why), _) | (_, Err(why)) = (&p.before, &p.after)
        {
            note(
                format!("the disk probe is <b>unavailable</b> ({}).", esc(why)),
                &who,
            );
        }
        if let Some(problem) = r.steady.as_ref().and_then(|s| s.problem()) {
            note(format!("{}.", esc(&problem)), &who);
        }
        if r.regime.verdict != RegimeVerdict::DiskBound {
            note(
                format!(
                    "the dataset ({}) <b>fits in memory</b> ({:.2}x {}): this measures the cache, not the disk.",
                    format_bytes(r.regime.dataset_bytes),
                    r.regime.ratio,
                    esc(&r.regime.basis.to_string())
                ),
                &who,
            );
        }
    }
    for (text, whos) in per_result {
        w.push(format!("{}: {text}", esc(&whos.join(", "))));
    }
    w
}

/// The yellow box: what must be read before any number.
pub(super) fn warnings_box(run: &RunResults) -> String {
    let warnings = warnings(run);
    if warnings.is_empty() {
        return String::new();
    }
    let mut p =
        String::from("<div class=warn id=warnings><b>Read these before the numbers:</b><ul>\n");
    for w in &warnings {
        let _ = writeln!(p, "<li>{w}</li>");
    }
    p.push_str("</ul></div>\n");
    p
}
