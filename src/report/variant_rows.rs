//! The rows `blobrace variants` compares: the same engines measured under different
//! dataset layouts (`--key`, `--sqlite-page-size`, `--sqlite-mmap-size`,
//! `--pg-storage`) or workloads (`--access`, `--churn`, `--write-rate`), one run each, each figure also as a ratio to the engine's
//! default layout. The page (`report::variants`) and its chart
//! (`charts::VariantLatencies`) are drawn from these.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::db::registry::EngineKind;
use crate::db::registry::StoreKind;
use crate::load::LoadOutcome;
use crate::records::results::RunResults;
use crate::workload::steady::CacheState;

/// The layout of `store`'s datasets in `run`, led by the workload it was read under:
/// the choices that differ from the defaults and apply to that store ("access
/// zipfian:0.99", "churn 30% replace", "writer 50/s", "key uuidv7", "page 16384");
/// empty: the default (uniform reads of a fresh dataset, nothing writing).
pub fn layout_of(run: &RunResults, store: StoreKind) -> Vec<String> {
    let config = &run.config;
    let mut parts = config.workload();
    if store.has_keys() && config.key.is_binary() {
        parts.push(format!("key {}", config.key));
    }
    parts.extend(store.db().layout(&config.locations()));
    parts
}

pub use crate::config::NO_WRITER;

/// One engine at one size and cache state under one layout.
#[derive(Debug, Clone, Serialize)]
pub struct VariantRow {
    pub engine: EngineKind,
    pub size_bytes: u64,
    pub cache: CacheState,
    /// Readers at once: 1 (the one-client measurement), or a closed-loop `--clients`
    /// load's count (its p50 and p99 are service times).
    pub clients: u32,
    /// "default", or the layout's choices joined: "key uuidv7, page 16384".
    pub layout: String,
    pub run_id: String,
    pub p50_ns: f64,
    pub p99_ns: f64,
    /// This ÷ the engine's default layout at the same size and cache state (None:
    /// no run measured the default).
    pub p50_ratio: Option<f64>,
    pub p99_ratio: Option<f64>,
    /// p50 ÷ the floor's p50 in the same run (None where that run had no floor).
    pub p50_vs_floor: Option<f64>,
    /// MB/s of the load, where this run loaded it (None: it was loaded before).
    pub load_mb_per_s: Option<f64>,
    pub load_ratio: Option<f64>,
    /// The bytes the store kept for the dataset (measured with the result, else the
    /// load's figure).
    pub disk_bytes: Option<u64>,
    pub disk_ratio: Option<f64>,
    /// `disk_bytes` per byte of its blobs: under 1 where the store compressed them.
    pub per_blob_byte: Option<f64>,
    /// The share of fetches served without a disk read, and the bytes read per fetch.
    pub hit_ratio: Option<f64>,
    pub disk_per_fetch: Option<f64>,
    /// The row the others of its engine, size, cache state and clients are divided by.
    pub reference: bool,
}

impl VariantRow {
    pub fn is_default(&self) -> bool {
        self.layout == "default"
    }
}

type Cell = (EngineKind, u64, CacheState, u32);

/// Every (engine, size, cache, clients, layout) of the runs with a layout choice for
/// their store (fs and the floor have none), closed-loop loads of more clients
/// included. The first run given wins where two measured the same; rows come in
/// engine, size, cache, clients order, the default layout first.
pub fn rows(runs: &[RunResults]) -> Vec<VariantRow> {
    // What blobs hold is a choice for every store, fs and the floor too.
    let contents = runs.iter().any(|run| !run.config.content.is_random());
    let mut by_key: BTreeMap<(Cell, bool, String), VariantRow> = BTreeMap::new();
    for run in runs {
        let one = run.results.iter().map(|r| (r, 1));
        let many = run
            .load_results
            .iter()
            .filter(|l| l.load.point.rate.is_none())
            .map(|l| (&l.result, l.load.point.clients));
        let measured = || one.clone().chain(many.clone());
        for (r, clients) in measured().filter(|(r, _)| r.scenario.repeat == 1) {
            let store = r.engine.store();
            // Keys are a layout choice of every store that has them; fs and the
            // floor have neither keys nor layout choices.
            if !store.has_keys() && !contents {
                continue;
            }
            let parts = layout_of(run, store);
            let layout = if parts.is_empty() {
                "default".to_string()
            } else {
                parts.join(", ")
            };
            let load = run
                .loads
                .iter()
                .find(|l| l.store == store && l.size_bytes == r.size_bytes);
            let floor = measured()
                .find(|(f, c)| {
                    f.engine == EngineKind::floor()
                        && f.size_bytes == r.size_bytes
                        && f.scenario == r.scenario
                        && *c == clients
                })
                .map(|(f, _)| f.measured.latency.p50_ns as f64);
            let p50 = r.measured.latency.p50_ns as f64;
            let kept = r.dataset.stored_bytes.or(load.and_then(|l| l.disk_bytes));
            let key = (
                (r.engine, r.size_bytes, r.scenario.cache, clients),
                layout != "default",
                layout.clone(),
            );
            by_key.entry(key).or_insert(VariantRow {
                engine: r.engine,
                size_bytes: r.size_bytes,
                cache: r.scenario.cache,
                clients,
                layout,
                run_id: run.run_id.clone(),
                p50_ns: p50,
                p99_ns: r.measured.latency.p99_ns as f64,
                p50_ratio: None,
                p99_ratio: None,
                p50_vs_floor: floor.filter(|f| *f > 0.0).map(|f| p50 / f),
                load_mb_per_s: load
                    .filter(|l| l.outcome != LoadOutcome::AlreadyLoaded)
                    .and_then(|l| l.mb_per_s),
                load_ratio: None,
                disk_bytes: kept,
                disk_ratio: None,
                per_blob_byte: kept.map(|b| b as f64 / r.dataset.bytes.max(1) as f64),
                hit_ratio: r.measured.hit_ratio,
                disk_per_fetch: r.measured.disk_bytes_per_fetch,
                reference: false,
            });
        }
    }
    let mut rows: Vec<VariantRow> = by_key.into_values().collect();
    // Each row's reference: the default layout; where no run measured it, the written
    // dataset read without a writer (`--write-rate 0`), so writer runs compare with it.
    let mut defaults: BTreeMap<Cell, VariantRow> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.is_default() || r.layout == NO_WRITER)
    {
        let key = (r.engine, r.size_bytes, r.cache, r.clients);
        if r.is_default() || !defaults.contains_key(&key) {
            defaults.insert(key, r.clone());
        }
    }
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    // A content's row is divided by the same layout's random one ("content text, LZ4
    // compression" by "LZ4 compression"), so a sweep of contents under one store's
    // setting has its reference too.
    let by_layout: BTreeMap<(Cell, String), VariantRow> = rows
        .iter()
        .map(|r| {
            (
                (r.engine, r.size_bytes, r.cache, r.clients),
                r.layout.clone(),
            )
        })
        .zip(rows.iter().cloned())
        .collect();
    for row in &mut rows {
        let cell = (row.engine, row.size_bytes, row.cache, row.clients);
        let random = without_content(&row.layout);
        let same_layout = (random != row.layout)
            .then(|| by_layout.get(&(cell, random)))
            .flatten();
        let Some(d) = same_layout.or_else(|| defaults.get(&cell)) else {
            continue;
        };
        row.reference = row.layout == d.layout;
        row.p50_ratio = ratio(Some(row.p50_ns), Some(d.p50_ns));
        row.p99_ratio = ratio(Some(row.p99_ns), Some(d.p99_ns));
        row.load_ratio = ratio(row.load_mb_per_s, d.load_mb_per_s);
        row.disk_ratio = ratio(
            row.disk_bytes.map(|b| b as f64),
            d.disk_bytes.map(|b| b as f64),
        );
    }
    rows
}

/// A layout's label without its content ("content text, LZ4 compression" ->
/// "LZ4 compression"; "content text" -> "default").
fn without_content(layout: &str) -> String {
    let parts: Vec<&str> = layout
        .split(", ")
        .filter(|p| !p.starts_with("content "))
        .collect();
    if parts.is_empty() {
        "default".into()
    } else {
        parts.join(", ")
    }
}
