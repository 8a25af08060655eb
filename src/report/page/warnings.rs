//! The yellow box: everything a reader must not miss before reading any number
//! (`templates/report/warnings.html`, `note.html`).

use askama::Template;

use crate::records::results::{RegimeVerdict, RunResults};
use crate::size::format_bytes;

/// A note that holds for some results.
#[derive(Template, PartialEq)]
#[template(path = "report/note.html")]
pub(super) enum Note {
    CapUnavailable,
    /// The cgroup it ran in.
    Uncapped(String),
    CapNotes(String),
    /// The disk counter, and why it has no figure.
    DiskUnavailable(String),
    ProbeChanged(String),
    ProbeUnavailable(String),
    Steady(String),
    /// Dataset size, dataset ÷ memory, and what memory was counted.
    FitsInMemory(String, String, String),
    /// Why it is remote, and its round trip (`p50 / p99`, or why unknown).
    Remote(String, String),
    /// A remote server in a Kubernetes pod whose limits were read through the API: the
    /// pod and container, its round trip.
    RemotePod(String, String),
    /// What stayed charged to the cap after it was emptied (`EvictionReport::kernel_left`).
    KernelLeft(String),
}

impl Note {
    /// The note in a few words, for its line in the box (its whole text folded under it).
    pub(super) fn headline(&self) -> &'static str {
        match self {
            Note::CapUnavailable => "The cap is <b>unavailable</b>",
            Note::Uncapped(_) => "Ran <b>uncapped</b>",
            Note::CapNotes(_) => "Notes on their cap",
            Note::DiskUnavailable(_) => {
                "Disk bytes per fetch and hits/misses are <b>unavailable</b>"
            }
            Note::ProbeChanged(_) => "The disk's own speed changed while they were measured",
            Note::ProbeUnavailable(_) => "The disk probe is <b>unavailable</b>",
            Note::Steady(_) => "Not in a steady state when measured",
            Note::FitsInMemory(..) => {
                "The dataset <b>fits in memory</b>: this measures the cache, not the disk"
            }
            Note::Remote(..) => {
                "A <b>remote server</b>: its memory and CPUs are <b>not controlled</b>"
            }
            Note::RemotePod(..) => {
                "A <b>server in a Kubernetes pod</b>, capped by the pod's own limits"
            }
            Note::KernelLeft(_) => "Kernel memory stayed charged to the cap",
        }
    }

    /// The numbers do not answer the question asked (under the cap, from the disk).
    fn severe(&self) -> bool {
        matches!(
            self,
            Note::CapUnavailable | Note::Uncapped(_) | Note::FitsInMemory(..) | Note::Remote(..)
        )
    }
}

pub(super) enum Warning {
    /// Stage, who, size, why.
    Failed(String, String, String, String),
    /// Engines, why.
    LeftOut(String, String),
    /// Who with the two p50s and the reason in a few words; the figures and the whole
    /// explanation (`report::words::floor`), and whether it is a fault (not where the
    /// store compressed the blobs: what compression buys).
    BeatFloor(String, String, bool),
    /// How many results, of how many, which.
    Imprecise(usize, usize, String),
    Pressed(String, String),
    Incomplete,
    Uncapped(String),
    CapNotes(String),
    /// The results it holds for, and the note.
    Results(Vec<String>, Note),
}

impl Warning {
    /// Read first, and open: what was measured is not what the page claims (a failure,
    /// a cell left out or on data that fits in memory, an engine that beat the floor,
    /// no cap). The rest is folded under its one line.
    pub(super) fn severe(&self) -> bool {
        match self {
            Warning::Failed(..)
            | Warning::LeftOut(..)
            | Warning::BeatFloor(.., true)
            | Warning::Incomplete
            | Warning::Uncapped(_) => true,
            Warning::BeatFloor(.., false)
            | Warning::Imprecise(..)
            | Warning::Pressed(..)
            | Warning::CapNotes(_) => false,
            Warning::Results(_, note) => note.severe(),
        }
    }
}

/// What must be read before any number.
#[derive(Template)]
#[template(path = "report/warnings.html")]
pub(super) struct Warnings {
    /// The severe first, each kind in the order found.
    items: Vec<Warning>,
    severe: usize,
}

impl Warnings {
    /// Nothing to warn of: no box.
    pub fn of(run: &RunResults) -> Option<Self> {
        let mut items = warnings(run);
        items.sort_by_key(|w| !w.severe());
        let severe = items.iter().filter(|w| w.severe()).count();
        (!items.is_empty()).then_some(Warnings { items, severe })
    }

    /// How many there are, and how many of them severe: for the line above the fold.
    pub fn counts(&self) -> (usize, usize) {
        (self.items.len(), self.severe)
    }
}

/// Everything a reader must not miss: what failed, uncapped, unavailable, fits in
/// memory, incomplete. Said once each: a note that holds for several results names
/// them on one line, and the measuring process's own cap notes are said once for
/// every engine it runs (not per result). Housekeeping (stale cgroups removed) is
/// not here: it is in the run's details.
fn warnings(run: &RunResults) -> Vec<Warning> {
    let mut w = Vec::new();
    for f in &run.failures {
        w.push(Warning::Failed(
            f.stage.to_string(),
            f.who.clone(),
            f.size.to_string(),
            f.why.clone(),
        ));
    }
    for l in &run.config.left_out {
        w.push(Warning::LeftOut(l.engines.join(", "), l.why.clone()));
    }
    for beat in crate::records::floor_check::beating_the_floor(run) {
        w.push(Warning::BeatFloor(
            crate::report::words::floor::summary(&beat),
            crate::report::words::floor::detail(&beat),
            !matches!(
                beat.why,
                crate::records::floor_check::Why::Compressed { .. }
            ),
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
        w.push(Warning::Imprecise(
            short.len(),
            run.results.len(),
            short.join("; "),
        ));
    }
    for pressed in crate::records::fs_pressure::pressed(run) {
        w.push(Warning::Pressed(
            pressed.who.clone(),
            crate::report::words::fs_pressure::pressed(&pressed),
        ));
    }
    if !run.complete {
        w.push(Warning::Incomplete);
    }
    if run.cap.memory_limit_bytes.is_none() {
        // Its folded detail says why: the notes where the cap failed, else that none
        // was asked (an empty fold opened onto nothing).
        let why = match (run.cap.notes.is_empty(), run.cap.requested.memory_bytes) {
            (false, _) => run.cap.notes.join("; "),
            (true, None) => "no memory cap was asked (--cap none): the engines in this process could cache their whole dataset, so these are not figures under a cap; leave --cap out for the preset's cap, or give one".into(),
            (true, Some(_)) => "a cap was asked but none is in force, and nothing was recorded of why: `blobrace env` says what this machine allows".into(),
        };
        w.push(Warning::Uncapped(why));
    } else if !run.cap.notes.is_empty() {
        w.push(Warning::CapNotes(run.cap.notes.join("; ")));
    }
    // (note, results it holds for), in the order first seen.
    let mut per_result: Vec<(Note, Vec<String>)> = Vec::new();
    let mut note = |n: Note, who: &str| match per_result.iter_mut().find(|(t, _)| *t == n) {
        Some((_, whos)) => {
            if !whos.iter().any(|x| x == who) {
                whos.push(who.to_string());
            }
        }
        None => per_result.push((n, vec![who.to_string()])),
    };
    for r in &run.results {
        let who = format!("{} {}", r.engine.name(), r.size);
        if let Some(why) = &r.remote {
            // Its cap and memory are not known: this note says so, not the two below.
            let round_trip = match &r.round_trip {
                Some(rt) => format!(
                    "{} p50 / {} p99 ({})",
                    crate::stats::format_ns(rt.p50_ns as f64),
                    crate::stats::format_ns(rt.p99_ns as f64),
                    rt.query
                ),
                None => "unavailable".into(),
            };
            match &r.cap {
                Some(c) if c.is_pod_limits() => {
                    note(Note::RemotePod(c.cgroup.clone(), round_trip), &who)
                }
                _ => note(Note::Remote(why.clone(), round_trip), &who),
            }
        }
        match &r.cap {
            _ if r.remote.is_some() => {}
            None => note(Note::CapUnavailable, &who),
            Some(c) if c.memory_limit_bytes.is_none() => {
                note(Note::Uncapped(c.cgroup.clone()), &who)
            }
            // The process's own cap: said once above.
            Some(c) if c.notes == run.cap.notes => {}
            Some(c) if !c.notes.is_empty() => note(Note::CapNotes(c.notes.join("; ")), &who),
            _ => {}
        }
        if r.measured.disk_bytes_per_fetch.is_none() {
            note(Note::DiskUnavailable(r.disk_counter.clone()), &who);
        }
        if let Some(changed) = r.disk_probes.as_ref().and_then(|p| p.changed()) {
            note(Note::ProbeChanged(changed), &who);
        }
        if let Some(p) = &r.disk_probes
            && let (Err(why), _) | (_, Err(why)) = (&p.before, &p.after)
        {
            note(Note::ProbeUnavailable(why.clone()), &who);
        }
        // The measuring process's cgroup is an in-process engine's memory; a server's
        // is its container, restarted for each cold start.
        if r.engine.store().server().is_none()
            && let Some(left) = r.eviction.kernel_left(run.cap.memory_limit_bytes)
        {
            note(Note::KernelLeft(left), &who);
        }
        if let Some(problem) = r.steady.as_ref().and_then(|s| s.problem()) {
            note(Note::Steady(problem), &who);
        }
        if !matches!(
            r.regime.verdict,
            RegimeVerdict::DiskBound | RegimeVerdict::Unknown
        ) {
            note(
                Note::FitsInMemory(
                    format_bytes(r.regime.dataset_bytes),
                    format!("{:.2}x", r.regime.ratio),
                    r.regime.basis.to_string(),
                ),
                &who,
            );
        }
    }
    for (n, whos) in per_result {
        w.push(Warning::Results(whos, n));
    }
    w
}

#[cfg(test)]
mod tests {
    use askama::Template;

    use super::Warnings;
    use crate::records::results::RunResults;

    /// A result as the chart's runner records a server pod's: remote, its cap read
    /// from the pod through the Kubernetes API; and one remote with no cap known.
    #[test]
    fn a_server_pod_whose_limits_were_read_is_not_said_uncontrolled() {
        let mut run: RunResults =
            serde_json::from_str(include_str!("../../../tests/fixtures/one-cold-round.json"))
                .unwrap();
        let pod_cap = serde_json::json!({
            "requested": {"memory_bytes": 1073741824u64, "cpus": 0.12},
            "memory_limit_bytes": 1073741824u64, "cpu_limit": 0.12, "origin": "inherited",
            "method": "kubernetes-pod", "cgroup_version": "kubernetes",
            "cgroup": "pod default/bench-blobrace-postgres-0 container postgres",
            "notes": [], "housekeeping": []
        });
        run.results[0].remote = Some("in a pod".into());
        run.results[0].cap = Some(serde_json::from_value(pod_cap).unwrap());
        let html = Warnings::of(&run).unwrap().render().unwrap();
        assert!(html.contains("server in a Kubernetes pod</b> (pod default/bench-blobrace-postgres-0 container postgres)"), "{html}");
        assert!(!html.contains("not controlled"), "{html}");

        run.results[0].cap = None;
        let html = Warnings::of(&run).unwrap().render().unwrap();
        assert!(html.contains("<b>not controlled</b>"), "{html}");
        assert!(!html.contains("Kubernetes pod"), "{html}");
    }
}
