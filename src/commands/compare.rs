//! `blobrace compare`: runs set against a baseline cell by cell, refused where their
//! manifests make them two experiments, and a gate on regressions.

use anyhow::{Result, bail};

use super::cli::CompareArgs;
use crate::error::InputError;
use crate::records::comparable::differences;
use crate::report::compare::Comparison;
use crate::report::regression::regressions;

pub(super) fn compare(args: CompareArgs) -> Result<()> {
    let runs = super::stored::read_runs(&args.runs, &args.results_dir)?;
    let (baseline, others) = runs.split_first().expect("clap asks for two runs or more");
    let differ: Vec<_> = others
        .iter()
        .map(|run| differences(baseline, run))
        .collect();
    // Every refusal first: nothing is printed of a comparison that cannot stand.
    for (run, differ) in others.iter().zip(&differ) {
        let refused: Vec<String> = differ
            .iter()
            .filter(|(dimension, _, _)| !args.vary.iter().any(|v| v == dimension))
            .map(|(dimension, a, b)| format!("{dimension}: {a} | {b}"))
            .collect();
        if !refused.is_empty() {
            bail!(InputError::Compare(format!(
                "{} and {} were measured differently, so their figures are two experiments: {} (baseline | this run); compare runs alike, or name the difference that is the point with --vary {}",
                baseline.run_id,
                run.run_id,
                refused.join("; "),
                refused
                    .iter()
                    .map(|r| r.split(':').next().unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(" --vary ")
            )));
        }
    }
    let threshold = args.fail_on_regression.unwrap_or(0.0);
    let (mut slower, mut not_judged, mut cells) = (Vec::new(), Vec::new(), 0);
    for (run, differ) in others.iter().zip(&differ) {
        for (dimension, a, b) in differ {
            say!("compare: {dimension} differs, as --vary asks: {a} | {b}");
        }
        for vary in &args.vary {
            if !differ.iter().any(|(d, _, _)| d == vary) {
                say!("compare: --vary {vary}, but the runs do not differ in it");
            }
        }
        if run.finished_at.is_none() {
            say!(
                "compare: run {} has not ended (still measured, or killed): its cells so far",
                run.run_id
            );
        }
        for cache in run.caches() {
            if !baseline.caches().contains(&cache) {
                continue;
            }
            let comparison = Comparison::of(baseline, run, cache, 0.10);
            cells += comparison.changes.len();
            crate::say::show_text(&comparison.table());
            let (found, unjudged) = regressions(&comparison, threshold);
            not_judged.extend(unjudged.into_iter().map(|u| {
                (
                    u.ratio,
                    format!("{} ({} cache, run {})", u.line(), cache.name(), run.run_id),
                )
            }));
            slower.extend(
                found
                    .into_iter()
                    .map(|r| format!("{} ({} cache, run {})", r.line(), cache.name(), run.run_id)),
            );
        }
    }
    if cells == 0 {
        bail!(InputError::Compare(
            "they have no cell in common (no engine measured at the same size and cache state in both): nothing to compare".into()
        ));
    }
    // What the gate could not judge is said cell by cell, those slower by more than the
    // threshold by their raw figures first and loudly: a p99 10,690 times slower once
    // passed the gate as one of "n cells not judged".
    not_judged.sort_by(|a, b| b.0.total_cmp(&a.0));
    let suspect = not_judged
        .iter()
        .filter(|(ratio, _)| *ratio > 1.0 + threshold)
        .count();
    if !not_judged.is_empty() {
        let list: Vec<&str> = not_judged.iter().map(|(_, line)| line.as_str()).collect();
        say!(
            "compare: {} p50/p99 cell(s) not judged: too few fetches for an interval (measure longer, or --repeat){}:\n  {}",
            not_judged.len(),
            if suspect > 0 {
                format!(
                    "; WARNING: {suspect} of them slower than the baseline by more than {:.0}% by their raw figures, which the gate cannot see (--fail-on-unjudged fails on them)",
                    threshold * 100.0
                )
            } else {
                String::new()
            },
            list.join("\n  ")
        );
    }
    let unjudged_fails = (args.fail_on_unjudged && !not_judged.is_empty()).then(|| {
        anyhow::anyhow!(
            "{} p50/p99 cell(s) not judged (--fail-on-unjudged): measure longer or with --repeat, so that each has an interval",
            not_judged.len()
        )
    });
    let beyond = match args.fail_on_regression {
        Some(pct) => format!("beyond noise and by more than {:.0}%", pct * 100.0),
        None => "beyond noise".into(),
    };
    if slower.is_empty() {
        say!("compare: no cell slower {beyond}");
        return unjudged_fails.map_or(Ok(()), Err);
    }
    let list = slower.join("\n  ");
    if args.fail_on_regression.is_some() {
        bail!("{} cell(s) slower {beyond}:\n  {list}", slower.len());
    }
    say!(
        "compare: {} cell(s) slower {beyond}:\n  {list}",
        slower.len()
    );
    unjudged_fails.map_or(Ok(()), Err)
}
