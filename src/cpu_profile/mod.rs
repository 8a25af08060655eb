//! `--profile-fetches`: where one client's time goes. After an engine's 1-client
//! measurement, the same opened engine fetches on for the given time under a
//! sampling CPU profiler (pprof, SIGPROF at `FREQUENCY` Hz): a flame graph SVG per
//! engine and size, and a short split of the client's time.
//!
//! A CPU profiler only sees time on a CPU. So the split has two parts: the process's
//! CPU time ÷ wall time (the rest is waiting: for the server's answer, or the disk),
//! and, of the CPU samples, the share in the ORM (sea_orm), the driver (sqlx), SQLite's
//! own C code, and everything else (tokio, allocation, blobrace); the kernel's share of
//! the CPU time is the system time getrusage reports.

use std::path::Path;

pub mod go_pprof;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Samples per second of CPU time asked for: prime, so it does not beat with periodic
/// work. The kernel's profiling timer ticks with its clock (250 Hz here): fewer arrive,
/// and `samples` says how many did.
pub const FREQUENCY: i32 = 997;

/// What one profile found (results.json `profiles`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FetchProfile {
    pub engine: String,
    pub size: String,
    /// The cache state the engine was measured in just before ("cold", "steady").
    pub cache: String,
    pub fetches: u64,
    pub wall_seconds: f64,
    /// The process's user + system CPU time over the wall time (can pass 1 where
    /// an engine works in more than one thread, as sqlx's SQLite worker does).
    pub cpu_per_wall: f64,
    /// System time ÷ CPU time: system calls (reads, socket I/O, futexes).
    pub kernel_share_of_cpu: f64,
    /// CPU samples taken.
    pub samples: u64,
    /// Shares of the samples, by the innermost frame of a known part.
    pub orm_share: f64,
    pub driver_share: f64,
    pub sqlite_share: f64,
    pub other_share: f64,
    /// The flame graph, relative to the run directory.
    pub flamegraph: String,
    /// The server's own CPU profile over the same seconds, where it has a pprof
    /// endpoint (Dolt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<go_pprof::ServerProfile>,
    /// Why a server that could be profiled was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_unavailable: Option<String>,
}

impl FetchProfile {
    /// "client on CPU 23% of the time (kernel 40% of it); of its samples: ORM 12%, ..."
    pub fn line(&self) -> String {
        let pct = |x: f64| format!("{:.0}%", x * 100.0);
        format!(
            "{} {} {}: {} fetches in {:.1} s; client on CPU {} of the wall time (waiting the rest: for the server or the disk), kernel {} of that CPU; of {} CPU samples: ORM {}, driver {}, SQLite {}, other {} ({})",
            self.engine,
            self.size,
            self.cache,
            self.fetches,
            self.wall_seconds,
            pct(self.cpu_per_wall),
            pct(self.kernel_share_of_cpu),
            self.samples,
            pct(self.orm_share),
            pct(self.driver_share),
            pct(self.sqlite_share),
            pct(self.other_share),
            self.flamegraph
        )
    }
}

/// The part of the client a sample's stack is in: its innermost (leaf-most) frame
/// that belongs to a known part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Orm,
    Driver,
    Sqlite,
    Other,
}

pub fn part_of(frames_leaf_first: &[String]) -> Part {
    for name in frames_leaf_first {
        if name.starts_with("sqlite3") {
            return Part::Sqlite;
        }
        if name.contains("sqlx_") || name.contains("sqlx::") {
            return Part::Driver;
        }
        if name.contains("sea_orm") {
            return Part::Orm;
        }
    }
    Part::Other
}

/// User and system CPU time of this process so far.
fn cpu_times() -> (Duration, Duration) {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    (tv(usage.ru_utime), tv(usage.ru_stime))
}

/// Profile `fetch` (which fetches until its time is up and returns how many) and
/// write the flame graph to `dir/file_name`.
pub fn profile<F>(
    (engine, size, cache): (&str, &str, &str),
    dir: &Path,
    file_name: &str,
    fetch: F,
) -> Result<FetchProfile>
where
    F: FnOnce() -> Result<u64>,
{
    let guard = pprof::ProfilerGuardBuilder::default()
        .frequency(FREQUENCY)
        .build()
        .context("cannot start the CPU profiler")?;
    let (user_before, sys_before) = cpu_times();
    let started = Instant::now();
    let fetches = fetch()?;
    let wall = started.elapsed();
    let (user_after, sys_after) = cpu_times();
    let report = guard
        .report()
        .build()
        .context("cannot build the CPU profile")?;
    drop(guard);
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(file_name);
    let file = std::fs::File::create(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    report
        .flamegraph(file)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let mut counts = [0u64; 4];
    for (frames, &count) in &report.data {
        let names: Vec<String> = frames
            .frames
            .iter()
            .flat_map(|symbols| symbols.iter().map(|s| s.name()))
            .collect();
        let slot = match part_of(&names) {
            Part::Orm => 0,
            Part::Driver => 1,
            Part::Sqlite => 2,
            Part::Other => 3,
        };
        counts[slot] += count.max(0) as u64;
    }
    let samples: u64 = counts.iter().sum();
    let share = |n: u64| {
        if samples == 0 {
            0.0
        } else {
            n as f64 / samples as f64
        }
    };
    let user = user_after.saturating_sub(user_before);
    let sys = sys_after.saturating_sub(sys_before);
    let cpu = (user + sys).as_secs_f64();
    Ok(FetchProfile {
        engine: engine.to_string(),
        size: size.to_string(),
        cache: cache.to_string(),
        fetches,
        wall_seconds: wall.as_secs_f64(),
        cpu_per_wall: cpu / wall.as_secs_f64().max(1e-9),
        kernel_share_of_cpu: if cpu > 0.0 {
            sys.as_secs_f64() / cpu
        } else {
            0.0
        },
        samples,
        orm_share: share(counts[0]),
        driver_share: share(counts[1]),
        sqlite_share: share(counts[2]),
        other_share: share(counts[3]),
        flamegraph: format!(
            "{}/{file_name}",
            dir.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("profiles")
        ),
        server: None,
        server_unavailable: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_sample_belongs_to_the_innermost_known_part() {
        // SQLite's C code called by sqlx called by SeaORM: SQLite's time.
        assert_eq!(
            part_of(&stack(&[
                "sqlite3VdbeExec",
                "sqlx_sqlite::worker",
                "sea_orm::executor"
            ])),
            Part::Sqlite
        );
        // memcpy inside the driver, under the ORM: the driver's.
        assert_eq!(
            part_of(&stack(&[
                "__memmove_avx",
                "sqlx_core::io::read",
                "sea_orm::query"
            ])),
            Part::Driver
        );
        assert_eq!(
            part_of(&stack(&[
                "malloc",
                "sea_orm::executor::select",
                "tokio::runtime"
            ])),
            Part::Orm
        );
        assert_eq!(
            part_of(&stack(&["pread64", "blobrace::db::engine::floor"])),
            Part::Other
        );
        assert_eq!(part_of(&[]), Part::Other);
    }
}
