//! Database or object store? Per size, the fastest engine, and each object store's
//! p50 and p99 as a ratio to the floor's and to the best database's of the same run:
//! one line a person can act on (`templates/report/object_store.html`).

use askama::Template;

use crate::records::results::{EngineResult, RunResults};
use crate::stats::format_ns;

pub(super) struct SizeLine {
    size: String,
    /// "floor (p50 420 µs, p99 578 µs)".
    fastest: String,
    /// One sentence per object store at this size.
    stores: Vec<String>,
}

#[derive(Template)]
#[template(path = "report/object_store.html")]
pub(super) struct ObjectStore {
    lines: Vec<SizeLine>,
}

fn p50(r: &EngineResult) -> u64 {
    r.measured.latency.p50_ns
}

fn p99(r: &EngineResult) -> u64 {
    r.measured.latency.p99_ns
}

/// `a ÷ b` as "2.1x", or "unavailable" where `b` is not a measured figure.
fn ratio(a: u64, b: u64) -> String {
    if b == 0 {
        "unavailable".into()
    } else {
        format!("{:.1}x", a as f64 / b as f64)
    }
}

impl ObjectStore {
    /// None where the run measured no object store.
    pub fn of(run: &RunResults) -> Option<Self> {
        let is_store = |r: &&EngineResult| r.engine.store().is_object_store();
        run.results.iter().find(is_store)?;
        let mut sizes: Vec<u64> = run.results.iter().map(|r| r.size_bytes).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let lines = sizes
            .into_iter()
            .filter_map(|size| {
                let here: Vec<&EngineResult> = run
                    .results
                    .iter()
                    .filter(|r| r.size_bytes == size)
                    .collect();
                let stores: Vec<&EngineResult> = here.iter().copied().filter(is_store).collect();
                if stores.is_empty() {
                    return None;
                }
                let fastest = here.iter().min_by_key(|r| p50(r))?;
                let floor = here.iter().find(|r| r.engine.store().is_floor());
                // A database: any store but the floor, fs's files and the object stores.
                let best_db = here
                    .iter()
                    .filter(|r| {
                        let store = r.engine.store();
                        !store.is_floor() && !store.is_object_store() && !store.is_file_per_blob()
                    })
                    .min_by_key(|r| p99(r));
                let sentences = stores
                    .iter()
                    .map(|s| {
                        let mut parts = Vec::new();
                        if let Some(db) = best_db {
                            parts.push(format!(
                                "p50 {} and p99 {} the best database's ({}, by p99)",
                                ratio(p50(s), p50(db)),
                                ratio(p99(s), p99(db)),
                                db.engine.name()
                            ));
                        }
                        if let Some(floor) = floor {
                            parts.push(format!(
                                "p50 {} and p99 {} the floor's",
                                ratio(p50(s), p50(floor)),
                                ratio(p99(s), p99(floor))
                            ));
                        }
                        if parts.is_empty() {
                            parts.push("no database or floor measured beside it".into());
                        }
                        format!(
                            "{} (p50 {}, p99 {}): {}",
                            s.engine.name(),
                            format_ns(p50(s) as f64),
                            format_ns(p99(s) as f64),
                            parts.join("; ")
                        )
                    })
                    .collect();
                Some(SizeLine {
                    size: here[0].size.clone(),
                    fastest: format!(
                        "{} (p50 {}, p99 {})",
                        fastest.engine.name(),
                        format_ns(p50(fastest) as f64),
                        format_ns(p99(fastest) as f64)
                    ),
                    stores: sentences,
                })
            })
            .collect();
        Some(ObjectStore { lines })
    }
}
