//! The kinds of table a page's marker names, each rendered from results:
//!
//! - `verdict results=F cache=C target=T [p50-at=S]`: each engine's largest size up to
//!   which every size's p99 meets the target, where the walk stopped and why (the
//!   report's verdict, `report::verdict::verdict`), and its p50 at one size;
//! - `engines results=F size=S [mean=yes]`: each engine's p50 / p99 at one size, a
//!   column per cache state the run measured, with the mean after them where asked
//!   (the seed's post gave means);
//! - `sizes results=F columns=ENGINE:CACHE,...`: p50 / p99 per size, a column each;
//! - `side-by-side results=F1,F2,... size=S cache=C [column=run|deployment|content|conditions]`:
//!   each engine's p50 / p99 (mean) at one size in several runs, a column per run named
//!   by what differs;
//! - `variants results=F1,F2,... size=S cache=C`: the rows `blobrace variants` sets
//!   side by side (each layout or content of an engine: p50 and p99 with their ratio to
//!   the reference row, p50 over the same run's floor, hit ratio, disk bytes per fetch,
//!   bytes kept per blob byte, load rate), one client.
//!
//! Every table begins with the line naming its runs: id, date, commit and machine.

use anyhow::{Result, anyhow, bail};

use super::Marker;
use crate::db::registry::EngineKind;
use crate::records::results::{EngineResult, RunResults};
use crate::report::data;
use crate::report::verdict::{self, SizeJudgement};
use crate::workload::steady::CacheState;

/// Each kind and the settings it takes; `results` is every kind's.
const KINDS: &[(&str, &[&str])] = &[
    ("verdict", &["cache", "target", "p50-at"]),
    ("engines", &["size", "mean"]),
    ("sizes", &["columns"]),
    ("side-by-side", &["size", "cache", "column"]),
    ("variants", &["size", "cache"]),
];

/// The results files a marker names (`results=a.json,b.json`), as written.
pub fn results_paths(marker: &Marker) -> Result<Vec<String>> {
    let Some((_, allowed)) = KINDS.iter().find(|(k, _)| *k == marker.kind) else {
        let known: Vec<&str> = KINDS.iter().map(|(k, _)| *k).collect();
        bail!(
            "no table kind `{}`: the kinds are {}",
            marker.kind,
            known.join(", ")
        );
    };
    if let Some(key) = marker
        .settings
        .keys()
        .find(|k| *k != "results" && !allowed.contains(&k.as_str()))
    {
        bail!(
            "a `{}` table takes no `{key}`: it takes results, {}",
            marker.kind,
            allowed.join(", ")
        );
    }
    let paths: Vec<String> = setting(marker, "results")?
        .split(',')
        .map(str::to_string)
        .collect();
    if paths.len() > 1 && !["side-by-side", "variants"].contains(&marker.kind.as_str()) {
        bail!(
            "a `{}` table is of one run: results= names one file",
            marker.kind
        );
    }
    Ok(paths)
}

fn setting<'a>(marker: &'a Marker, key: &str) -> Result<&'a str> {
    marker
        .settings
        .get(key)
        .map(String::as_str)
        .ok_or_else(|| anyhow!("a `{}` table needs {key}=", marker.kind))
}

/// The table's lines: the runs it is from, then the Markdown table.
pub fn render(marker: &Marker, runs: &[(String, RunResults)]) -> Result<Vec<String>> {
    let mut lines = vec![provenance(runs), String::new()];
    let first = &runs[0].1;
    lines.extend(match marker.kind.as_str() {
        "verdict" => verdict(marker, first)?,
        "engines" => engines(marker, first)?,
        "sizes" => sizes(marker, first)?,
        "variants" => variants(marker, runs)?,
        _ => side_by_side(marker, runs)?,
    });
    Ok(lines)
}

/// "From run `ID` (2026-12-02, commit `0004304`, 2 CPUs, 24 GiB, CPU model):
/// results/ID.json." Several runs: each so.
fn provenance(runs: &[(String, RunResults)]) -> String {
    let each: Vec<String> = runs
        .iter()
        .map(|(path, run)| {
            let commit = match run.provenance.as_ref().and_then(|p| p.commit.clone()) {
                Some(c) => {
                    let changed = run.provenance.as_ref().and_then(|p| p.dirty) == Some(true);
                    let short = &c[..c.len().min(7)];
                    format!(
                        "commit `{short}`{}",
                        if changed { " with changes" } else { "" }
                    )
                }
                None => "commit unknown".to_string(),
            };
            let m = &run.machine;
            format!(
                "run `{}` ({}, {commit}, {} CPUs, {} RAM, {}; [results]({path}))",
                run.run_id,
                run.started_at.get(..10).unwrap_or(&run.started_at),
                m.logical_cpus,
                spaced(&crate::size::format_bytes_approx(m.ram_bytes)),
                m.cpu_model.trim(),
            )
        })
        .collect();
    format!("*Written by `blobrace tables` from {}.*", each.join("; "))
}

/// `4MiB` as a page writes it: `4 MiB`.
fn spaced(label: &str) -> String {
    match label.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) if i > 0 => format!("{} {}", &label[..i], &label[i..]),
        _ => label.to_string(),
    }
}

fn size_label(bytes: u64) -> String {
    spaced(&crate::size::format_bytes(bytes))
}

/// Three significant figures, a space before the unit: `372 µs`, `1.68 ms`, `89.1 ms`.
pub fn duration(ns: f64) -> String {
    const UNITS: [&str; 4] = ["ns", "µs", "ms", "s"];
    let (mut value, mut unit) = (ns, 0);
    // 999.7 µs would round to "1000 µs": it is said 1.00 ms.
    while value >= 999.5 && unit < UNITS.len() - 1 {
        value /= 1e3;
        unit += 1;
    }
    let decimals = match value {
        v if v >= 99.95 => 0,
        v if v >= 9.995 => 1,
        _ => 2,
    };
    format!("{value:.decimals$} {}", UNITS[unit])
}

fn p50_p99(r: &EngineResult) -> String {
    let l = &r.measured.latency;
    format!(
        "{} / {}",
        duration(l.p50_ns as f64),
        duration(l.p99_ns as f64)
    )
}

fn cache_named(name: &str) -> Result<CacheState> {
    match name {
        "cold" => Ok(CacheState::Cold),
        "steady" => Ok(CacheState::Steady),
        other => bail!("no cache state `{other}`: cold or steady"),
    }
}

fn size_named(text: &str) -> Result<u64> {
    crate::size::parse_bytes(text).map_err(|e| anyhow!("{e}"))
}

/// The run's view of one cache state, refused where it measured none.
fn view(run: &RunResults, cache: CacheState) -> Result<RunResults> {
    if !run.caches().contains(&cache) {
        bail!("run {} measured no {} cache", run.run_id, cache.name());
    }
    Ok(run.view(cache))
}

fn row(cells: impl IntoIterator<Item = String>) -> String {
    let cells: Vec<String> = cells.into_iter().collect();
    format!("| {} |", cells.join(" | "))
}

fn header(cells: &[String]) -> Vec<String> {
    vec![
        row(cells.iter().cloned()),
        row(cells.iter().map(|_| "---".to_string())),
    ]
}

const NOT_MEASURED: &str = "not measured";

fn verdict(marker: &Marker, run: &RunResults) -> Result<Vec<String>> {
    let cache = cache_named(setting(marker, "cache")?)?;
    let target =
        crate::config::parse_duration(setting(marker, "target")?).map_err(|e| anyhow!("{e}"))?;
    let target_ns = target.as_nanos() as u64;
    let p50_at = marker
        .settings
        .get("p50-at")
        .map(|s| size_named(s))
        .transpose()?;
    let view = view(run, cache)?;
    let mut cells = vec![
        "engine".to_string(),
        format!("p99 ≤ {} up to", duration(target_ns as f64)),
        "where it stops".to_string(),
    ];
    cells.extend(p50_at.map(|s| format!("p50 at {}", size_label(s))));
    let mut lines = header(&cells);
    for engine in data::engines(&view) {
        let v = verdict::verdict(&view, engine, target_ns);
        let largest = v.largest.map_or("none".to_string(), size_label);
        let mut stops: Vec<String> = match &v.stopped {
            Some((size, SizeJudgement::Misses { p99_ns })) => {
                vec![format!(
                    "{}: p99 {}",
                    size_label(*size),
                    duration(*p99_ns as f64)
                )]
            }
            Some((size, SizeJudgement::CannotJudge { why })) => {
                vec![format!("{}: cannot judge ({why})", size_label(*size))]
            }
            _ => Vec::new(),
        };
        stops.extend(v.close_calls.iter().map(|(size, iv)| {
            format!(
                "close call at {}: p99 {}-{} spans the target",
                size_label(*size),
                duration(iv.lo_ns),
                duration(iv.hi_ns)
            )
        }));
        let mut cells = vec![engine.name().to_string(), largest, stops.join("; ")];
        cells.extend(p50_at.map(|s| {
            view.result(engine, s)
                .map_or(NOT_MEASURED.to_string(), |r| {
                    duration(r.measured.latency.p50_ns as f64)
                })
        }));
        lines.push(row(cells));
    }
    Ok(lines)
}

fn engines(marker: &Marker, run: &RunResults) -> Result<Vec<String>> {
    let size = size_named(setting(marker, "size")?)?;
    if !data::sizes(run).contains(&size) {
        bail!("run {} measured no {}", run.run_id, size_label(size));
    }
    let mean = match marker.settings.get("mean").map(String::as_str) {
        None | Some("no") => false,
        Some("yes") => true,
        Some(other) => bail!("mean={other}: yes or no"),
    };
    let caches = run.caches();
    let mut cells = vec!["engine".to_string()];
    cells.extend(caches.iter().map(|c| {
        let mean = if mean { " (mean)" } else { "" };
        format!("{} p50 / p99{mean}", c.name())
    }));
    let mut lines = header(&cells);
    let views: Vec<RunResults> = caches.iter().map(|&c| run.view(c)).collect();
    for engine in data::engines(run) {
        let mut cells = vec![engine.name().to_string()];
        cells.extend(views.iter().map(|v| {
            v.result(engine, size)
                .map_or(NOT_MEASURED.to_string(), |r| {
                    if mean {
                        format!("{} ({})", p50_p99(r), duration(r.measured.latency.mean_ns))
                    } else {
                        p50_p99(r)
                    }
                })
        }));
        lines.push(row(cells));
    }
    Ok(lines)
}

fn sizes(marker: &Marker, run: &RunResults) -> Result<Vec<String>> {
    let mut columns = Vec::new();
    for column in setting(marker, "columns")?.split(',') {
        let (engine, cache) = column
            .split_once(':')
            .ok_or_else(|| anyhow!("column `{column}` is not ENGINE:CACHE"))?;
        let engine: EngineKind = engine.parse().map_err(|e| anyhow!("{e}"))?;
        columns.push((engine, view(run, cache_named(cache)?)?, cache.to_string()));
    }
    let mut cells = vec!["size".to_string()];
    cells.extend(columns.iter().map(|(e, _, c)| format!("{e} {c}")));
    let mut lines = header(&cells);
    for size in data::sizes(run) {
        let mut cells = vec![size_label(size)];
        cells.extend(columns.iter().map(|(engine, view, _)| {
            view.result(*engine, size)
                .map_or(NOT_MEASURED.to_string(), p50_p99)
        }));
        lines.push(row(cells));
    }
    Ok(lines)
}

/// A column's name: what differs between the runs (`column=`), the run id by default.
fn column_name(run: &RunResults, column: &str) -> Result<String> {
    Ok(match column {
        "run" => run.run_id.clone(),
        "deployment" => run
            .config
            .deployment
            .as_ref()
            .map_or("this machine".to_string(), |d| d.name.clone()),
        "content" => run.config.content.to_string(),
        "conditions" => conditions(run),
        other => bail!("no column `{other}`: run, deployment, content or conditions"),
    })
}

/// What the stores ran under: the servers' cap, this process's (as in force), and the
/// disk's added latency: `servers 1 GiB, 2 CPUs; in process uncapped; disk +4ms`.
fn conditions(run: &RunResults) -> String {
    let c = &run.config;
    let servers = format!(
        "servers {}, {}",
        c.cap.memory_bytes.map_or("uncapped".into(), size_label),
        c.cap
            .cpus
            .map_or("any CPUs".into(), |n| format!("{n} CPUs"))
    );
    let process = match run.cap.memory_limit_bytes {
        None => "in process uncapped".to_string(),
        Some(b) => format!("in process {}", size_label(b)),
    };
    let disk = c
        .disk_latency
        .map(|d| format!("; disk +{d}"))
        .unwrap_or_default();
    format!("{servers}; {process}{disk}")
}

fn side_by_side(marker: &Marker, runs: &[(String, RunResults)]) -> Result<Vec<String>> {
    let size = size_named(setting(marker, "size")?)?;
    let cache = cache_named(setting(marker, "cache")?)?;
    let column = marker.settings.get("column").map_or("run", String::as_str);
    let mut views = Vec::new();
    let mut cells = vec!["engine".to_string()];
    for (_, run) in runs {
        cells.push(column_name(run, column)?);
        views.push(view(run, cache)?);
    }
    let mut engines: Vec<EngineKind> = views.iter().flat_map(data::engines).collect();
    engines.sort();
    engines.dedup();
    let mut lines = header(&cells);
    for engine in engines {
        let mut cells = vec![engine.name().to_string()];
        cells.extend(views.iter().map(|v| {
            v.result(engine, size)
                .map_or(NOT_MEASURED.to_string(), |r| {
                    format!("{} ({})", p50_p99(r), duration(r.measured.latency.mean_ns))
                })
        }));
        lines.push(row(cells));
    }
    Ok(lines)
}

/// The parts ("disk cap gp3", "content text") every layout label has.
pub(super) fn common_layout_parts<'a>(layouts: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut common: Option<Vec<&str>> = None;
    for layout in layouts {
        let parts: Vec<&str> = layout.split(", ").filter(|p| *p != "default").collect();
        common = Some(match common {
            None => parts,
            Some(kept) => kept.into_iter().filter(|p| parts.contains(p)).collect(),
        });
    }
    common
        .unwrap_or_default()
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// `layout` less the parts every row has; "default" where nothing is left.
pub(super) fn layout_without(layout: &str, common: &[String]) -> String {
    let parts: Vec<&str> = layout
        .split(", ")
        .filter(|p| !common.iter().any(|c| c == p))
        .collect();
    if parts.is_empty() {
        "default".into()
    } else {
        parts.join(", ")
    }
}

fn variants(marker: &Marker, runs: &[(String, RunResults)]) -> Result<Vec<String>> {
    let size = size_named(setting(marker, "size")?)?;
    let cache = cache_named(setting(marker, "cache")?)?;
    let read: Vec<RunResults> = runs.iter().map(|(_, r)| r.clone()).collect();
    let rows: Vec<_> = crate::report::variant_rows::rows(&read)
        .into_iter()
        .filter(|r| r.size_bytes == size && r.cache == cache && r.clients == 1)
        .collect();
    if rows.is_empty() {
        bail!(
            "the runs measured no {} {} cell",
            size_label(size),
            cache.name()
        );
    }
    let cells: Vec<String> = [
        "engine",
        "layout",
        "p50",
        "p99",
        "p50 ÷ floor",
        "hit ratio",
        "disk read a fetch",
        "bytes kept a blob byte",
        "load",
    ]
    .map(str::to_string)
    .to_vec();
    let with_ratio = |ns: f64, ratio: Option<f64>, reference: bool| match ratio {
        Some(x) if !reference => format!("{} ({x:.2}x)", duration(ns)),
        _ => duration(ns),
    };
    let or_unavailable = |v: Option<String>| v.unwrap_or_else(|| "unavailable".to_string());
    // What every row shares (a deployment every run was measured under) is said once
    // above the table: each row's label keeps what sets it apart.
    let common = common_layout_parts(rows.iter().map(|r| r.layout.as_str()));
    // Each engine's reference row first, once what every row shares is taken off its label.
    let mut rows = rows;
    let first_of = |engine| rows.iter().position(|r| r.engine == engine);
    let order: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                first_of(r.engine),
                layout_without(&r.layout, &common) != "default",
            )
        })
        .collect();
    let mut keyed: Vec<_> = order.into_iter().zip(rows.drain(..)).collect();
    keyed.sort_by_key(|(key, _)| *key);
    let rows: Vec<_> = keyed.into_iter().map(|(_, r)| r).collect();
    let mut lines = Vec::new();
    if !common.is_empty() {
        lines.push(format!("Every row: {}.", common.join(", ")));
        lines.push(String::new());
    }
    lines.extend(header(&cells));
    for r in rows {
        lines.push(row([
            r.engine.name().to_string(),
            layout_without(&r.layout, &common),
            with_ratio(r.p50_ns, r.p50_ratio, r.reference),
            with_ratio(r.p99_ns, r.p99_ratio, r.reference),
            r.p50_vs_floor
                .map_or("no floor".to_string(), |x| format!("{x:.2}")),
            or_unavailable(r.hit_ratio.map(|h| format!("{:.0}%", h * 100.0))),
            or_unavailable(
                r.disk_per_fetch
                    .map(|b| spaced(&crate::size::format_bytes_approx(b as u64))),
            ),
            or_unavailable(r.per_blob_byte.map(|k| format!("{k:.2}"))),
            r.load_mb_per_s
                .map_or("loaded before".to_string(), |m| format!("{m:.0} MB/s")),
        ]));
    }
    Ok(lines)
}
