//! Run settings: the same knobs for `blobrace` subcommands (flags) and for
//! `cargo bench` (the `BLOBRACE_*` environment variables clap reads for each flag).
//! The top of the library's layers: it builds `Locations` for stores and engines.
//!
//! Every value is parsed by clap (`value_parser`s below), so a bad value is one
//! error naming the flag; `RunArgs::resolve` only fills in the profile's presets
//! and checks what involves two flags at once.

use crate::stats::precision::Targets;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Arg, ArgMatches, Args, FromArgMatches, ValueEnum};
use serde::{Deserialize, Serialize};

use crate::cap::CapRequest;
use crate::dataset::DatasetSpec;
use crate::engine::{EngineKind, parse_engine_list};
use crate::error::InputError;
use crate::key::KeyType;
use crate::load_gen::{Arrivals, LoadPoint, LoadSettings};
use crate::locations::Locations;
use crate::server::{PgStorage, Server, ServerOptions, compose_env};
use crate::size::{SizeClass, format_bytes, parse_bytes, parse_size_list};
use crate::steady::CacheState;
use crate::store::StoreKind;

/// "blobrace" in ASCII: the default seed.
pub const DEFAULT_SEED: u64 = 0x626c_6f62_7261_6365;

/// The verdict's default: a fetch whose p99 is over this is too slow.
pub const DEFAULT_TARGET_P99: Duration = Duration::from_millis(50);

/// Smallest memory cap the measuring process itself fits in.
const MIN_CAP_BYTES: u64 = 16 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// 1KiB..32MiB, 3GiB per size class under a 1GiB / 2 CPU cap: the real question.
    Full,
    /// 1KiB, 64KiB, 512KiB, 4MiB; 768MiB per size class under a 256MiB cap; short timings.
    Quick,
}

/// What a profile sets when no flag does. The help texts are written from it too.
pub struct Preset {
    pub sizes: &'static [u64],
    pub dataset_bytes: u64,
    pub cap_bytes: u64,
    pub cpus: f64,
    pub warmup: Duration,
    pub measure: Duration,
    pub cache: CacheChoice,
    pub steady_limit: Duration,
    /// Fetches a measurement keeps going for, within twice its time.
    pub min_fetches: u64,
    /// The half-width asked of each cell's p50 and p99 (a fraction): measured until
    /// both are that precise (`stats::precision`), between `precision_min` and
    /// `measure_limit`. `measure` is the fixed time used when it is off.
    pub precision: Option<Targets>,
    pub precision_min: Duration,
    pub measure_limit: Duration,
    /// Clients at once (`--clients`): one result per value.
    pub clients: &'static [u32],
    /// Open-loop steps of a saturation search.
    pub saturate_steps: u32,
    /// Sizes at which a latency run also searches the sustainable rate (`--saturate-sizes`).
    pub saturate_sizes: &'static [u64],
    /// How long each disk probe reads (before and after every measurement).
    pub disk_probe: Duration,
}

/// `--cache`: the cache state(s) each engine is measured in (see `steady`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CacheChoice {
    /// Right after eviction: the cache fills while it is measured.
    Cold,
    /// Prefilled until full, then warmed up until the hit ratio is steady.
    Steady,
    /// Each engine cold, then steady.
    Both,
}

impl CacheChoice {
    pub fn states(self) -> Vec<CacheState> {
        match self {
            CacheChoice::Cold => vec![CacheState::Cold],
            CacheChoice::Steady => vec![CacheState::Steady],
            CacheChoice::Both => vec![CacheState::Cold, CacheState::Steady],
        }
    }
}

impl Profile {
    pub const fn preset(self) -> Preset {
        match self {
            Profile::Full => Preset {
                sizes: &[1 << 10, 8 << 10, 64 << 10, 512 << 10, 4 << 20, 32 << 20],
                dataset_bytes: 3 << 30,
                cap_bytes: 1 << 30,
                cpus: 2.0,
                warmup: Duration::from_secs(3),
                measure: Duration::from_secs(10),
                cache: CacheChoice::Both,
                steady_limit: Duration::from_secs(180),
                // A p99 interval needs 5 fetches beyond it (stats::interval).
                min_fetches: 500,
                // After 15 s p50 was within ±1-5% and p99 within ±5-38% at 4 and 32 MiB
                // (stats::precision): p99 is asked 4 times p50's share. 30 s holds
                // ~1,000 fetches of 32 MiB; a cell short of it there says so.
                precision: Some(Targets {
                    p50: 0.05,
                    p99: 0.20,
                }),
                precision_min: Duration::from_secs(2),
                measure_limit: Duration::from_secs(30),
                clients: &[1],
                saturate_steps: 6,
                // `blobrace saturate` searches every size; a latency run only measures.
                saturate_sizes: &[],
                disk_probe: Duration::from_secs(1),
            },
            // Still three times the cap: disk-bound, like the full profile.
            Profile::Quick => Preset {
                sizes: &[1 << 10, 64 << 10, 512 << 10, 4 << 20],
                dataset_bytes: 768 << 20,
                cap_bytes: 256 << 20,
                cpus: 2.0,
                warmup: Duration::from_secs(1),
                measure: Duration::from_secs(2),
                cache: CacheChoice::Cold,
                steady_limit: Duration::from_secs(30),
                min_fetches: 0,
                // Every size's p99 judged (it needs 500 fetches: a fixed 2 s gave
                // 440-580 at 4 MiB), p50 to ±10% and p99 to ±30% where 6 s allows.
                precision: Some(Targets {
                    p50: 0.10,
                    p99: 0.30,
                }),
                precision_min: Duration::from_secs(1),
                measure_limit: Duration::from_secs(6),
                clients: &[1, 16],
                saturate_steps: 4,
                saturate_sizes: &[64 << 10],
                // Two probes per measurement, 72 measurements: 1 s each was a quarter of
                // a quick run. 250 ms still holds hundreds of reads at 4 MiB.
                disk_probe: Duration::from_millis(250),
            },
        }
    }
}

/// `<what> Default <full> (quick: <quick>).`, from the presets.
fn preset_help(what: &str, value: impl Fn(&Preset) -> String) -> String {
    format!(
        "{what} Default {} (quick: {}).",
        value(&Profile::Full.preset()),
        value(&Profile::Quick.preset())
    )
}

/// `3s`, `500ms`: as the flags take them.
fn duration_label(d: Duration) -> String {
    match d.as_millis() {
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

/// `--sizes`: a list of size classes.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeList(pub Vec<SizeClass>);

/// `--engines`: a list of engines, or `all`.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineList(pub Vec<EngineKind>);

/// `--clients`: client counts, ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientList(pub Vec<u32>);

/// `--rate`: fetches/s, ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct RateList(pub Vec<f64>);

/// Most clients of one load: each is a thread and a connection (PostgreSQL's
/// default max_connections is 100).
pub const MAX_CLIENTS: u32 = 512;

/// Highest rate offered: its schedule (8 bytes an arrival) stays small.
pub const MAX_RATE: f64 = 1_000_000.0;

/// What a run measures (`--mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Latency per fetch: one client (criterion under cargo bench), then each
    /// --clients count and --rate.
    #[default]
    Latency,
    /// The highest rate each engine sustains with p99 response time within
    /// --target-p99, per --clients count (open loop, found by bisection).
    Saturate,
}

/// A limit that can be switched off with `none`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit<T> {
    None,
    Some(T),
}

impl<T> Limit<T> {
    fn into_option(self) -> Option<T> {
        match self {
            Limit::None => None,
            Limit::Some(v) => Some(v),
        }
    }
}

fn parse_sizes(text: &str) -> Result<SizeList, InputError> {
    parse_size_list(text).map(SizeList)
}

/// `--saturate-sizes`: sizes, or "none".
fn parse_size_list_or_none(text: &str) -> Result<SizeList, InputError> {
    if text.trim() == "none" {
        return Ok(SizeList(Vec::new()));
    }
    parse_sizes(text)
}

fn parse_engines(text: &str) -> Result<EngineList, InputError> {
    parse_engine_list(text).map(EngineList)
}

fn parse_memory_cap(text: &str) -> Result<Limit<u64>, InputError> {
    if text.trim() == "none" {
        return Ok(Limit::None);
    }
    let bytes = parse_bytes(text)?;
    if bytes < MIN_CAP_BYTES {
        return Err(InputError::Value {
            what: "cap",
            input: text.into(),
            why: "below 16MiB the process itself does not fit".into(),
        });
    }
    Ok(Limit::Some(bytes))
}

fn parse_cpus(text: &str) -> Result<Limit<f64>, InputError> {
    if text.trim() == "none" {
        return Ok(Limit::None);
    }
    let bad = |why: &str| InputError::Value {
        what: "cpus",
        input: text.into(),
        why: why.into(),
    };
    let cpus: f64 = text
        .trim()
        .parse()
        .map_err(|_| bad("give a number of CPUs like 2 or 0.5, or none"))?;
    if !(cpus >= 0.01 && cpus.is_finite()) {
        return Err(bad("must be at least 0.01"));
    }
    Ok(Limit::Some(cpus))
}

/// `--clients 1,4,16`: each at least 1.
fn parse_clients(text: &str) -> Result<ClientList, InputError> {
    let bad = |why: &str| InputError::Value {
        what: "clients",
        input: text.into(),
        why: why.into(),
    };
    let mut list = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.parse::<u32>() {
            Ok(0) => return Err(bad("a load needs at least 1 client")),
            Ok(n) if n <= MAX_CLIENTS => list.push(n),
            Ok(_) => {
                return Err(bad(&format!(
                    "at most {MAX_CLIENTS} clients (one thread and one connection each)"
                )));
            }
            Err(_) => return Err(bad("give client counts like 1,4,16,64")),
        }
    }
    if list.is_empty() {
        return Err(bad("give client counts like 1,4,16,64"));
    }
    list.sort_unstable();
    list.dedup();
    Ok(ClientList(list))
}

/// `--rate 100,500.5`: fetches/s, each more than zero.
fn parse_rates(text: &str) -> Result<RateList, InputError> {
    let bad = |why: &str| InputError::Value {
        what: "rate",
        input: text.into(),
        why: why.into(),
    };
    let mut list = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let rate: f64 = part
            .trim_end_matches("/s")
            .parse()
            .map_err(|_| bad("give fetches per second like 100 or 250,500"))?;
        if !(rate > 0.0 && rate.is_finite()) {
            return Err(bad("a rate must be more than 0 fetches/s"));
        }
        if rate > MAX_RATE {
            return Err(bad(&format!(
                "at most {MAX_RATE} fetches/s: the arrival schedule is kept in memory"
            )));
        }
        list.push(rate);
    }
    if list.is_empty() {
        return Err(bad("give fetches per second like 100 or 250,500"));
    }
    list.sort_by(f64::total_cmp);
    list.dedup();
    Ok(RateList(list))
}

fn parse_max_in_flight(text: &str) -> Result<u32, InputError> {
    match text.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(InputError::Value {
            what: "max-in-flight",
            input: text.into(),
            why: "give a number of fetches, at least 1".into(),
        }),
    }
}

fn parse_samples(text: &str) -> Result<usize, InputError> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 10 => Ok(n),
        _ => Err(InputError::Value {
            what: "samples",
            input: text.into(),
            why: "criterion needs at least 10".into(),
        }),
    }
}

/// `--precision`: a share of each percentile, or off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision(pub Option<Targets>);

/// `5%` (p50; p99 four times as wide), `5%,20%` (p50, p99), `5` (percent) or `off`.
pub fn parse_precision(text: &str) -> Result<Precision, InputError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("off") {
        return Ok(Precision(None));
    }
    let share =
        |part: &str| -> Result<f64, InputError> {
            let part = part.trim();
            let bad = |why: &str| InputError::Value {
                what: "precision",
                input: text.into(),
                why: why.into(),
            };
            let percent: f64 = part.strip_suffix('%').unwrap_or(part).trim().parse().map_err(|_| {
            bad("give a percentage such as 5% (p50; p99 4x as wide), 5%,20% (p50, p99), or off")
        })?;
            if !(percent > 0.0 && percent < 100.0) {
                return Err(bad("each share must be more than 0% and less than 100%"));
            }
            Ok(percent / 100.0)
        };
    let targets = match t.split_once(',') {
        Some((p50, p99)) => Targets {
            p50: share(p50)?,
            p99: share(p99)?,
        },
        None => {
            let p50 = share(t)?;
            Targets {
                p50,
                p99: (p50 * Targets::P99_WIDER).min(0.99),
            }
        }
    };
    Ok(Precision(Some(targets)))
}

fn precision_label(precision: Option<Targets>) -> String {
    match precision {
        Some(t) => t.label(),
        None => "off".into(),
    }
}

/// `3s`, `500ms`, `2m`, `1.5s`.
pub fn parse_duration(text: &str) -> Result<Duration, InputError> {
    let t = text.trim();
    let bad = |why: &str| InputError::Value {
        what: "duration",
        input: text.into(),
        why: why.into(),
    };
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| bad("add a unit: ms, s or m"))?;
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| bad("not a number"))?;
    let secs = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" | "min" => value * 60.0,
        _ => return Err(bad("unknown unit (use ms, s or m)")),
    };
    if secs <= 0.0 || !secs.is_finite() {
        return Err(bad("must be more than zero"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A duration where 0 means "off" (`--disk-probe 0s`).
pub fn parse_duration_or_zero(text: &str) -> Result<Duration, InputError> {
    let t = text.trim();
    let zero = t
        .strip_suffix("ms")
        .or_else(|| t.strip_suffix("min"))
        .or_else(|| t.strip_suffix('s'))
        .or_else(|| t.strip_suffix('m'))
        .is_some_and(|n| n.parse::<f64>() == Ok(0.0));
    if zero {
        return Ok(Duration::ZERO);
    }
    parse_duration(text)
}

/// `12%` or `12` → 0.12.
pub fn parse_percent(text: &str) -> Result<f64, InputError> {
    text.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|n| *n >= 0.0 && n.is_finite())
        .map(|n| n / 100.0)
        .ok_or_else(|| InputError::Value {
            what: "noise",
            input: text.into(),
            why: "give a percentage like 10%".into(),
        })
}

/// One `--<server>-url` flag (and `BLOBRACE_<SERVER>_URL`) per registered server.
#[derive(Debug, Clone, Default)]
pub struct ServerUrls(pub BTreeMap<Server, String>);

impl Args for ServerUrls {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        Server::all().fold(cmd, |cmd, server| {
            cmd.arg(
                Arg::new(server.url_flag())
                    .long(server.url_flag())
                    .env(server.url_env())
                    .hide_env_values(true)
                    .value_name("URL")
                    .help(server.url_help()),
            )
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for ServerUrls {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self(
            Server::all()
                .filter_map(|s| {
                    let url = matches.get_one::<String>(s.url_flag())?;
                    Some((s, url.clone()))
                })
                .collect(),
        ))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Preset for everything below; any flag given overrides it.
    #[arg(long, env = "BLOBRACE_PROFILE", value_enum, default_value_t = Profile::Full)]
    pub profile: Profile,

    #[arg(long, env = "BLOBRACE_ENGINES", value_parser = parse_engines,
          help = "Engines, comma-separated, or \"all\". Default: all (servers that cannot be reached are skipped).",
          long_help = format!("Engines, comma-separated, or \"all\". Default: all (servers that cannot be reached are skipped).\n{}", EngineKind::help_lines()))]
    pub engines: Option<EngineList>,

    #[arg(long, env = "BLOBRACE_SIZES", value_parser = parse_sizes,
          help = preset_help("Size classes, comma-separated, e.g. \"1KiB,64KiB,4MiB\". KiB/k/K = 1024, kB/KB = 1000.",
              |p| p.sizes.iter().map(|&b| format_bytes(b)).collect::<Vec<_>>().join(",")))]
    pub sizes: Option<SizeList>,

    #[arg(long, env = "BLOBRACE_DATASET_BYTES", value_parser = parse_bytes,
          help = preset_help("Bytes of blobs per size class (whole blobs: rows = this / size).", |p| format_bytes(p.dataset_bytes)))]
    pub dataset_bytes: Option<u64>,

    #[arg(long, env = "BLOBRACE_CAP", value_parser = parse_memory_cap,
          help = preset_help("Memory cap of the measuring process, or \"none\".", |p| format_bytes(p.cap_bytes)))]
    pub cap: Option<Limit<u64>>,

    #[arg(long, env = "BLOBRACE_CPUS", value_parser = parse_cpus,
          help = preset_help("CPU cap in CPUs, or \"none\".", |p| p.cpus.to_string()))]
    pub cpus: Option<Limit<f64>>,

    /// Seed of blob contents and fetch ids.
    #[arg(long, env = "BLOBRACE_SEED")]
    pub seed: Option<u64>,

    /// Where datasets are stored (reused across runs).
    #[arg(long, env = "BLOBRACE_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,

    /// Where run results go: <results-dir>/<run-id>/results.{json,csv}.
    #[arg(long, env = "BLOBRACE_RESULTS_DIR", default_value = "charts")]
    pub results_dir: PathBuf,

    #[arg(long, env = "BLOBRACE_WARMUP", value_parser = parse_duration,
          help = preset_help("Warm-up per engine and size after the cache is emptied, e.g. \"3s\", \"500ms\".", |p| duration_label(p.warmup)))]
    pub warmup: Option<Duration>,

    #[arg(long, env = "BLOBRACE_MEASURE", value_parser = parse_duration,
          help = preset_help("A fixed measuring time per engine and size; given alone it turns the preset's --precision off, given with --precision it is the least time measured.", |p| duration_label(p.measure)))]
    pub measure: Option<Duration>,

    #[arg(long, env = "BLOBRACE_PRECISION", value_parser = parse_precision,
          help = preset_help("Measure each engine and size until its p50 and p99 are known to within these shares of their value (each 95% interval's half-width), for at least --measure (preset: 2s, quick 1s) and 1s (an interval needs five 200ms windows), at most --measure-limit. \"5%\" asks p99 four times as wide (±20%: it rests on 1% of the fetches, and p99 at ±5% takes minutes per cell); \"5%,10%\" sets both; \"off\": a fixed --measure. A wider precision stops sooner: its p99s are judged (compared, verdicts) from fewer fetches, so smaller differences between engines read as \"within noise\". A cell that hits the limit says how precise it got. Under cargo bench criterion's plan cannot stop early: its measuring time is projected from the warm-up's fetches, and where that plan falls short blobrace measures on past it, up to the limit (criterion's own figures cover its plan only).", |p| precision_label(p.precision)))]
    pub precision: Option<Precision>,

    #[arg(long, env = "BLOBRACE_MEASURE_LIMIT", value_parser = parse_duration,
          help = preset_help("The most time one engine and size is measured for under --precision; twice that while its p99 still lacks the 500 fetches an interval needs.", |p| duration_label(p.measure_limit)))]
    pub measure_limit: Option<Duration>,

    #[arg(long, env = "BLOBRACE_CACHE", value_enum,
          help = preset_help("Cache state each engine is measured in: cold (right after eviction), steady (prefilled until the cache is full, then warmed up until the hit ratio is stable), or both.", |p| p.cache.to_possible_value().expect("no skipped variants").get_name().to_string()))]
    pub cache: Option<CacheChoice>,

    #[arg(long, env = "BLOBRACE_STEADY_LIMIT", value_parser = parse_duration,
          help = preset_help("Time limit of each steady-state step (the prefill, then the settling); a result that did not settle in time says so.", |p| duration_label(p.steady_limit)))]
    pub steady_limit: Option<Duration>,

    #[arg(long, env = "BLOBRACE_MIN_FETCHES",
          help = preset_help("Keep measuring until this many fetches (500: enough for a p99 interval), for at most twice --measure; 0: time only. Under cargo bench, criterion's samples are raised so that its linear plan holds them (n(n+1)/2 fetches); where they do not fit in twice the time, criterion switches to flat samples and the result says \"too few fetches\".", |p| p.min_fetches.to_string()))]
    pub min_fetches: Option<u64>,

    /// Measure the engine list this many times, in rotating order (each repeat starts
    /// one engine later), and report the spread between repeats.
    #[arg(long, env = "BLOBRACE_REPEAT", default_value = "1",
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,

    /// O_DIRECT random reads of the size class's block size from a local dataset file,
    /// before and after each engine, recorded with its result: the disk's own state in
    /// the same minutes (a run in which it changed says so). "0s" turns it off.
    #[arg(long, env = "BLOBRACE_DISK_PROBE", value_parser = parse_duration_or_zero,
          help = preset_help("How long each O_DIRECT disk probe reads, before and after each engine (recorded with its result: the disk's own state in the same minutes); \"0s\" turns probes off.", |p| duration_label(p.disk_probe)))]
    pub disk_probe: Option<Duration>,

    #[command(flatten)]
    pub server_urls: ServerUrls,

    /// Load, measure and drop one size class at a time, so the disk holds one size
    /// class per store instead of all of them (the full matrix needs ~60GB otherwise).
    #[arg(long, env = "BLOBRACE_DROP_AFTER")]
    pub drop_after: bool,

    /// Stop the whole run at the first engine or store that fails. By default a load,
    /// measurement or drop that fails for one engine (a server OOM-killed or gone, a
    /// lost connection) is recorded with its reason, the run goes on with the others,
    /// and it exits non-zero at the end naming what failed.
    #[arg(long, env = "BLOBRACE_FAIL_FAST")]
    pub fail_fast: bool,

    #[arg(long, env = "BLOBRACE_TARGET_P99", value_parser = parse_duration,
          help = format!("Latency target of the report's verdict: the largest size whose p99 is at or under it. Default {}.", duration_label(DEFAULT_TARGET_P99)))]
    pub target_p99: Option<Duration>,

    /// How PostgreSQL stores the blobs: extended (its default: try to compress, then
    /// TOAST), external (TOAST without a compression attempt), or lo (large objects: the
    /// row holds an oid, the bytes are in pg_largeobject, written with lo_from_bytea and
    /// read with lo_get). Each is its own dataset (schema suffix _external, _lo).
    #[arg(long, env = "BLOBRACE_PG_STORAGE", value_enum, default_value_t = PgStorage::Extended)]
    pub pg_storage: PgStorage,

    /// SQLite's page size for the dataset file, in bytes: a power of two from 512 to
    /// 65536. The file's layout: each page size is its own dataset
    /// (`sqlite/<size>-x<N>-p<bytes>.sqlite`; 4096, SQLite's default, keeps the plain name).
    #[arg(long, env = "BLOBRACE_SQLITE_PAGE_SIZE", value_parser = parse_sqlite_page_size, default_value_t = crate::locations::DEFAULT_SQLITE_PAGE_SIZE)]
    pub sqlite_page_size: u32,

    /// The primary key rows are stored and fetched under: int (ids 1..N), uuidv4
    /// (random), uuidv7 or ulid (time-ordered), the last three as 16 bytes
    /// (SQLite BLOB, PostgreSQL BYTEA, MySQL-wire BINARY(16)). Rows are inserted in
    /// generation order and fetched by uniformly random keys; each key type is its own
    /// dataset (`-k<type>` in its name). SQLite and the servers have them; fs does not;
    /// the floor reads by offset whatever the key, and runs beside keyed engines as the
    /// round's reference (without --engines a keyed run measures those engines and it).
    #[arg(long, env = "BLOBRACE_KEY", default_value_t = KeyType::Int)]
    pub key: KeyType,

    /// SQLite's mmap_size for the SQLite engines' connections, in bytes (0, SQLite's
    /// default: read with read(2) into its own page cache; e.g. 4GiB: memory-map the
    /// whole file, reads then copy from the kernel's page cache). A read setting, not
    /// a file layout: it reads the same file. Recorded as mmap_size with each result.
    #[arg(long, env = "BLOBRACE_SQLITE_MMAP_SIZE", value_parser = parse_bytes, default_value = "0")]
    pub sqlite_mmap_size: u64,

    #[arg(long, env = "BLOBRACE_CLIENTS", value_parser = parse_clients,
          help = preset_help("Clients fetching at once, each with its own connection (SQLite: its own read-only connection; fs and floor: a thread each), each drawing its own seeded ids; a list gives one result per count. 1 client is criterion's (or measure's) own loop; more run in blobrace's load generator.", |p| p.clients.iter().map(u32::to_string).collect::<Vec<_>>().join(",")))]
    pub clients: Option<ClientList>,

    /// Open loop: offer this many fetches/s (a list: one result per rate and client
    /// count), whether or not earlier fetches finished. Response time is then timed
    /// from when each fetch was due, so stalls are not hidden. Without it: closed loop.
    #[arg(long, env = "BLOBRACE_RATE", value_parser = parse_rates, allow_hyphen_values = true)]
    pub rate: Option<RateList>,

    /// How open-loop arrivals are spaced: poisson (independent users) or constant.
    #[arg(long, env = "BLOBRACE_ARRIVALS", value_enum, default_value_t = Arrivals::Poisson)]
    pub arrivals: Arrivals,

    /// Open loop: most fetches due but not finished. Reaching it means the engine
    /// cannot serve the rate: the load stops there and says so (never drops fetches quietly).
    #[arg(long, env = "BLOBRACE_MAX_IN_FLIGHT", value_parser = parse_max_in_flight, default_value = "256")]
    pub max_in_flight: u32,

    #[arg(long, env = "BLOBRACE_SATURATE_SIZES", value_parser = parse_size_list_or_none,
          help = preset_help("Sizes at which a latency run also searches the sustainable rate (as `saturate` does) with the most --clients whose fetches fit under the caps, or \"none\". `saturate` itself searches every size.",
              |p| if p.saturate_sizes.is_empty() { "none".to_string() } else { p.saturate_sizes.iter().map(|&b| format_bytes(b)).collect::<Vec<_>>().join(",") }))]
    pub saturate_sizes: Option<SizeList>,

    /// After each engine's 1-client measurement, fetch on for this long under a CPU
    /// profiler: a flame graph per engine and size (profiles/ in the run directory,
    /// linked from the report) and where the client's time went (ORM, driver, SQLite,
    /// kernel, waiting). Off unless given, e.g. "5s".
    #[arg(long, env = "BLOBRACE_PROFILE_FETCHES", value_parser = parse_duration)]
    pub profile_fetches: Option<Duration>,

    /// latency: per-fetch latency (1 client under criterion, then the other --clients
    /// and --rate loads); saturate: the highest sustainable rate per engine and size.
    #[arg(long, env = "BLOBRACE_MODE", value_enum, default_value_t = Mode::Latency)]
    pub mode: Mode,

    /// criterion samples per engine and size (at least 10).
    #[arg(long, env = "BLOBRACE_SAMPLES", value_parser = parse_samples, default_value = "10")]
    pub samples: usize,
}

/// Validated settings of one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunConfig {
    pub profile: Profile,
    pub engines: Vec<EngineKind>,
    /// Engines named on the command line must run; defaults may be skipped (servers not up).
    pub engines_explicit: bool,
    pub sizes: Vec<SizeClass>,
    pub dataset_bytes: u64,
    pub cap: CapRequest,
    pub seed: u64,
    pub data_dir: PathBuf,
    pub results_dir: PathBuf,
    pub warmup: Duration,
    pub measure: Duration,
    /// How long each disk probe reads (0: none).
    #[serde(default)]
    pub disk_probe: Duration,
    /// Cache states measured, in order (results from before: cold only).
    #[serde(default = "cold_only")]
    pub cache: Vec<CacheState>,
    #[serde(default)]
    pub steady_limit: Duration,
    /// Times the engine list is measured (rotating order).
    #[serde(default = "one")]
    pub repeat: u32,
    /// Fetches a measurement keeps going for, within twice `measure` (0: time only).
    #[serde(default)]
    pub min_fetches: u64,
    /// `--precision`; None: a fixed `measure` (and results from before). Then
    /// `measure` is the least time, `measure_limit` the most.
    #[serde(default)]
    pub precision: Option<Targets>,
    #[serde(default)]
    pub measure_limit: Duration,
    pub samples: usize,
    #[serde(default)]
    pub pg_storage: PgStorage,
    #[serde(default = "default_sqlite_page_size")]
    pub sqlite_page_size: u32,
    #[serde(default)]
    pub key: KeyType,
    #[serde(default)]
    pub sqlite_mmap_size: u64,
    #[serde(default = "default_target_p99")]
    pub target_p99: Duration,
    #[serde(default)]
    pub drop_after: bool,
    /// Stop at the first failing engine instead of recording it and going on.
    #[serde(default)]
    pub fail_fast: bool,
    /// Client counts (results from before: 1).
    #[serde(default = "one_client")]
    pub clients: Vec<u32>,
    /// Open-loop rates, fetches/s (empty: closed loop).
    #[serde(default)]
    pub rates: Vec<f64>,
    #[serde(default = "poisson")]
    pub arrivals: Arrivals,
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight: u32,
    #[serde(default)]
    pub mode: Mode,
    /// Open-loop steps of each saturation search.
    #[serde(default)]
    pub saturate_steps: u32,
    /// Latency runs: sizes that also get a saturation search, with the most clients.
    #[serde(default)]
    pub saturate_sizes: Vec<SizeClass>,
    /// CPU profile of each engine's fetches for this long after its 1-client measurement.
    #[serde(default)]
    pub profile_fetches: Option<Duration>,
    /// Server URLs carry passwords: never written to results.
    #[serde(skip)]
    pub server_urls: BTreeMap<Server, String>,
}

fn cold_only() -> Vec<CacheState> {
    vec![CacheState::Cold]
}

fn one() -> u32 {
    1
}

fn one_client() -> Vec<u32> {
    vec![1]
}

fn poisson() -> Arrivals {
    Arrivals::Poisson
}

fn default_max_in_flight() -> u32 {
    256
}

fn default_target_p99() -> Duration {
    DEFAULT_TARGET_P99
}

impl RunConfig {
    pub fn locations(&self) -> Locations {
        Locations {
            data_dir: self.data_dir.clone(),
            server_urls: self.server_urls.clone(),
            server_options: ServerOptions {
                pg_storage: self.pg_storage,
            },
            sqlite_page_size: self.sqlite_page_size,
            sqlite_mmap_size: self.sqlite_mmap_size,
        }
    }

    /// The dataset layout and read settings of this run, for the report:
    /// `key int · SQLite page 4096 B, mmap 0 · PostgreSQL storage extended`.
    pub fn layout_label(&self) -> String {
        format!(
            "key {} · SQLite page {} B, mmap_size {} · PostgreSQL storage {}",
            self.key,
            self.sqlite_page_size,
            self.sqlite_mmap_size,
            crate::serde_name(&self.pg_storage)
        )
    }

    /// The loads of a latency run, in order: each client count closed loop, or with
    /// `--rate`, each client count at each rate (open loop).
    pub fn load_points(&self) -> Vec<LoadPoint> {
        let mut points = Vec::new();
        for &clients in &self.clients {
            if self.rates.is_empty() {
                points.push(LoadPoint::closed(clients));
            }
            for &rate in &self.rates {
                points.push(LoadPoint::open(clients, rate, self.arrivals));
            }
        }
        points
    }

    /// `--precision`'s bounds, or None for a fixed measuring time.
    pub fn precision_goal(&self) -> Option<crate::measure::PrecisionGoal> {
        Some(crate::measure::PrecisionGoal {
            targets: self.precision?,
            min: self.measure,
            min_fetches: self.min_fetches,
            limit: self.measure_limit.max(self.measure),
        })
    }

    /// How a load runs: the run's timings, limit and CPUs.
    pub fn load_settings(&self, cpus: f64) -> LoadSettings {
        LoadSettings {
            warm_up: self.warmup,
            measure: self.measure,
            max_in_flight: self.max_in_flight,
            cpus,
        }
    }

    pub fn datasets(&self) -> Vec<DatasetSpec> {
        self.sizes
            .iter()
            .map(|&size| {
                DatasetSpec::new(size, self.dataset_bytes, self.seed, self.key).expect("validated")
            })
            .collect()
    }
}

impl RunArgs {
    /// Fill in the profile's presets and check what involves two flags at once.
    pub fn resolve(&self) -> Result<RunConfig, InputError> {
        let preset = self.profile.preset();
        let sizes = match &self.sizes {
            Some(SizeList(list)) => list.clone(),
            None => preset
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
        for size in &sizes {
            size.rows_for(dataset_bytes)?;
        }
        let memory_bytes = self
            .cap
            .unwrap_or(Limit::Some(preset.cap_bytes))
            .into_option();
        if let Some(bytes) = memory_bytes {
            check_cap_fits_blobs(bytes, &sizes)?;
        }
        let cpus = self.cpus.unwrap_or(Limit::Some(preset.cpus)).into_option();
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
        let floor_or_keyed = |e: &EngineKind| e.store().has_keys() || e.store() == StoreKind::Floor;
        let engines = match &self.engines {
            Some(EngineList(list)) => list.clone(),
            None => EngineKind::all()
                .filter(|e| !self.key.is_binary() || floor_or_keyed(e))
                .collect(),
        };
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
                    if keyless.store() == StoreKind::Floor {
                        "it reads a packed file at the id's offset"
                    } else {
                        "it reads one file per blob, named by its id"
                    },
                    EngineKind::all()
                        .filter(|e| e.store().has_keys())
                        .map(|e| e.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                    if keyless.store() == StoreKind::Floor {
                        " (the floor may run beside them, as the round's reference)"
                    } else {
                        ""
                    },
                ),
            });
        }
        Ok(RunConfig {
            profile: self.profile,
            engines,
            engines_explicit: self.engines.is_some(),
            sizes,
            dataset_bytes,
            cap: CapRequest { memory_bytes, cpus },
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            data_dir: self.data_dir.clone(),
            results_dir: self.results_dir.clone(),
            warmup: self.warmup.unwrap_or(preset.warmup),
            measure: match (precision, self.measure) {
                (_, Some(measure)) => measure,
                (Some(_), None) => preset.precision_min,
                (None, None) => preset.measure,
            },
            precision,
            measure_limit: self.measure_limit.unwrap_or(preset.measure_limit),
            disk_probe: self.disk_probe.unwrap_or(preset.disk_probe),
            cache: self.cache.unwrap_or(preset.cache).states(),
            steady_limit: self.steady_limit.unwrap_or(preset.steady_limit),
            repeat: self.repeat,
            min_fetches: self.min_fetches.unwrap_or(preset.min_fetches),
            samples: self.samples,
            pg_storage: self.pg_storage,
            sqlite_page_size: self.sqlite_page_size,
            key: self.key,
            sqlite_mmap_size: self.sqlite_mmap_size,
            target_p99: self.target_p99.unwrap_or(DEFAULT_TARGET_P99),
            drop_after: self.drop_after,
            fail_fast: self.fail_fast,
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
            },
            profile_fetches: self.profile_fetches,
            server_urls,
        })
    }
}

impl RunConfig {
    /// criterion's sample count: `samples`, raised to the smallest n whose linear plan
    /// (1, 2, ... n iterations: n(n+1)/2 fetches at least) holds `min_fetches`.
    /// criterion keeps that plan while it fits in twice the measurement time
    /// (`SamplingMode::Auto`), and otherwise samples flat: fewer fetches, said in the
    /// result as "too few fetches" where a p99 needs more.
    pub fn criterion_samples(&self) -> usize {
        let mut n = self.samples.max(1) as u64;
        while n * (n + 1) / 2 < self.min_fetches {
            n += 1;
        }
        n as usize
    }
}

/// Loading or fetching one blob holds a few copies of it (our buffer, the driver's
/// argument or result buffer, SQLite's bind copy): measured peak ~4.4x a 32MiB
/// blob. Below this the kernel kills the run mid-way.
fn check_cap_fits_blobs(cap_bytes: u64, sizes: &[SizeClass]) -> Result<(), InputError> {
    let largest = sizes.iter().map(|s| s.bytes()).max().unwrap_or(0);
    let needed = MIN_CAP_BYTES + 5 * largest;
    if cap_bytes < needed {
        return Err(InputError::Value {
            what: "cap",
            input: format_bytes(cap_bytes),
            why: format!(
                "{} blobs need a cap of at least {} (16MiB + 5 copies of a blob): raise --cap or drop the largest size",
                format_bytes(largest),
                format_bytes(needed)
            ),
        });
    }
    Ok(())
}

/// A clap error as the one line the tools print: `Error: <what> ...`, exit code 2.
/// None for `--help` and `--version`, which clap prints itself.
pub fn usage_error(e: &clap::Error) -> Option<String> {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        return None;
    }
    let text = e.render().to_string();
    let text = text.trim_start_matches("error: ").trim_end();
    Some(format!("Error: {text}"))
}

fn default_sqlite_page_size() -> u32 {
    crate::locations::DEFAULT_SQLITE_PAGE_SIZE
}

/// `--sqlite-page-size`: what SQLite accepts, or one error naming the choices.
fn parse_sqlite_page_size(text: &str) -> Result<u32, String> {
    let valid =
        "a power of two from 512 to 65536 (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)";
    match text.trim().parse::<u32>() {
        Ok(n) if (512..=65536).contains(&n) && n.is_power_of_two() => Ok(n),
        _ => Err(format!("SQLite's page size is {valid}, not '{text}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    fn resolve(args: &[&str]) -> Result<RunConfig, String> {
        let mut all = vec!["blobrace"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all)
            .map_err(|e| e.to_string())?
            .run
            .resolve()
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_keyed_run_without_engines_measures_the_engines_with_keys_and_the_floor() {
        let keyed = resolve(&["--key", "uuidv7"]).unwrap();
        assert_eq!(keyed.key, KeyType::Uuidv7);
        assert!(!keyed.engines.is_empty());
        let names: Vec<&str> = keyed.engines.iter().map(|e| e.name()).collect();
        assert!(names.contains(&"sqlite-blobio") && names.contains(&"postgres-raw"));
        // The floor stays as the round's reference; fs has no keys.
        assert!(
            names.contains(&"floor") && !names.contains(&"fs"),
            "{names:?}"
        );
        // Every dataset of the run carries the key type, so its stores name it.
        assert!(keyed.datasets().iter().all(|d| d.key == KeyType::Uuidv7));
        assert!(keyed.datasets()[0].stem().ends_with("-kuuidv7"));
        let plain = resolve(&[]).unwrap();
        assert!(plain.engines.iter().any(|e| e.name() == "floor"));
        assert!(
            plain.datasets()[0]
                .stem()
                .ends_with(&format!("x{}", plain.datasets()[0].rows))
        );
    }

    #[test]
    fn profiles_set_defaults_and_flags_override() {
        let quick = resolve(&["--profile", "quick"]).unwrap();
        assert_eq!(quick.sizes.len(), 4);
        assert_eq!(quick.dataset_bytes, 768 << 20);
        assert_eq!(quick.cap.memory_bytes, Some(256 << 20));
        assert_eq!(quick.warmup, Duration::from_secs(1));
        let full = resolve(&["--sizes", "64KiB", "--cap", "none", "--cpus", "none"]).unwrap();
        assert_eq!(full.sizes, vec![SizeClass::new(65536).unwrap()]);
        assert_eq!(full.dataset_bytes, 3 << 30);
        assert_eq!(full.target_p99, DEFAULT_TARGET_P99);
        assert_eq!(
            full.cap,
            CapRequest {
                memory_bytes: None,
                cpus: None
            }
        );
        assert_eq!(resolve(&[]).unwrap().sizes, SizeClass::defaults());
    }

    #[test]
    fn bad_values_name_the_problem() {
        assert!(resolve(&["--sizes", "12XB"]).unwrap_err().contains("12XB"));
        assert!(
            resolve(&["--sizes", "0"])
                .unwrap_err()
                .contains("at least 8 bytes")
        );
        assert!(
            resolve(&["--engines", "mongo"])
                .unwrap_err()
                .contains("unknown engine 'mongo'")
        );
        let small = resolve(&["--sizes", "4MiB", "--dataset-bytes", "1MiB"]).unwrap_err();
        assert!(small.contains("smaller than one 4MiB blob"), "{small}");
        assert!(resolve(&["--warmup", "3"]).unwrap_err().contains("unit"));
        // 0 turns the disk probes off (and only there is 0 a duration).
        assert_eq!(
            resolve(&["--disk-probe", "0s"]).unwrap().disk_probe,
            Duration::ZERO
        );
        assert_eq!(
            resolve(&["--disk-probe", "0ms"]).unwrap().disk_probe,
            Duration::ZERO
        );
        assert!(
            resolve(&["--warmup", "0s"])
                .unwrap_err()
                .contains("more than zero")
        );
        assert!(resolve(&["--disk-probe", "-1s"]).is_err());
        assert!(resolve(&["--cap", "1MiB"]).is_err());
        let tight = resolve(&["--cap", "64MiB", "--sizes", "32MiB"]).unwrap_err();
        assert!(tight.contains("at least 176MiB"), "{tight}");
        assert!(resolve(&["--cpus", "two"]).is_err());
        assert!(resolve(&["--samples", "3"]).is_err());
    }

    #[test]
    fn criterion_samples_hold_the_minimum_fetches_in_a_linear_plan() {
        let full = resolve(&["--profile", "full"]).unwrap();
        assert_eq!(full.min_fetches, 500);
        // 32 * 33 / 2 = 528 >= 500; 31 * 32 / 2 = 496 is not.
        assert_eq!(full.criterion_samples(), 32);
        let quick = resolve(&["--profile", "quick"]).unwrap();
        assert_eq!((quick.min_fetches, quick.criterion_samples()), (0, 10));
        let more = resolve(&[
            "--profile",
            "quick",
            "--samples",
            "50",
            "--min-fetches",
            "100",
        ]);
        assert_eq!(more.unwrap().criterion_samples(), 50);
    }

    #[test]
    fn the_presets_measure_to_a_precision_and_a_time_given_alone_is_fixed() {
        let s = Duration::from_secs;
        let t = |p50, p99| Targets { p50, p99 };
        let full = resolve(&[]).unwrap();
        assert_eq!(
            (full.precision, full.measure, full.measure_limit),
            (Some(t(0.05, 0.2)), s(2), s(30))
        );
        let goal = full.precision_goal().unwrap();
        assert_eq!((goal.min, goal.limit, goal.min_fetches), (s(2), s(30), 500));
        let quick = resolve(&["--profile", "quick"]).unwrap();
        assert_eq!(
            (quick.precision, quick.measure, quick.measure_limit),
            (Some(t(0.1, 0.3)), s(1), s(6))
        );
        // A measuring time alone is the fixed time it always was.
        let fixed = resolve(&["--measure", "3s"]).unwrap();
        assert_eq!((fixed.precision, fixed.measure), (None, s(3)));
        assert_eq!(fixed.precision_goal(), None);
        let off = resolve(&["--precision", "off"]).unwrap();
        assert_eq!((off.precision, off.measure), (None, s(10)));
        // Both: the time is the least measured.
        let both = resolve(&[
            "--precision",
            "2.5%",
            "--measure",
            "500ms",
            "--measure-limit",
            "9s",
        ]);
        let both = both.unwrap();
        assert_eq!(both.precision, Some(t(0.025, 0.1)));
        let two = resolve(&["--precision", "3%,15%"]).unwrap();
        assert_eq!(two.precision, Some(t(0.03, 0.15)));
        let goal = both.precision_goal().unwrap();
        assert_eq!((goal.min, goal.limit), (Duration::from_millis(500), s(9)));
        for bad in ["0", "100%", "five", "5x", "5%,", "5%,0"] {
            let err = resolve(&["--precision", bad]).unwrap_err();
            assert!(err.contains("precision"), "{bad}: {err}");
        }
    }

    #[test]
    fn every_server_has_a_url_flag() {
        let mut args = vec!["blobrace".to_string()];
        for server in Server::all() {
            args.push(format!("--{}", server.url_flag()));
            args.push(format!("x://{}", server.name()));
        }
        let cli = Cli::try_parse_from(args).unwrap();
        let config = cli.run.resolve().unwrap();
        for server in Server::all() {
            assert_eq!(
                config.locations().server_url(server),
                Some(format!("x://{}", server.name()).as_str())
            );
        }
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("0s").is_err());
        assert_eq!(parse_percent("10%").unwrap(), 0.1);
        assert!(parse_percent("ten").is_err());
    }
}
