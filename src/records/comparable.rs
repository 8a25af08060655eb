//! What makes two runs' figures comparable (`blobrace compare`): the dimensions a run's
//! manifest fixes, each as a label. Two runs that differ in one measured two
//! experiments; a comparison names the dimension that is its point (`--vary`) and is
//! refused on any other. The build (blobrace's commit) is never one: a change of code
//! is what a comparison is most often for.

use std::collections::BTreeSet;

use super::results::RunResults;
use crate::size::format_bytes;

/// Every dimension, as `--vary` names it, and what it covers.
pub const DIMENSIONS: [(&str, &str); 9] = [
    ("dataset", "seed, bytes per size class, size mix"),
    (
        "content",
        "what the blobs hold (--content: random bytes, text, JSON, HTML, a ratio, a folder's files)",
    ),
    (
        "layout",
        "key type, SQLite page and mmap_size, PostgreSQL storage, RocksDB blob files",
    ),
    ("workload", "access pattern, rows changed, a writer"),
    ("cap", "the measuring process's memory and CPU cap"),
    ("disk-cap", "the disk's rate (--disk-cap)"),
    (
        "deployment",
        "a network round trip, a disk's latency, the readahead, a named deployment",
    ),
    (
        "machine",
        "CPU, cores, memory, the data's file system and device",
    ),
    (
        "engine-version",
        "each engine's and server's version as it read it back",
    ),
];

/// `run`'s label on every dimension, in `DIMENSIONS`' order.
pub fn dimensions(run: &RunResults) -> Vec<(&'static str, String)> {
    let c = &run.config;
    let m = &run.machine;
    let or_none = |v: Option<String>| v.unwrap_or_else(|| "none".into());
    vec![
        (
            "dataset",
            format!(
                "seed {}, {} per size class, size mix {}",
                c.seed,
                format_bytes(c.dataset_bytes),
                or_none(c.size_mix.map(|mix| mix.get().canonical())),
            ),
        ),
        // A folder's content with the digest of its bytes: the same folder changed is
        // another content.
        ("content", String::from(c.content)),
        (
            "layout",
            format!("key {} · {}", c.key, c.database_knobs.label()),
        ),
        (
            "workload",
            format!(
                "access {}, churn {}, writer {}",
                c.access,
                or_none(c.churn.map(|churn| churn.to_string())),
                or_none(c.write_rate.map(|r| format!("{r}/s")))
            ),
        ),
        (
            "cap",
            format!(
                "memory {}, CPU {}{}",
                run.cap.memory_label(),
                run.cap.cpu_label(),
                if c.uncapped_in_process {
                    // The servers' cap differs from this process's: said, so that two
                    // such runs compare and a fair one does not pass for one.
                    format!(
                        " in process; the servers' memory {}, CPU {}",
                        c.cap
                            .memory_bytes
                            .map_or("none".into(), crate::size::format_bytes),
                        c.cap.cpus.map_or("none".into(), |c| c.to_string())
                    )
                } else {
                    String::new()
                }
            ),
        ),
        (
            "disk-cap",
            or_none(c.disk_cap.as_ref().map(|d| d.asked.clone())),
        ),
        (
            "deployment",
            format!(
                "{}network {}, disk latency {}, readahead {}",
                c.deployment
                    .as_ref()
                    .map(|d| format!("{} · ", d.name))
                    .unwrap_or_default(),
                or_none(c.network_rtt.map(|n| n.to_string())),
                or_none(c.disk_latency.map(|d| d.to_string())),
                c.readahead
            ),
        ),
        (
            "machine",
            format!(
                "{}, {} CPUs, {} RAM, data on {} {}",
                m.cpu_model,
                m.logical_cpus,
                format_bytes(m.ram_bytes),
                m.data_filesystem,
                m.data_device
            ),
        ),
        ("engine-version", engine_versions(run)),
    ]
}

/// "floor: -; sqlite: sqlite_version=3.51.1": the versions each engine read back.
fn engine_versions(run: &RunResults) -> String {
    let versions: BTreeSet<String> = run
        .results
        .iter()
        .flat_map(|r| {
            r.settings
                .iter()
                .filter(|(key, _)| key.contains("version"))
                .map(move |(key, value)| format!("{}: {key}={value}", r.engine.name()))
        })
        .collect();
    if versions.is_empty() {
        "none recorded".into()
    } else {
        versions.into_iter().collect::<Vec<_>>().join("; ")
    }
}

/// Where `a` and `b` differ: (dimension, a's label, b's label).
pub fn differences(a: &RunResults, b: &RunResults) -> Vec<(&'static str, String, String)> {
    dimensions(a)
        .into_iter()
        .zip(dimensions(b))
        .filter(|((_, x), (_, y))| x != y)
        .map(|((name, x), (_, y))| (name, x, y))
        .collect()
}
