//! What was typed: every flag (and its `BLOBRACE_*` variable) of a run, as clap
//! parses it, before any preset is filled in.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::{Arg, ArgMatches, Args, FromArgMatches, ValueEnum};
use serde::{Deserialize, Serialize};

use crate::cap::disk::DiskCap;
use crate::dataset::key::KeyType;
use crate::db::registry::DatabaseKnobs;
use crate::db::registry::EngineKind;
use crate::db::server::Server;
use crate::load_gen::Arrivals;
use crate::size::{format_bytes, parse_bytes};

use super::DEFAULT_TARGET_P99;
use super::parse::{
    ClientList, EngineList, Limit, Precision, RateList, SizeList, parse_clients, parse_cpus,
    parse_disk_cap_flag, parse_duration, parse_duration_or_zero, parse_engines,
    parse_max_in_flight, parse_memory_cap, parse_precision, parse_rates, parse_samples, parse_seed,
    parse_size_list_or_none, parse_sizes, precision_label,
};
use super::preset::{CacheChoice, Preset, duration_label, preset_help};

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
    #[arg(long = "profile", env = "BLOBRACE_PROFILE", value_enum, default_value_t = Preset::Full)]
    pub preset: Preset,

    #[arg(long, env = "BLOBRACE_ENGINES", value_parser = parse_engines,
          help = "Engines, comma-separated, or \"all\". Default: all (servers that cannot be reached are skipped).",
          long_help = format!("Engines, comma-separated, or \"all\". Default: all (servers that cannot be reached are skipped).\n{}", EngineKind::help_lines()))]
    pub engines: Option<EngineList>,

    #[arg(long, env = "BLOBRACE_SIZES", value_parser = parse_sizes,
          help = preset_help("Size classes, comma-separated, e.g. \"1KiB,64KiB,4MiB\". KiB/k/K = 1024, kB/KB = 1000.",
              |p| p.sizes.iter().map(|&b| format_bytes(b)).collect::<Vec<_>>().join(",")))]
    pub sizes: Option<SizeList>,

    #[arg(long, env = "BLOBRACE_SIZE_MIX", value_parser = super::parse::parse_size_mix,
          conflicts_with = "sizes",
          help = "Blobs of many sizes in one dataset instead of size classes: 4KiB:67,8KiB:10,1MiB:3 (sizes and weights; fio's 4k/67:8k/10 too), uniform:LOW,HIGH, lognormal:MEDIAN,SIGMA,LARGEST, hist:FILE (a YCSB histogram file), dir:DIR (the sizes of a directory's files, nothing read), a table's column sampled by size (sqlite:FILE#TABLE.COLUMN, postgres://USER:PASS@HOST/DB#[SCHEMA.]TABLE.COLUMN, mysql://USER:PASS@HOST/DB#TABLE.COLUMN; up to 200,000 values' lengths, no content copied) or file:FILE (a mix a run saved). Each row's size comes from the seed and its id; the dataset holds --dataset-bytes.")]
    pub size_mix: Option<crate::dataset::mix::MixRef>,

    /// What the blobs hold: random (incompressible bytes, the default), text (prose-like
    /// words), json (records with nested objects and arrays), html (pages of tags and
    /// text), or ratio:R (bytes built to compress about R:1 under a general compressor,
    /// 1 < R <= 100, for a sweep). A dataset of its own (`-text` in its name), loaded
    /// beside the random one; PostgreSQL then loads with its default compression (pglz)
    /// as its users' documents are.
    #[arg(long, env = "BLOBRACE_CONTENT", default_value = "random",
          value_parser = |s: &str| s.parse::<crate::dataset::documents::Content>())]
    pub content: crate::dataset::documents::Content,

    #[arg(long, env = "BLOBRACE_SHARE", value_parser = super::share::parse_share,
          help = "This machine's share of the size classes when a run is split across n machines: i/n takes every n-th size from the i-th (1/2: the 1st, 3rd...; 2/2: the 2nd, 4th...). Join the runs with `blobrace merge`.")]
    pub share: Option<super::Share>,

    #[arg(long, env = "BLOBRACE_DATASET_BYTES", value_parser = parse_bytes, allow_hyphen_values = true,
          help = preset_help("Bytes of blobs per size class (whole blobs: rows = this / size).", |p| format_bytes(p.dataset_bytes)))]
    pub dataset_bytes: Option<u64>,

    #[arg(long, env = "BLOBRACE_CAP", value_parser = parse_memory_cap, allow_hyphen_values = true,
          help = preset_help("Memory cap of the measuring process, or \"none\".", |p| format_bytes(p.cap_bytes)))]
    pub cap: Option<Limit<u64>>,

    #[arg(long, env = "BLOBRACE_CPUS", value_parser = parse_cpus, allow_hyphen_values = true,
          help = preset_help("CPU cap in CPUs, or \"none\".", |p| p.cpus.to_string()))]
    pub cpus: Option<Limit<f64>>,

    /// The seed's post's conditions: --cap and --cpus on the servers' containers only.
    /// This process, and with it the embedded stores, one file per blob and the floor,
    /// runs uncapped: it reads from the machine's whole page cache, as the post's
    /// SQLite did beside its capped PostgreSQL. Not a fair race (each result says the
    /// cap it ran under); docs/seed.md sets its figures beside the post's.
    #[arg(long, env = "BLOBRACE_UNCAPPED_IN_PROCESS", value_parser = BoolishValueParser::new())]
    pub uncapped_in_process: bool,

    #[arg(long, env = "BLOBRACE_DISK_CAP", value_parser = parse_disk_cap_flag,
          help = "Disk cap of the measuring process on the disk of --data-dir: the rates of the volume the blobs will be served from, applied by the kernel's block throttle (cgroup v1 blkio, v2 io.max) and read back. Default: none (the dev box's own disk).",
          long_help = format!("Disk cap of the measuring process on the disk of --data-dir: the rates of the volume the blobs will be served from, applied by the kernel's block throttle (cgroup v1 blkio, v2 io.max) and read back; what cannot be capped is said and recorded as not capped. It caps the embedded stores, one file per blob and the floor, and each server's container (written into its cgroup on the disk of its data volume, again after every restart, taken off at the end). A preset is the volume's own published rate, its source recorded with the run; a VM's own disk limits and burst credits are not modelled. Default: none (the dev box's own disk). It takes {}.", crate::cap::disk::disk_cap_forms()))]
    pub disk_cap: Option<Limit<DiskCap>>,

    #[arg(long, env = "BLOBRACE_READAHEAD", value_parser = crate::cap::readahead::parse_readahead,
          help = "Readahead of the disk under --data-dir for the run (its read_ahead_kb), in KiB, or \"host\" for the disk's own. Default: 128 (Linux's default).",
          long_help = format!("Readahead of the disk under --data-dir for the run (its queue/read_ahead_kb; the servers' volumes' disks too where they are seen from here): how much a cold buffered read or mmap page fault pulls in around what it asked for. LMDB's 64 KiB fetch read 6.5 MB from disk at 8192 KiB (a VM's setting) and 214 KiB at 128 KiB. Set as root before anything is read, read back, recorded, and put back at the end (a killed run's by a watchdog, or the next run); two runs at once must ask the same. Where it cannot be set (not root, a container's read-only /sys) the default is said and recorded, and a value asked for is refused. Default: {} KiB, Linux's own, so runs on different hosts compare. It takes {}.", crate::cap::readahead::DEFAULT_KB, crate::cap::readahead::FORMS))]
    pub readahead: Option<crate::cap::readahead::Readahead>,

    #[arg(long, env = "BLOBRACE_NETWORK_RTT", value_parser = super::parse::parse_network_rtt_flag, allow_hyphen_values = true,
          help = "A network between the engines and their servers: the round trip added, in whole ms (e.g. \"1ms\", \"2ms:1ms\" with jitter; \"0\": the proxy alone), or \"none\". Default: none (loopback).",
          long_help = format!("A network between the engines and their servers, as in production where the database is on another host: every server engine and the object store fetch through Toxiproxy (started by the run, killed with it), whose latency toxic adds the round trip, half each way; the round trip each result records is measured through it. The embedded stores are in the process and get none: that is the difference it shows. Loads, caps and cold restarts reach the servers directly. Default: none (loopback). It takes {}.", crate::deploy::network::FORMS))]
    pub network_rtt: Option<Limit<crate::deploy::network::NetworkRtt>>,

    #[arg(long, env = "BLOBRACE_DISK_LATENCY", value_parser = super::parse::parse_disk_latency_flag, allow_hyphen_values = true,
          help = "A disk that answers in milliseconds: each read and write of the data directory's disk (and the local servers' volumes) delayed this long (e.g. \"1ms\", \"0.5ms\", \"250us\"; \"0\": the emulated disk's own path), or \"none\". Default: none (the machine's own disk).",
          long_help = format!("A disk that answers in milliseconds, as a cloud block volume does on each cache miss: the run mounts its data directory (<data-dir>/latency-disk, its bytes in <data-dir>/latency-disk.img) on an emulated block device, nbdkit's delay filter through nbdfuse and a loop device in direct-I/O mode (no second page cache: the memory cap still holds), and takes it down when it ends, however it ends. Needs root, FUSE and Debian's nbdkit, libnbd-bin and fuse3 (scripts/setup.sh). Each local server's data volume goes onto it too: its container stopped, a directory of the emulated disk bound over the volume, started again (a server of its own there, which makes its database the first time and keeps its datasets in the image), and put back on its own volume at the end or after a kill; a remote server, or one whose volume is not seen from here (the compose runner), is said not controlled. Other runs using those servers meanwhile see the emulated disk's datasets. Default: none. It takes {}.", crate::deploy::slow_disk::FORMS))]
    pub disk_latency: Option<Limit<crate::deploy::slow_disk::DiskLatency>>,

    #[arg(long, env = "BLOBRACE_DEPLOYMENT", value_parser = crate::deploy::presets::parse_deployment,
          help = "The machine you deploy on, by name: its disk's rate and latency, the network to the servers and the readahead at once (dev-box, nvme-host, aws-gp3-same-az, aws-gp3-cross-az, gcp-pd-balanced); --disk-cap, --disk-latency, --network-rtt and --readahead given beside it override its part. Default: none (each flag's own default).",
          long_help = format!("The machine you deploy on, by name: its disk's rate (--disk-cap) and latency (--disk-latency), the network to the servers (--network-rtt) and the readahead (--readahead) at once, each from the provider's published figures (recorded with the run; docs/deployments.md). A flag given beside it overrides its part. Part of a run's identity: resume, merge and `blobrace variants` (scripts/deployments.sh: several side by side). Default: none. It takes: {}.", crate::deploy::presets::forms()))]
    pub deployment: Option<crate::deploy::presets::Deployment>,

    /// Seed of blob contents and fetch ids.
    #[arg(long, env = "BLOBRACE_SEED", value_parser = parse_seed, allow_hyphen_values = true)]
    pub seed: Option<u64>,

    /// Where datasets are stored (reused across runs).
    #[arg(long, env = "BLOBRACE_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,

    /// Where run results go: <results-dir>/<run-id>/results.{json,csv}.
    #[arg(long, env = "BLOBRACE_RESULTS_DIR", default_value = "charts")]
    pub results_dir: PathBuf,

    #[arg(long, env = "BLOBRACE_WARMUP", value_parser = parse_duration, allow_hyphen_values = true,
          help = preset_help("Warm-up per engine and size after the cache is emptied, e.g. \"3s\", \"500ms\".", |p| duration_label(p.warmup)))]
    pub warmup: Option<Duration>,

    #[arg(long, env = "BLOBRACE_MEASURE", value_parser = parse_duration, allow_hyphen_values = true,
          help = preset_help("A fixed measuring time per engine and size; given alone it turns the preset's --precision off, given with --precision it is the least time measured.", |p| duration_label(p.measure)))]
    pub measure: Option<Duration>,

    #[arg(long, env = "BLOBRACE_PRECISION", value_parser = parse_precision,
          help = preset_help("Measure each engine and size until its p50 and p99 are known to within these shares of their value (each 95% interval's half-width), for at least --measure (preset: 2s, quick 1s) and 1s (an interval needs five 200ms windows), at most --measure-limit. \"5%\" asks p99 four times as wide (±20%: it rests on 1% of the fetches, and p99 at ±5% takes minutes per cell); \"5%,10%\" sets both; \"off\": a fixed --measure. A wider precision stops sooner: its p99s are judged (compared, verdicts) from fewer fetches, so smaller differences between engines read as \"within noise\". A cell that hits the limit says how precise it got. Under cargo bench criterion's plan cannot stop early: its measuring time is projected from the warm-up's fetches, and where that plan falls short blobrace measures on past it, up to the limit (criterion's own figures cover its plan only).", |p| precision_label(p.precision)))]
    pub precision: Option<Precision>,

    #[arg(long, env = "BLOBRACE_MEASURE_LIMIT", value_parser = parse_duration, allow_hyphen_values = true,
          help = preset_help("The most time one engine and size is measured for under --precision; twice that while its p99 still lacks the 500 fetches an interval needs.", |p| duration_label(p.measure_limit)))]
    pub measure_limit: Option<Duration>,

    #[arg(long, env = "BLOBRACE_CACHE", value_enum,
          help = preset_help("Cache state each engine is measured in: cold (right after eviction), steady (prefilled until the cache is full, then warmed up until the hit ratio is stable), or both.", |p| p.cache.to_possible_value().expect("no skipped variants").get_name().to_string()))]
    pub cache: Option<CacheChoice>,

    #[arg(long, env = "BLOBRACE_STEADY_LIMIT", value_parser = parse_duration, allow_hyphen_values = true,
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
    #[arg(long, env = "BLOBRACE_DISK_PROBE", value_parser = parse_duration_or_zero, allow_hyphen_values = true,
          help = preset_help("How long each O_DIRECT disk probe reads, before and after each engine (recorded with its result: the disk's own state in the same minutes); \"0s\" or \"off\" turns probes off.", |p| duration_label(p.disk_probe)))]
    pub disk_probe: Option<Duration>,

    #[command(flatten)]
    pub server_urls: ServerUrls,

    /// Load, measure and drop one size class at a time, so the disk holds one size
    /// class per store instead of all of them (the full matrix needs ~60GB otherwise).
    #[arg(long, env = "BLOBRACE_DROP_AFTER", value_parser = BoolishValueParser::new())]
    pub drop_after: bool,

    /// Keep every dataset: refuse a run whose loads do not all fit on the disk at
    /// once. By default such a run goes size class by size class instead, keeping on
    /// disk the datasets dearest to load again (as far as the disk allows, for the
    /// next run to reuse) and dropping the others once measured; it says its plan,
    /// with the arithmetic, before loading.
    // Not clap's `conflicts_with`: it counts a variable set to "false" (as compose's
    // runner passes every knob) as given, so the pair is checked on values in resolve.
    #[arg(long, env = "BLOBRACE_KEEP_ALL", value_parser = BoolishValueParser::new())]
    pub keep_all: bool,

    /// Refuse instead of waiting where another blobrace process holds a dataset (loading,
    /// churning or dropping it, or reading one this process would load or drop). By
    /// default the process waits, saying for whom.
    #[arg(long, env = "BLOBRACE_NO_WAIT", value_parser = BoolishValueParser::new())]
    pub no_wait: bool,

    /// Stop the whole run at the first engine or store that fails. By default a load,
    /// measurement or drop that fails for one engine (a server OOM-killed or gone, a
    /// lost connection) is recorded with its reason, the run goes on with the others,
    /// and it exits non-zero at the end naming what failed.
    #[arg(long, env = "BLOBRACE_FAIL_FAST", value_parser = BoolishValueParser::new())]
    pub fail_fast: bool,

    /// Start a new run even where an earlier one with the same flags stopped before
    /// its end. By default a run stopped part-way (Ctrl-C, SIGTERM, a kill, a reboot,
    /// a failing server) is continued: the cells it measured are kept, only the
    /// missing ones are measured, and one report covers the whole.
    #[arg(long, env = "BLOBRACE_FRESH", value_parser = BoolishValueParser::new())]
    pub fresh: bool,

    #[arg(long, env = "BLOBRACE_TARGET_P99", value_parser = parse_duration,
          help = format!("Latency target of the report's verdict: the largest size whose p99 is at or under it. Default {}.", duration_label(DEFAULT_TARGET_P99)))]
    pub target_p99: Option<Duration>,

    /// Each database's own flags, declared in its folder (`db/<name>/knobs.rs`).
    #[command(flatten)]
    pub database_knobs: DatabaseKnobs,

    /// The primary key rows are stored and fetched under: int (ids 1..N), uuidv4
    /// (random), uuidv7 or ulid (time-ordered), the last three as 16 bytes
    /// (SQLite BLOB, PostgreSQL BYTEA, MySQL-wire BINARY(16)). Rows are inserted in
    /// generation order and fetched by uniformly random keys; each key type is its own
    /// dataset (`-k<type>` in its name). SQLite and the servers have them; fs does not;
    /// the floor reads by offset whatever the key, and runs beside keyed engines as the
    /// round's reference (without --engines a keyed run measures those engines and it).
    #[arg(long, env = "BLOBRACE_KEY", default_value_t = KeyType::Int)]
    pub key: KeyType,

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
    #[arg(long, env = "BLOBRACE_PROFILE_FETCHES", value_parser = parse_duration, allow_hyphen_values = true)]
    pub profile_fetches: Option<Duration>,

    /// The time to the first bytes of a large blob: after each engine's 1-client
    /// measurement at sizes of 1 MiB and more, fetch on for this long reading each blob
    /// in 64 KiB pieces, timed at the first piece and at the last (engines that read
    /// whole values only say so). "0s" turns it off.
    #[arg(long, env = "BLOBRACE_FIRST_BYTES", value_parser = parse_duration_or_zero, allow_hyphen_values = true, default_value = "1s")]
    pub first_bytes: Duration,

    /// Which ids the fetches ask for: uniform (every blob alike), zipfian[:theta]
    /// (YCSB's scrambled zipfian, theta 0.99 by default: a few blobs take most reads,
    /// spread over the file), hotspot:<hot%>/<reads%> (hotspot:20/80: 80% of the reads
    /// go to the first 20% of the ids) or latest (the last blobs loaded are the most
    /// read). Seeded: every engine gets the same ids.
    #[arg(long, env = "BLOBRACE_ACCESS", value_parser = crate::workload::access::Access::parse, default_value = "uniform")]
    pub access: crate::workload::access::Access,

    /// Measure a dataset that has changed: after the load, this share of the rows
    /// (percent, 0-100; 0: none) gets new content through each database's own write
    /// path, seeded, in random order (see --churn-kind). A churned dataset is its own
    /// dataset (`-churn30` in its name) beside the fresh one; a churn killed halfway
    /// resumes. SQLite and the SQL servers change rows; the floor reads its own file as
    /// the round's reference; fs and the object store cannot yet (without --engines a
    /// churned run leaves them out).
    #[arg(long, env = "BLOBRACE_CHURN", value_parser = crate::dataset::churn::Churn::parse_percent, default_value = "0", allow_hyphen_values = true)]
    pub churn: u8,

    /// How --churn changes a row: replace (UPDATE its value in place) or delete-insert
    /// (DELETE the row, INSERT it again: a new row, the old one left to the database's
    /// cleanup).
    #[arg(long, env = "BLOBRACE_CHURN_KIND", value_parser = crate::dataset::churn::ChurnKind::parse, default_value = "replace")]
    pub churn_kind: crate::dataset::churn::ChurnKind,

    /// What cleans up after --churn: default (what the database does by itself:
    /// PostgreSQL's autovacuum, InnoDB's purge), none (PostgreSQL's autovacuum turned off
    /// for the table; where the cleanup cannot be stopped the result says "not
    /// controlled") or full (its compaction after the last change: VACUUM FULL, SQLite's
    /// VACUUM, OPTIMIZE TABLE, Dolt's GC). Each is its own dataset (`-mfull`).
    #[arg(long, env = "BLOBRACE_MAINTENANCE", value_parser = crate::dataset::churn::Maintenance::parse, default_value = "default")]
    pub maintenance: crate::dataset::churn::Maintenance,

    /// Reads while writing: one writer replaces rows (new content, one transaction
    /// each, through the database's own write path) at this many a second while every
    /// measurement runs, its warm-up included, and its own latency is recorded beside
    /// the readers'. The dataset is its own (`-live` in its name: the fresh one stays
    /// as loaded); --write-rate 0 measures that same dataset without a writer, the
    /// run to set beside it. Fetches accept either version of a row only while its
    /// change is in flight. The floor is measured without a writer, as the reference.
    #[arg(long, env = "BLOBRACE_WRITE_RATE", value_parser = crate::workload::live::parse_write_rate, allow_hyphen_values = true)]
    pub write_rate: Option<f64>,

    /// Serve the run's progress as OpenMetrics (Prometheus' text format) at
    /// http://ADDR/metrics while it runs: cell n of N, the time left, fetches and p50/p99
    /// per cell so far, datasets loaded, the load in progress, failures. Off unless
    /// given, e.g. "127.0.0.1:9464" (port 0: one the system picks, said at the start).
    #[arg(long, env = "BLOBRACE_METRICS_ADDR", value_name = "ADDR:PORT", value_parser = super::parse::parse_metrics_addr)]
    pub metrics_addr: Option<std::net::SocketAddr>,

    /// latency: per-fetch latency (1 client under criterion, then the other --clients
    /// and --rate loads); saturate: the highest sustainable rate per engine and size.
    #[arg(long, env = "BLOBRACE_MODE", value_enum, default_value_t = Mode::Latency)]
    pub mode: Mode,

    /// criterion samples per engine and size (at least 10).
    #[arg(long, env = "BLOBRACE_SAMPLES", value_parser = parse_samples, default_value = "10")]
    pub samples: usize,
}
