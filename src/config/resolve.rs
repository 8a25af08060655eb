//! From what was typed to a `RunConfig`: the profile's presets filled in, and what
//! involves two flags at once checked (one error, exit code 2).

use crate::cap::CapRequest;
use crate::db::registry::EngineKind;
use crate::db::server::{Server, compose_env};
use crate::error::InputError;
use crate::size::{SizeClass, format_bytes};

use super::args::{Mode, RunArgs};
use super::parse::{ClientList, EngineList, Limit, Precision, RateList, SizeList};
use super::preset::duration_label;
use super::run_config::RunConfig;
use super::{DEFAULT_SEED, DEFAULT_TARGET_P99, MIN_CAP_BYTES};

impl RunArgs {
    /// Fill in the profile's presets and check what involves two flags at once.
    pub fn resolve(&self) -> Result<RunConfig, InputError> {
        let preset = self.preset.values();
        self.database_knobs.check().map_err(InputError::Settings)?;
        let sizes = match (&self.sizes, self.size_mix) {
            (_, Some(mix)) => vec![SizeClass::new(mix.get().largest())?],
            (Some(SizeList(list)), None) => list.clone(),
            (None, None) => preset
                .sizes
                .iter()
                .map(|&b| SizeClass::new(b))
                .collect::<Result<_, _>>()?,
        };
        let dataset_bytes = self.dataset_bytes.unwrap_or(preset.dataset_bytes);
        // A measuring time given alone is a fixed time: what the user asked for.
        let precision = match (self.precision, self.measure) {
            (Some(Precision(asked)), _) => asked,
            (None, Some(_)) => None,
            (None, None) => preset.precision,
        };
        match self.size_mix {
            Some(mix) => check_mix(mix, dataset_bytes, self)?,
            None => {
                for size in &sizes {
                    size.rows_for(dataset_bytes)?;
                }
            }
        }
        let memory_bytes = self
            .cap
            .unwrap_or(Limit::Some(preset.cap_bytes))
            .into_option();
        if let Some(bytes) = memory_bytes {
            check_cap_fits_blobs(bytes, &sizes, self.size_mix.is_some())?;
            check_cap_fits_machine(bytes)?;
        }
        let deployed = self.deployed()?;
        if let Some(disk) = &deployed.disk_cap {
            check_disk_cap_serves_blobs(disk, &sizes, self.size_mix.is_some())?;
        }
        if let Some(Limit::Some(asked)) = self.cpus {
            check_cpus_fit_machine(asked)?;
        }
        let cpus = self.cpus.unwrap_or(Limit::Some(preset.cpus)).into_option();
        if self.uncapped_in_process && memory_bytes.is_none() && cpus.is_none() {
            return Err(InputError::Value {
                what: "uncapped-in-process",
                input: "true".into(),
                why: "it caps the servers alone, and --cap none --cpus none caps nothing: every store would run uncapped either way; give the servers' cap with --cap and --cpus, or leave --uncapped-in-process out".into(),
            });
        }
        let clients = match &self.clients {
            Some(ClientList(list)) => list.clone(),
            None => preset.clients.to_vec(),
        };
        let rates = self.rate.clone().map(|RateList(r)| r).unwrap_or_default();
        let most_clients = clients.iter().copied().max().unwrap_or(1);
        if (!rates.is_empty() || self.mode == Mode::Saturate) && self.max_in_flight < most_clients {
            return Err(InputError::Value {
                what: "max-in-flight",
                input: self.max_in_flight.to_string(),
                why: format!(
                    "below the {most_clients} clients: the open loop could never keep them all busy, so no rate they serve can be offered; raise --max-in-flight to at least {most_clients} or use fewer --clients"
                ),
            });
        }
        let measure = match (precision, self.measure) {
            (_, Some(measure)) => measure,
            (Some(_), None) => preset.precision_min,
            (None, None) => preset.measure,
        };
        if let Some(limit) = self.measure_limit.filter(|limit| *limit < measure) {
            return Err(InputError::Value {
                what: "measure-limit",
                input: duration_label(limit),
                why: format!(
                    "below the time each cell is measured for at least ({}, --measure or the profile's): raise --measure-limit or lower --measure",
                    duration_label(measure)
                ),
            });
        }
        if self.drop_after && self.keep_all {
            return Err(InputError::Value {
                what: "keep-all",
                input: "true".into(),
                why: "--keep-all (BLOBRACE_KEEP_ALL) keeps every dataset, --drop-after (BLOBRACE_DROP_AFTER) drops each size class once measured: choose one".into(),
            });
        }
        if let Some(SizeList(asked)) = &self.saturate_sizes
            && let Some(missing) = asked.iter().find(|s| !sizes.contains(s))
        {
            return Err(InputError::Value {
                what: "saturate-sizes",
                input: missing.to_string(),
                why: format!(
                    "not among the run's sizes ({}): add it to --sizes, or leave it out",
                    sizes
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            });
        }
        // A share takes its sizes after every size asked for was checked: the
        // machines of one split are given the same flags.
        let sizes = match self.share {
            None => sizes,
            Some(share) => {
                let mine = share.sizes_of(&sizes);
                // Every share refuses alike: a split whose last machines would find
                // nothing to do is refused on all of them, at once.
                if share.of as usize > sizes.len() {
                    return Err(InputError::Value {
                        what: "share",
                        input: share.to_string(),
                        why: format!(
                            "splits {} size class(es) ({}) {} ways: some shares would take none, as share i of n takes every n-th from the i-th; split it across at most {} machines",
                            sizes.len(),
                            sizes
                                .iter()
                                .map(|s| s.to_string())
                                .collect::<Vec<_>>()
                                .join(","),
                            share.of,
                            sizes.len()
                        ),
                    });
                }
                mine
            }
        };
        let share_sizes = sizes.clone();
        // Flags and variables first, then the compose env file.
        let compose = compose_env();
        let mut server_urls = self.server_urls.0.clone();
        for server in Server::all() {
            if let Some(url) = server.url_from_compose(&compose) {
                server_urls.entry(server).or_insert(url);
            }
        }
        // A keyed run keeps the floor: it reads by offset whatever the key, the same
        // file as any run's, so it is the round's reference for the keyed engines.
        let floor_or_keyed = |e: &EngineKind| e.store().has_keys() || e.store().is_floor();
        // A churned run keeps the floor the same way: it reads its own file.
        let churn = (self.churn > 0).then_some(crate::dataset::churn::Churn {
            percent: self.churn,
            kind: self.churn_kind,
            maintenance: self.maintenance,
        });
        if churn.is_none() && self.maintenance != crate::dataset::churn::Maintenance::Default {
            return Err(InputError::Value {
                what: "maintenance",
                input: self.maintenance.to_string(),
                why: "it is what cleans up after a churn, and this run has none: add --churn <percent>".into(),
            });
        }
        let floor_or_churns = |e: &EngineKind| e.store().changes_rows() || e.store().is_floor();
        // A written run (--write-rate) keeps the engines that can change rows too.
        let changes = churn.is_some() || self.write_rate.is_some();
        let engines = match &self.engines {
            Some(EngineList(list)) => list.clone(),
            None => EngineKind::all()
                .filter(|e| !self.key.is_binary() || floor_or_keyed(e))
                .filter(|e| !changes || floor_or_churns(e))
                .collect(),
        };
        if let Some(unchanged) = engines.iter().find(|e| changes && !floor_or_churns(e)) {
            let (what, input, off) = match churn {
                Some(_) => ("churn", self.churn.to_string(), "use --churn 0"),
                None => (
                    "write-rate",
                    self.write_rate.unwrap_or_default().to_string(),
                    "leave --write-rate out",
                ),
            };
            return Err(InputError::Value {
                what,
                input,
                why: format!(
                    "{unchanged}'s store cannot change rows yet. Engines that can: {} (the floor may run beside them, as the round's reference); leave {unchanged} out of --engines or {off}",
                    EngineKind::all()
                        .filter(|e| e.store().changes_rows())
                        .map(|e| e.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            });
        }
        let keyless = engines.iter().find(|e| !floor_or_keyed(e)).or_else(|| {
            engines
                .iter()
                .all(|e| !e.store().has_keys())
                .then(|| &engines[0])
        });
        if let Some(keyless) = keyless.filter(|_| self.key.is_binary()) {
            return Err(InputError::Value {
                what: "key",
                input: self.key.to_string(),
                why: format!(
                    "{keyless} has no key type ({}). Engines with keys: {}{}; leave {keyless} out of --engines or use --key int",
                    if keyless.store().is_floor() {
                        "it reads a packed file at the id's offset"
                    } else {
                        "it reads one file per blob, named by its id"
                    },
                    EngineKind::all()
                        .filter(|e| e.store().has_keys())
                        .map(|e| e.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                    if keyless.store().is_floor() {
                        " (the floor may run beside them, as the round's reference)"
                    } else {
                        ""
                    },
                ),
            });
        }
        Ok(RunConfig {
            preset: self.preset,
            engines,
            engines_explicit: self.engines.is_some(),
            left_out: Vec::new(),
            sizes,
            size_mix: self.size_mix,
            dataset_bytes,
            cap: CapRequest { memory_bytes, cpus },
            uncapped_in_process: self.uncapped_in_process,
            disk_cap: deployed.disk_cap,
            readahead: deployed.readahead,
            readahead_explicit: deployed.readahead_explicit,
            network_rtt: deployed.network_rtt,
            fetch_urls: Default::default(),
            places: Default::default(),
            disk_latency: deployed.disk_latency,
            deployment: self
                .deployment
                .map(|d| crate::deploy::presets::DeploymentRef {
                    name: d.name.into(),
                    source: d.source.into(),
                }),
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            data_dir: self.data_dir.clone(),
            results_dir: self.results_dir.clone(),
            warmup: self.warmup.unwrap_or(preset.warmup),
            measure,
            precision,
            measure_limit: self.measure_limit.unwrap_or(preset.measure_limit),
            disk_probe: self.disk_probe.unwrap_or(preset.disk_probe),
            cache: self.cache.unwrap_or(preset.cache).states(),
            steady_limit: self.steady_limit.unwrap_or(preset.steady_limit),
            repeat: self.repeat,
            min_fetches: self.min_fetches.unwrap_or(preset.min_fetches),
            samples: self.samples,
            database_knobs: self.database_knobs,
            key: self.key,
            content: self.content,
            target_p99: self.target_p99.unwrap_or(DEFAULT_TARGET_P99),
            drop_after: self.drop_after,
            keep_all: self.keep_all,
            no_wait: self.no_wait,
            fail_fast: self.fail_fast,
            fresh: self.fresh,
            clients,
            rates,
            arrivals: self.arrivals,
            max_in_flight: self.max_in_flight,
            mode: self.mode,
            saturate_steps: preset.saturate_steps,
            saturate_sizes: match &self.saturate_sizes {
                Some(SizeList(list)) => list.clone(),
                None => preset
                    .saturate_sizes
                    .iter()
                    .map(|&b| SizeClass::new(b))
                    .collect::<Result<_, _>>()?,
            }
            .into_iter()
            .filter(|s| self.share.is_none() || share_sizes.contains(s))
            .collect(),
            profile_fetches: self.profile_fetches,
            first_bytes: self.first_bytes,
            access: self.access,
            churn,
            write_rate: self.write_rate,
            metrics_addr: self.metrics_addr,
            share: self.share,
            server_urls,
        })
    }
}

/// Loading or fetching one blob holds a few copies of it (our buffer, the driver's
/// argument or result buffer, SQLite's bind copy): measured peak ~4.4x a 32MiB
/// blob. Below this the kernel kills the run mid-way.
/// A cap above the machine's memory never binds: a run "capped at 10TiB" on 24 GiB
/// would be recorded and reported as capped while nothing held it.
fn check_cap_fits_machine(cap_bytes: u64) -> Result<(), InputError> {
    match crate::machine::mem_total_bytes() {
        Some(machine) if cap_bytes > machine => Err(InputError::Value {
            what: "cap",
            input: format_bytes(cap_bytes),
            why: format!(
                "above this machine's memory ({}): the cap would never bind; give a cap below it, or --cap none for a run that says it was uncapped",
                crate::size::format_bytes_approx(machine)
            ),
        }),
        _ => Ok(()),
    }
}

/// A CPU cap asked above the CPUs this process may run on (its affinity and its own
/// cgroup's quota, as `available_parallelism` reads them) caps nothing, and a result
/// would record a cap that never bound. The presets' 2 CPUs are not refused on a
/// smaller machine: the run then says what it got (`cap:` line).
fn check_cpus_fit_machine(asked: f64) -> Result<(), InputError> {
    match std::thread::available_parallelism() {
        Ok(cores) if asked > cores.get() as f64 => Err(InputError::Value {
            what: "cpus",
            input: format!("{asked}"),
            why: format!(
                "above the {cores} CPU(s) this process can run on: the cap would never bind; give at most {cores}, or --cpus none for a run that says it was uncapped"
            ),
        }),
        _ => Ok(()),
    }
}

/// The least a disk cap's read (or write) must move in a second: one of the largest
/// blobs, and at least one readahead window of Linux's default (128 KiB, what a
/// buffered read of any size asks of the disk at once), in IOs of that window.
const DISK_CAP_UNIT: u64 = 128 << 10;

/// The fewest IOs a second a disk cap may allow, whatever the blobs: a run queues
/// several IOs at once (a file's metadata, readahead, the probe), and `riops=1` left a
/// process waiting on them, unkillable, 7.6 s after SIGTERM. 50 is under the slowest
/// disk a store is put on (a hard disk does about 100; a cloud volume's floor is 100).
const MIN_DISK_CAP_IOPS: u64 = 50;

/// A disk cap that cannot serve one read (or write) of the largest blob in a second is
/// refused: a process whose I/O waits on such a throttle (`rbps=1`, a bare number read
/// as bytes a second) sits in uninterruptible sleep that neither SIGTERM nor SIGKILL
/// ends until the limit is lifted by hand.
fn check_disk_cap_serves_blobs(
    disk: &crate::cap::disk::DiskCap,
    sizes: &[SizeClass],
    mix: bool,
) -> Result<(), InputError> {
    let largest = sizes.iter().map(|s| s.bytes()).max().unwrap_or(0);
    let bytes_needed = largest.max(DISK_CAP_UNIT);
    let ios_needed = largest.div_ceil(DISK_CAP_UNIT).max(MIN_DISK_CAP_IOPS);
    let l = &disk.limits;
    let short = [
        ("rbps", l.read_bytes_per_s, bytes_needed, true, "read"),
        ("riops", l.read_iops, ios_needed, false, "read"),
        ("wbps", l.write_bytes_per_s, bytes_needed, true, "write"),
        ("wiops", l.write_iops, ios_needed, false, "write"),
    ]
    .into_iter()
    .find(|(_, limit, needed, _, _)| limit.is_some_and(|limit| limit < *needed));
    let Some((key, Some(limit), needed, bytes, side)) = short else {
        return Ok(());
    };
    let show = |n: u64| {
        if bytes {
            format!("{}/s", format_bytes(n))
        } else {
            format!("{n} IOPS")
        }
    };
    let fix = if !bytes && largest.div_ceil(DISK_CAP_UNIT) < MIN_DISK_CAP_IOPS {
        "the blobs' sizes are not the cause: no run reads under that"
    } else if mix {
        "lower the size mix's largest blob (--size-mix)"
    } else {
        "leave the largest sizes out of --sizes (BLOBRACE_SIZES)"
    };
    Err(InputError::Value {
        what: "disk cap",
        input: disk.asked.clone(),
        why: format!(
            "{key} = {} cannot {side} one {} blob in a second ({} at least, in IOs of 128KiB, Linux's readahead, and never under {MIN_DISK_CAP_IOPS} IOPS); a process waiting on so slow a throttle cannot even be killed until it is lifted by hand. Raise {key} to {} or more (--disk-cap, BLOBRACE_DISK_CAP), or {fix}",
            show(limit),
            format_bytes(largest),
            show(needed),
            if bytes {
                format_bytes(needed)
            } else {
                needed.to_string()
            },
        ),
    })
}

fn check_cap_fits_blobs(cap_bytes: u64, sizes: &[SizeClass], mix: bool) -> Result<(), InputError> {
    let largest = sizes.iter().map(|s| s.bytes()).max().unwrap_or(0);
    let needed = MIN_CAP_BYTES + 5 * largest;
    if cap_bytes < needed {
        let fix = if mix {
            "lower the size mix's largest blob (--size-mix)"
        } else {
            "leave the largest size out of --sizes (BLOBRACE_SIZES)"
        };
        return Err(InputError::Value {
            what: "cap",
            input: format_bytes(cap_bytes),
            why: format!(
                "{} blobs need a cap of at least {} ({} for the process + 5 copies of a blob): raise --cap (BLOBRACE_CAP) or {fix}",
                format_bytes(largest),
                format_bytes(needed),
                format_bytes(MIN_CAP_BYTES)
            ),
        });
    }
    Ok(())
}

/// A size mix's dataset holds its largest blob at least, and it does not change (a
/// churn or a writer rewrites rows at one size: not for a mix yet).
fn check_mix(
    mix: crate::dataset::mix::MixRef,
    dataset_bytes: u64,
    args: &RunArgs,
) -> Result<(), InputError> {
    let mix = mix.get();
    let bad = |why: String| crate::dataset::mix::bad(&mix.source, why);
    if mix.largest() > dataset_bytes {
        return Err(bad(format!(
            "its largest blob ({}) is more than the dataset ({}): raise --dataset-bytes (BLOBRACE_DATASET_BYTES) or lower the mix's largest blob",
            format_bytes(mix.largest()),
            format_bytes(dataset_bytes)
        )));
    }
    if args.churn > 0 || args.write_rate.is_some() {
        return Err(bad(
            "a mix's rows are not changed yet (--churn, --write-rate): leave one or the other out"
                .into(),
        ));
    }
    if args.share.is_some() {
        return Err(bad(
            "a mix is one dataset, and --share splits size classes between machines: leave --share out".into(),
        ));
    }
    // The steady state's prefill reads a skewed access's hot blobs where a size class
    // puts them ((id - 1) x size): not where a mix does.
    if args.access != crate::workload::access::Access::Uniform {
        return Err(bad(
            "a skewed --access over a mix is not measured yet (its prefill would warm the wrong bytes): leave --access out".into(),
        ));
    }
    if args
        .saturate_sizes
        .as_ref()
        .is_some_and(|SizeList(list)| !list.is_empty())
    {
        return Err(bad(
            "--saturate-sizes names size classes, and a mix has none: leave it out (a mix's sustainable rate is not searched yet)".into(),
        ));
    }
    Ok(())
}

/// The deployment's parts, each overridden by its own flag where given.
struct Deployed {
    disk_cap: Option<crate::cap::disk::DiskCap>,
    disk_latency: Option<crate::deploy::slow_disk::DiskLatency>,
    network_rtt: Option<crate::deploy::network::NetworkRtt>,
    readahead: crate::cap::readahead::Readahead,
    readahead_explicit: bool,
}

impl RunArgs {
    fn deployed(&self) -> Result<Deployed, InputError> {
        let d = self.deployment;
        let disk_cap = match (&self.disk_cap, d.and_then(|d| d.disk_cap)) {
            (Some(flag), _) => flag.clone().into_option(),
            (None, Some(preset)) => crate::cap::disk::parse_disk_cap(preset)?,
            (None, None) => None,
        };
        let disk_latency = match (self.disk_latency, d.and_then(|d| d.disk_latency)) {
            (Some(flag), _) => flag.into_option(),
            (None, Some(preset)) => crate::deploy::slow_disk::parse_disk_latency(preset)?,
            (None, None) => None,
        };
        let network_rtt = match (self.network_rtt, d.and_then(|d| d.network_rtt)) {
            (Some(flag), _) => flag.into_option(),
            (None, Some(preset)) => crate::deploy::network::parse_network_rtt(preset)?,
            (None, None) => None,
        };
        let readahead = match (self.readahead, d) {
            (Some(flag), _) => flag,
            (None, Some(d)) => crate::cap::readahead::parse_readahead(d.readahead)?,
            (None, None) => {
                crate::cap::readahead::Readahead::Kib(crate::cap::readahead::DEFAULT_KB)
            }
        };
        Ok(Deployed {
            disk_cap,
            disk_latency,
            network_rtt,
            readahead,
            // A deployment asks for its readahead by name, as the flag does.
            readahead_explicit: self.readahead.is_some() || d.is_some(),
        })
    }
}
