//! A run from its flags to its record. `Run::start` caps this process and brings up
//! what the run stands on before any thread or data: the emulated disk under the data
//! directory, the cap, the readahead, the network's proxy; it finds the run it
//! continues. `Starting::settle` then decides what the run measures (the servers that
//! answer and fit the cap, on the emulated disk and behind the proxy asked: `servers`)
//! and only then makes the record, so nothing edits the recorded settings afterwards.

use anyhow::Result;

use crate::cap::readahead::{Hold, ReadaheadReport};
use crate::cap::{CapGuard, CapReport};
use crate::config::RunConfig;
use crate::deploy::network::LatencyProxy;
use crate::deploy::slow_disk::SlowDisk;
use crate::error::InputError;
use crate::machine::MachineFacts;
use crate::records::results::{RESULTS_SCHEMA_VERSION, RunResults, new_run_id};

use super::print_cap;
use super::servers::{fit_servers, reachable_engines};
use super::{Progress, Run, interrupt, load_plan, metrics, network, outlook, readahead};
use super::{resume, sinks, slow_disk};

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

/// A run before its record: this process capped, its disks and network up, the run it
/// continues found (`Run::start`); `settle` makes it a `Run`.
pub struct Starting {
    /// The settings, settled by `settle` before they are recorded.
    config: RunConfig,
    driver: String,
    command: String,
    cap: CapReport,
    machine: MachineFacts,
    readahead: ReadaheadReport,
    readahead_holds: Vec<Hold>,
    /// The latency proxy between the engines and their servers (`--network-rtt`).
    network: Option<LatencyProxy>,
    /// The emulated disk the data directory is on (`--disk-latency`).
    slow_disk: Option<SlowDisk>,
    metrics_listener: Option<std::net::TcpListener>,
    /// This part's time, from its start.
    clock: outlook::Clock,
    resume_key: String,
    /// The unfinished run with the same settings this one continues.
    earlier: Option<RunResults>,
    load_rates: resume::LoadRates,
    /// Dropped last: see `Run::_cap_guard`.
    cap_guard: CapGuard,
}

impl Run {
    /// Cap the process and bring up what the run stands on. Call before building the
    /// tokio runtime; then `Starting::settle` on it.
    pub fn start(config: RunConfig, driver: &str) -> Result<Starting> {
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
        let (cap, cap_guard) = apply_cap(&config)?;
        // Before the machine's facts: they record the readahead in force.
        let (readahead, readahead_holds) = readahead::hold(&config)?;
        let network = network::start(&config)?;
        let machine = MachineFacts::collect(&config.data_dir);
        crate::machine::one_malloc_arena_per_cpu(
            cap.cpu_limit.unwrap_or(machine.logical_cpus.max(1) as f64),
        );
        // URLs and flags carry passwords: recorded without them.
        let command = crate::secret::redact_command(std::env::args()).join(" ");
        // The key of the settings as asked: the servers left out later are put back
        // in it (`resume_key`), so the same flags find the same run either way.
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
        // Before any server is touched (settling restarts them under the cap).
        if let Some(pid) = earlier
            .as_ref()
            .and_then(|e| resume::still_running(e, &machine.hostname))
        {
            anyhow::bail!(
                "run {} with these flags is still going in process {pid} on this machine: two processes must not measure one run (nor its datasets) at once. Wait for it, or stop it (the same command then continues it)",
                earlier.as_ref().expect("checked").run_id
            );
        }
        interrupt::catch();
        interrupt::set_unsaved(
            "stopped while finding its servers, before anything was measured: the same command starts this run again (or goes on with the earlier part it continues)".into(),
        );
        Ok(Starting {
            config,
            driver: driver.into(),
            command,
            cap,
            machine,
            readahead,
            readahead_holds,
            network,
            slow_disk,
            metrics_listener,
            clock: outlook::Clock::default(),
            resume_key,
            earlier,
            load_rates,
            cap_guard,
        })
    }
}

impl Starting {
    /// Decide what the run measures, then make its record: the servers that answer,
    /// located; their volumes onto the emulated disk; fitted to the cap (those that
    /// cannot run under it left out); their disks' readahead; routed through the
    /// network's proxy. Every one left out is in the settings' `left_out`, with why.
    pub async fn settle(mut self) -> Result<Run> {
        let runner_image = crate::docker::own_container_image().await;
        reachable_engines(&mut self.config).await?;
        // Before the caps and the readahead: both act on the volume's disk.
        if let Some(disk) = self.slow_disk.as_mut() {
            slow_disk::hold_servers(disk, &self.config).await;
        }
        let server_caps = fit_servers(&mut self.config).await?;
        readahead::hold_servers_readahead(
            &self.config,
            &mut self.readahead,
            &mut self.readahead_holds,
        )
        .await?;
        let network_report = network::route_servers(self.network.as_ref(), &mut self.config)?;
        let config = self.config;
        let part = resume::new_part(&self.command, &self.machine.hostname);
        let compressibility = config
            .datasets()
            .iter()
            .map(crate::dataset::compressibility::Compressibility::of)
            .collect();
        let on_tmpfs = self.machine.data_filesystem == "tmpfs";
        let results = RunResults {
            schema_version: RESULTS_SCHEMA_VERSION,
            run_id: new_run_id(),
            started_at: crate::now_rfc3339(),
            finished_at: None,
            complete: false,
            driver: self.driver,
            command: self.command,
            config,
            cap: self.cap,
            machine: self.machine,
            provenance: Some(crate::records::provenance::Provenance::of_this_process()),
            runner_image,
            server_fits: server_caps.fits(),
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
            resume_key: self.resume_key,
            parts: vec![part],
            done_cells: Vec::new(),
            readahead: Some(self.readahead),
            network: network_report,
            slow_disk: self.slow_disk.as_ref().map(|d| d.report.clone()),
        };
        let continuing = self.earlier.is_some();
        let results = match self.earlier {
            Some(earlier) => resume::continue_run(earlier, results)?,
            None => results,
        };
        let mut sinks = sinks::every_sink();
        if let Some(listener) = self.metrics_listener {
            let metrics = metrics::Metrics::serve(listener, &results.run_id)?;
            say!(
                "metrics: OpenMetrics at http://{}/metrics while the run goes",
                metrics.addr
            );
            sinks.push(Box::new(metrics));
        }
        let mut run = Run {
            results,
            sinks,
            _server_caps: server_caps,
            clock: self.clock,
            load_plan: load_plan::LoadPlan::new(self.load_rates),
            _cap_guard: self.cap_guard,
            _readahead_holds: self.readahead_holds,
            _network: self.network,
            _slow_disk: self.slow_disk,
        };
        if continuing {
            run.progress(Progress::Continuing(&run.results));
            run.learn_earlier_parts_pace();
        }
        run.say_where_it_stands("starting");
        if on_tmpfs {
            run.progress(Progress::DataOnTmpfs);
        }
        Ok(run)
    }
}
