//! One run, start to finish, shared by `cargo bench` (criterion drives the
//! fetches) and `blobrace measure` (a fixed-time loop drives them):
//! cap the process → load what is missing → per size and engine (`drive`): evict,
//! open, warm up (`prepare`), measure, record (`record`) → results written after each
//! step; many clients and the sustainable rate (`clients`). What each step finds goes
//! to the run's sinks (`sinks`: the results files, the terminal's lines, the report).

mod clients;
mod dataset_walk;
pub mod drive;
pub mod interrupt;
mod load_plan;
mod loading;
mod metrics;
mod network;
pub mod outlook;
mod parts;
pub mod plan;
mod prepare;
mod progress;
mod readahead;
mod record;
pub mod resume;
pub mod sinks;
pub mod slow_disk;
mod terminal;
pub mod time_spent;
pub mod writer;

use std::path::PathBuf;

use anyhow::Result;

use crate::cap::{CapGuard, CapReport};
use crate::config::RunConfig;
use crate::db::registry::{StoreKind, stores_for};
use crate::error::InputError;
use crate::machine::MachineFacts;
use crate::records::results::{RESULTS_SCHEMA_VERSION, RunResults, new_run_id};
use crate::server_caps::ServerCaps;

pub use prepare::Prepared;
pub use progress::Progress;
pub use sinks::{Finding, Sink};
pub use terminal::print_cap;

pub struct Run {
    pub results: RunResults,
    /// Where each finding goes (`sinks::every_sink`).
    sinks: Vec<Box<dyn Sink>>,
    /// Dropped first: the servers go back to their own caps when the run ends.
    server_caps: ServerCaps,
    /// This part's time: loads, measuring, in all (`outlook`).
    clock: outlook::Clock,
    /// What the loads will take, and the disk plan where every dataset does not fit.
    load_plan: load_plan::LoadPlan,
    /// The readahead set for the run, put back when it ends.
    readahead_holds: Vec<crate::cap::readahead::Hold>,
    /// The latency proxy between the engines and their servers (`--network-rtt`).
    network: Option<crate::deploy::network::LatencyProxy>,
    /// The emulated disk the data directory is on (`--disk-latency`), taken down
    /// after every store and the readahead let go of it.
    slow_disk: Option<crate::deploy::slow_disk::SlowDisk>,
    /// Dropped last (fields drop in order): the watchdogs, the proxy and the disk's
    /// servers are this process's children in its cgroups, and a cgroup with a
    /// process in it cannot be removed (every run left its own behind).
    _cap_guard: CapGuard,
}

/// Apply the run's whole cap (`cap::apply_whole`) and say it. Must run before any thread
/// is spawned and before any data is touched, so every page this process caches is
/// charged to the cap. A requested memory cap that cannot be had stops the run (exit
/// code 2), after saying what is in force instead.
pub fn apply_cap(config: &RunConfig) -> Result<(CapReport, CapGuard)> {
    let process = config.process_cap();
    match crate::cap::apply_whole(process, config.disk_cap.as_ref(), &config.data_dir) {
        Ok((mut report, guard)) => {
            if config.uncapped_in_process {
                report
                    .notes
                    .push(uncapped_in_process_note(config, report.memory_limit_bytes));
            }
            print_cap(&report);
            Ok((report, guard))
        }
        Err(unavailable) => {
            print_cap(&unavailable.report);
            Err(InputError::from(unavailable).into())
        }
    }
}

/// What `--uncapped-in-process` leaves out of the cap. `in_force`: a memory limit this
/// process holds anyway, from a cgroup it started in (the compose runner's container).
fn uncapped_in_process_note(config: &RunConfig, in_force: Option<u64>) -> String {
    let memory = config
        .cap
        .memory_bytes
        .map_or("no memory cap".into(), crate::size::format_bytes);
    let cpus = config
        .cap
        .cpus
        .map_or("no CPU cap".into(), |c| format!("{c} CPUs"));
    match in_force {
        None => format!(
            "--uncapped-in-process (the seed's post's conditions): this process is not capped, so the embedded stores, one file per blob and the floor read from the machine's whole page cache; only the servers' containers run under {memory} and {cpus}"
        ),
        Some(limit) => format!(
            "--uncapped-in-process was asked, but this process started in a cgroup limited to {} that it cannot leave (a container's own limit: the compose runner's is BLOBRACE_CAP): the embedded stores ran under it after all; run on the host (`blobrace measure`, `cargo bench`) for the post's conditions. The servers' containers run under {memory} and {cpus}",
            crate::size::format_bytes(limit)
        ),
    }
}

/// Drop server engines whose server cannot be reached, with one line each saying
/// why and how to start it; an engine asked for by name must run, so there it is an error.
/// Each server that answers is located (`place`): the compose container or remote.
pub async fn reachable_engines(config: &mut RunConfig) -> Result<()> {
    let mut unreachable: Vec<(StoreKind, String)> = Vec::new();
    // What this machine lacks to run a store at all (a system library): said as for a
    // server that does not answer.
    for store in stores_for(&config.engines) {
        if let Some(why) = store.db().unavailable() {
            if config.engines_explicit {
                anyhow::bail!("{} cannot run here: {why}", store.name());
            }
            unreachable.push((store, why));
        }
    }
    for store in stores_for(&config.engines)
        .into_iter()
        .filter(|s| s.is_server())
    {
        let server = store.server().expect("a server store");
        let at = config.locations();
        let probe = async {
            let url = server.require_url(at.server_url(server))?;
            server.probe(&url).await?;
            anyhow::Ok(url)
        };
        match probe.await {
            // Whether it is the compose container, before anything acts on that
            // (`verify` and `drop` too: SeaweedFS's buckets are dropped inside it).
            Ok(url) => {
                config.places.locate(server, &url).await;
            }
            Err(e) if config.engines_explicit => return Err(e),
            Err(e) => unreachable.push((store, format!("{e:#}"))),
        }
    }
    for (store, why) in unreachable {
        leave_out(config, store, &why);
    }
    Ok(())
}

/// Drop every engine of `store` from the run, with the line saying why.
fn leave_out(config: &mut RunConfig, store: StoreKind, why: &str) {
    let skipped: Vec<&str> = config
        .engines
        .iter()
        .filter(|e| e.store() == store)
        .map(|e| e.name())
        .collect();
    say!("skipping {}: {why}", skipped.join(", "));
    if !skipped.is_empty() {
        config.left_out.push(crate::config::LeftOut {
            engines: skipped.iter().map(|s| s.to_string()).collect(),
            why: why.to_string(),
        });
    }
    config.engines.retain(|e| e.store() != store);
}

/// Leave out the default engines whose server cannot run under the run's memory cap
/// with the run's largest blob (its `min_cap_bytes`, measured: below it the kernel
/// kills it while loading), one line each saying the cap it needs. An engine asked
/// for by name stays, and `server_caps::fit_servers` refuses the run with the same
/// arithmetic; with `--cap none` each container's own cap is checked there. A dry
/// run's plan leaves them out too.
pub fn leave_out_servers_over_cap(config: &mut RunConfig) {
    let Some(memory) = config.cap.memory_bytes else {
        return;
    };
    if config.engines_explicit {
        return;
    }
    let largest_blob = config.largest_blob();
    for store in stores_for(&config.engines) {
        let Some(server) = store.server() else {
            continue;
        };
        if config.places.remote(server).is_some() {
            continue; // The run's cap is not its.
        }
        let min = server.memory().min_cap_bytes(largest_blob);
        if memory >= min {
            continue;
        }
        let why = format!(
            "{} needs a memory cap of at least {} with blobs of {} (measured: below it the kernel kills it while loading), more than the run's {}; run it with --cap {} or more",
            server.name(),
            crate::size::format_bytes(min),
            crate::size::format_bytes(largest_blob),
            crate::size::format_bytes(memory),
            crate::size::format_bytes(min),
        );
        leave_out(config, store, &why);
    }
}

/// Set the run's servers to its cap (see `server_caps`): call after `reachable_engines`.
/// Default engines whose server needs a larger cap are left out first.
/// A server whose URL does not reach its compose container is remote (`place`): said
/// here, and neither capped nor checked against the cap.
pub async fn fit_servers(config: &mut RunConfig) -> Result<ServerCaps> {
    // Located by `reachable_engines`: not looked for again.
    for server in stores_for(&config.engines)
        .into_iter()
        .filter_map(|s| s.server())
    {
        if let Some(why) = config.places.remote(server) {
            const FRESH: &str = "cold = a fresh connection (its caches are not emptied)";
            let cap = match config.places.pod_limits(server) {
                None => format!("measured without a cap (not controlled), {FRESH}"),
                Some(Err(e)) => format!(
                    "measured without a cap (not controlled: its pod's limits cannot be read: {e}), {FRESH}"
                ),
                Some(Ok(pod)) => format!(
                    "its cap not set by blobrace but read from its pod {} (memory {}, CPUs {}), cold = the pod restarted through the Kubernetes API, its data dropped from the page cache before the server starts",
                    pod.pod,
                    pod.memory_bytes
                        .map(crate::size::format_bytes)
                        .unwrap_or_else(|| "uncapped".into()),
                    pod.cpus
                        .map(|c| c.to_string())
                        .unwrap_or_else(|| "uncapped".into()),
                ),
            };
            say!(
                "{}: remote, not a container blobrace manages ({why}): {cap}, disk bytes per fetch unavailable, the round trip measured beside each result",
                server.name()
            );
        }
    }
    leave_out_servers_over_cap(config);
    let at = config.locations();
    let servers: Vec<_> = stores_for(&config.engines)
        .into_iter()
        .filter_map(|s| s.server())
        .filter(|server| config.places.remote(*server).is_none())
        .filter_map(|server| Some((server, at.server_url(server)?.to_string())))
        .collect();
    let largest_blob = config.largest_blob();
    // Before anything is changed on a server: a refusal leaves them as they were.
    let docker_held =
        crate::server_caps::check_docker_held(&servers, config.disk_cap.as_ref()).await?;
    let mut caps = crate::server_caps::fit_servers(&servers, config.cap, largest_blob).await?;
    crate::server_caps::clear_left_disk_caps(&servers, &docker_held).await;
    if let Some(disk) = &config.disk_cap {
        caps.cap_disks(&servers, disk, &docker_held).await;
    }
    // A server that stopped under the run's cap serves none of its engines: left out
    // like one that is not up, or the run refused where they were asked for by name.
    for (server, why) in caps.unfit() {
        if config.engines_explicit {
            anyhow::bail!(crate::error::InputError::Value {
                what: "memory cap for the servers",
                input: config
                    .cap
                    .memory_bytes
                    .map(crate::size::format_bytes)
                    .unwrap_or_else(|| "none".into()),
                why: format!(
                    "{why}. Raise --cap, or leave {} out with --engines",
                    server.name()
                ),
            });
        }
        for store in stores_for(&config.engines) {
            if store.server() == Some(*server) {
                leave_out(config, store, why);
            }
        }
    }
    Ok(caps)
}

/// What a run's files need at least (results.json with every fetch's histogram, the
/// charts and the report of a full run stay well under it).
const RESULTS_ROOM: u64 = 64 << 20;

/// Results are first written once the loads are done (hours at full scale): a results
/// directory that is read-only or full is said before anything is loaded.
fn check_results_dir(dir: &std::path::Path) -> Result<(), crate::error::InputError> {
    let fail = |why: String| crate::error::InputError::ResultsDir {
        dir: dir.to_path_buf(),
        why,
    };
    crate::machine::check_writable_dir(dir).map_err(fail)?;
    match crate::machine::available_bytes(dir) {
        Ok(free) if free < RESULTS_ROOM => Err(fail(format!(
            "{} free on its disk, and a run's files need about {}",
            crate::size::format_bytes(free),
            crate::size::format_bytes(RESULTS_ROOM)
        ))),
        _ => Ok(()),
    }
}

impl Run {
    /// Cap the process and describe the run. Call before building the tokio runtime.
    pub fn start(config: RunConfig, driver: &str) -> Result<Self> {
        // Every line from here on, into the run's run.log once it has its directory.
        crate::say::hold();
        check_results_dir(&config.results_dir)?;
        // Every refusal before any side effect: the metrics address first.
        let metrics_listener = config
            .metrics_addr
            .map(metrics::Metrics::bind)
            .transpose()?;
        // Before the cap: the emulated disk's processes are the disk, not this process.
        let mut config = config;
        let slow_disk = slow_disk::attach(&mut config)?;
        let (cap, guard) = apply_cap(&config)?;
        // Before the machine's facts: they record the readahead in force.
        let (readahead, readahead_holds) = readahead::hold(&config)?;
        let network = network::start(&config)?;
        let machine = MachineFacts::collect(&config.data_dir);
        crate::machine::one_malloc_arena_per_cpu(
            cap.cpu_limit.unwrap_or(machine.logical_cpus.max(1) as f64),
        );
        let on_tmpfs = machine.data_filesystem == "tmpfs";
        // URLs and flags carry passwords: recorded without them.
        let command = crate::secret::redact_command(std::env::args()).join(" ");
        let resume_key = resume::resume_key(&config);
        let earlier_runs = resume::earlier_runs(&config.results_dir);
        let load_rates = resume::LoadRates::of(&earlier_runs);
        let missed = resume::near_miss(&resume_key, &earlier_runs);
        let earlier = resume::to_continue(&config, &resume_key, earlier_runs);
        if let (None, Some((run_id, differ)), false) = (&earlier, missed, config.fresh) {
            say!(
                "note: run {run_id} is unfinished but is not continued: its {} differ from this command's; this is a new run (give the flags that run was started with to continue it)",
                differ.join(", ")
            );
        }
        if let Some(pid) = earlier
            .as_ref()
            .and_then(|e| resume::still_running(e, &machine.hostname))
        {
            anyhow::bail!(
                "run {} with these flags is still going in process {pid} on this machine: two processes must not measure one run (nor its datasets) at once. Wait for it, or stop it (the same command then continues it)",
                earlier.as_ref().expect("checked").run_id
            );
        }
        let part = resume::new_part(&command, &machine.hostname);
        let compressibility = config
            .datasets()
            .iter()
            .map(crate::dataset::compressibility::Compressibility::of)
            .collect();
        let results = RunResults {
            schema_version: RESULTS_SCHEMA_VERSION,
            run_id: new_run_id(),
            started_at: crate::now_rfc3339(),
            finished_at: None,
            complete: false,
            driver: driver.into(),
            command,
            config,
            cap,
            machine,
            provenance: Some(crate::records::provenance::Provenance::of_this_process()),
            runner_image: None,
            server_fits: Vec::new(),
            loads: Vec::new(),
            compressibility,
            results: Vec::new(),
            load_results: Vec::new(),
            saturations: Vec::new(),
            skipped_loads: Vec::new(),
            disk_limits: Vec::new(),
            profiles: Vec::new(),
            first_bytes: Vec::new(),
            failures: Vec::new(),
            merged_from: Vec::new(),
            resume_key,
            parts: vec![part],
            done_cells: Vec::new(),
            readahead: Some(readahead),
            network: None,
            slow_disk: slow_disk.as_ref().map(|d| d.report.clone()),
        };
        let continuing = earlier.is_some();
        let results = match earlier {
            Some(earlier) => resume::continue_run(earlier, results)?,
            None => results,
        };
        let mut sinks = sinks::every_sink();
        if let Some(listener) = metrics_listener {
            let metrics = metrics::Metrics::serve(listener, &results.run_id)?;
            say!(
                "metrics: OpenMetrics at http://{}/metrics while the run goes",
                metrics.addr
            );
            sinks.push(Box::new(metrics));
        }
        let mut run = Self {
            results,
            sinks,
            server_caps: ServerCaps::default(),
            clock: outlook::Clock::default(),
            load_plan: load_plan::LoadPlan::new(load_rates),
            _cap_guard: guard,
            readahead_holds,
            network,
            slow_disk,
        };
        if continuing {
            run.progress(Progress::Continuing(&run.results));
            run.learn_earlier_parts_pace();
        }
        run.say_where_it_stands("starting");
        interrupt::catch();
        if on_tmpfs {
            run.progress(Progress::DataOnTmpfs);
        }
        Ok(run)
    }

    pub fn config(&self) -> &RunConfig {
        &self.results.config
    }

    /// Hand what a step just added to the results to every sink; `finding` picks it
    /// out of the results.
    pub(super) fn found(&mut self, finding: impl Fn(&RunResults) -> Finding<'_>) -> Result<()> {
        for sink in &mut self.sinks {
            sink.found(&self.results, &finding(&self.results))?;
        }
        Ok(())
    }

    /// Say what a step is doing to every sink (the terminal prints it).
    pub(super) fn progress(&self, event: Progress<'_>) {
        for sink in &self.sinks {
            sink.progress(&event);
        }
    }

    /// Mark the run complete and hand it to every sink (files, summary, report).
    pub fn finish(&mut self) -> Result<PathBuf> {
        self.results.complete = true;
        self.results.finished_at = Some(crate::now_rfc3339());
        self.end_part();
        for sink in &mut self.sinks {
            sink.finished(&self.results)?;
        }
        let dir = self.results.dir();
        // A rate asked for that could not be offered is an error, after everything
        // measured is saved and reported.
        let unreachable: Vec<String> = self
            .results
            .load_results
            .iter()
            .filter(|l| l.load.limit_reached)
            .map(|l| {
                format!(
                    "{} {} {}",
                    l.result.engine,
                    l.result.size,
                    l.load.point.label()
                )
            })
            .collect();
        if !self.results.failures.is_empty() {
            let what: Vec<String> = self
                .results
                .failures
                .iter()
                .map(|f| format!("{} of {} at {}", f.stage, f.who, f.size))
                .collect();
            anyhow::bail!(
                "{} step(s) failed and were left out (the reasons are above, in results.json and in the report; everything else was measured): {}",
                what.len(),
                what.join(", ")
            );
        }
        // A cell that measured no fetch has no figure to give: the run did not answer
        // for it, whatever else it measured, so it does not end as if it had.
        let empty: Vec<String> = self
            .results
            .results
            .iter()
            .filter(|r| r.measured.count == 0)
            .map(|r| format!("{} {} {}", r.engine, r.size, r.scenario.cache.name()))
            .chain(
                self.results
                    .load_results
                    .iter()
                    .filter(|l| l.result.measured.count == 0 && !l.load.limit_reached)
                    .map(|l| {
                        format!(
                            "{} {} {} {} ({})",
                            l.result.engine,
                            l.result.size,
                            l.result.scenario.cache.name(),
                            l.load.point.label(),
                            l.load.no_fetch_why()
                        )
                    }),
            )
            .collect();
        if !empty.is_empty() {
            anyhow::bail!(
                "{} cell(s) measured no fetch, so the run has no figure for them (everything else is saved and reported): {}",
                empty.len(),
                empty.join("; ")
            );
        }
        if !unreachable.is_empty() {
            anyhow::bail!(
                "the in-flight limit ({}) was reached, so the rate asked for could not be offered, at: {}. The engine serves less than that rate under this cap: lower --rate, or find the highest rate it sustains with `blobrace saturate`; raise --max-in-flight only to see how far the queue grows",
                self.results.config.max_in_flight,
                unreachable.join(", ")
            );
        }
        Ok(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fitted(args: &[&str]) -> Vec<&'static str> {
        let mut config = crate::config::resolve_flags(args).unwrap();
        leave_out_servers_over_cap(&mut config);
        config.engines.iter().map(|e| e.name()).collect()
    }

    #[test]
    fn default_engines_whose_server_needs_a_larger_cap_are_left_out_and_named_ones_kept() {
        // The quick profile's cap: SeaweedFS needs 512 MiB, Dolt 192 MiB at 4 MiB.
        let quick = fitted(&["--cap", "256MiB", "--sizes", "1KiB,4MiB"]);
        assert!(!quick.contains(&"seaweedfs"), "{quick:?}");
        for kept in ["floor", "sqlite", "postgres-raw", "mariadb-raw", "dolt-raw"] {
            assert!(quick.contains(&kept), "{kept}: {quick:?}");
        }
        let roomy = fitted(&["--cap", "512MiB", "--sizes", "1KiB"]);
        assert!(roomy.contains(&"seaweedfs"), "{roomy:?}");
        // Asked for by name: kept, for fit_servers to refuse with the arithmetic.
        let named = fitted(&["--cap", "256MiB", "--engines", "seaweedfs,floor"]);
        assert_eq!(named, ["floor", "seaweedfs"]);
        // No cap for the run: each container's own cap is checked by fit_servers.
        let uncapped = fitted(&["--cap", "none", "--sizes", "1KiB"]);
        assert!(uncapped.contains(&"seaweedfs"), "{uncapped:?}");
    }
}
