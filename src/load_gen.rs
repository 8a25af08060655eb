//! Load: many clients at once (closed loop), or fetches offered at a rate whether
//! or not earlier ones finished (open loop), and the search for the highest rate an
//! engine sustains within a latency target (`saturate`). criterion times one fetch
//! at a time; this is blobrace's own loop for everything else.
//!
//! ```text
//! client thread k (k = 0..clients), each with its own engine (connection, file, pool
//! of one) and its own current-thread runtime:
//!   closed loop:  id = next of stream k; start = now; fetch; service = now - start
//!   open loop:    i = next arrival (shared schedule); wait until intended_i;
//!                 start = now; fetch; end = now
//!                 service = end - start   response = end - intended_i   lag = start - intended_i
//! main thread:    sample the disk counter and completions every 200 ms; watch the backlog
//!                 (arrivals due - fetches done) against --max-in-flight; CPU of this process
//! ```
//!
//! Response time counts from when the fetch was due, so a stall delays every fetch
//! queued behind it in the figures too (coordinated omission: wrk2, YCSB's
//! `measurement.interval=intended`). Arrivals still waiting when the run ends are
//! recorded with the time they had waited so far (a lower bound) and counted as unserved.
//!
//! With concurrent fetches a storage read cannot be charged to one fetch: disk bytes
//! are totals per 200 ms window, divided by the fetches completed in it. Hit/miss per
//! fetch stays with the single-client loop (`measure`).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use hdrhistogram::Histogram;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::content::check_blob;
use crate::dataset::DatasetSpec;
use crate::diskio::DiskReadCounter;
use crate::engine::Engine;
use crate::error::FetchMismatch;
use crate::measure::{FULL_CHECK_EVERY, id_sequence};
use crate::stats::window::WINDOW_NS;
use crate::stats::{FetchStats, Percentiles, new_histogram};

/// How arrivals are spaced in the open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process, as pgbench --rate): independent users.
    Poisson,
    /// Equal gaps (wrk2 -R): the steadiest load.
    Constant,
}

impl Arrivals {
    /// As the flag spells it.
    pub fn name(self) -> &'static str {
        match self {
            Arrivals::Poisson => "poisson",
            Arrivals::Constant => "constant",
        }
    }
}

/// One load: how many clients, and whether they are offered a rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadPoint {
    pub clients: u32,
    /// Fetches/s offered (open loop); None: each client fetches as soon as its last
    /// fetch ended (closed loop).
    pub rate: Option<f64>,
    pub arrivals: Arrivals,
}

impl LoadPoint {
    pub fn closed(clients: u32) -> Self {
        Self {
            clients,
            rate: None,
            arrivals: Arrivals::Poisson,
        }
    }

    pub fn open(clients: u32, rate: f64, arrivals: Arrivals) -> Self {
        Self {
            clients,
            rate: Some(rate),
            arrivals,
        }
    }

    /// One client, closed loop: what criterion and `measure::FetchLoop` measure.
    pub fn is_single_closed(&self) -> bool {
        self.clients == 1 && self.rate.is_none()
    }

    /// `c16` (closed), `c16@500/s` (open).
    pub fn label(&self) -> String {
        match self.rate {
            None => format!("c{}", self.clients),
            Some(rate) => format!("c{}@{}/s", self.clients, rate_label(rate)),
        }
    }
}

/// `500`, `12.5`: a rate without trailing zeros.
pub fn rate_label(rate: f64) -> String {
    if rate >= 100.0 || rate.fract() == 0.0 {
        format!("{rate:.0}")
    } else {
        format!("{rate:.1}")
    }
}

/// How long a load runs and its limit.
#[derive(Debug, Clone, Copy)]
pub struct LoadSettings {
    pub warm_up: Duration,
    pub measure: Duration,
    /// Open loop: most arrivals due but not finished before the load is called
    /// beyond what the engine serves and stopped.
    pub max_in_flight: u32,
    /// CPUs the process may use (its cap, else the machine's): the CPU share's base.
    pub cpus: f64,
}

/// CPU time of this process while measuring: the load generator's own (and, for an
/// engine inside this process, the engine's too).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    pub process_seconds: f64,
    pub wall_seconds: f64,
    pub cpus: f64,
}

impl CpuUse {
    /// Share of the CPUs the process may use, 0..1.
    pub fn share(&self) -> f64 {
        self.process_seconds / (self.wall_seconds * self.cpus).max(1e-9)
    }
}

/// Storage bytes read in one 200 ms window of the measurement, and fetches done in it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DiskWindow {
    pub start_s: f64,
    pub bytes: u64,
    pub fetches: u64,
}

/// Disk reads of a load, as totals (no per-fetch attribution with concurrent fetches).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskTotals {
    /// What counted them, or "unavailable: why".
    pub source: String,
    /// Bytes read during the measurement; None when unavailable.
    pub bytes: Option<u64>,
    pub windows: Vec<DiskWindow>,
}

impl DiskTotals {
    /// Bytes read ÷ fetches completed, over the measurement.
    pub fn per_fetch(&self, fetches: u64) -> Option<f64> {
        self.bytes
            .filter(|_| fetches > 0)
            .map(|b| b as f64 / fetches as f64)
    }
}

/// What one load measured.
pub struct LoadMeasured {
    pub warm_up: FetchStats,
    /// Service times (start → end) of the measured fetches, in windows.
    pub measured: FetchStats,
    /// Open loop: response times (intended start → end) of the arrivals due in the
    /// measurement, unserved ones at the time they had waited.
    pub response: Option<Histogram<u64>>,
    /// Open loop: how late fetches started (start - intended).
    pub lag: Option<Histogram<u64>>,
    pub measured_seconds: f64,
    /// Open loop: arrivals due during the measurement.
    pub offered: Option<u64>,
    /// Open loop: of those, arrivals never started when the load ended.
    pub unserved: u64,
    /// Open loop: the largest backlog (arrivals due, not finished) seen.
    pub backlog_max: u64,
    /// Open loop: the backlog reached `max_in_flight` and the load was stopped there.
    pub limit_reached: bool,
    pub cpu: CpuUse,
    pub disk: DiskTotals,
}

impl LoadMeasured {
    /// Fetches completed per second of measurement.
    pub fn achieved_rate(&self) -> f64 {
        self.measured.count() as f64 / self.measured_seconds.max(1e-9)
    }

    /// The headline percentiles: response time in open loop, service time in closed.
    pub fn headline(&self) -> Percentiles {
        match &self.response {
            Some(h) => Percentiles::of(h),
            None => Percentiles::of(&self.measured.all),
        }
    }
}

/// The stream of ids of client `client`: client 0 draws what the single-client
/// loop draws; each other client its own reproducible stream.
pub fn client_id_sequence(spec: &DatasetSpec, client: u32) -> Xoshiro256PlusPlus {
    if client == 0 {
        return id_sequence(spec);
    }
    let mut base = id_sequence(spec);
    let seed: u64 = base.random::<u64>() ^ u64::from(client).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// Intended start times (ns from the start) of an open loop's arrivals over `span`.
pub fn schedule(rate: f64, arrivals: Arrivals, span: Duration, seed: u64) -> Vec<u64> {
    let span_ns = span.as_nanos() as f64;
    let gap_ns = 1e9 / rate;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6172_7269_7661_6c73);
    let mut at = 0.0f64;
    let mut times = Vec::with_capacity((span_ns / gap_ns * 1.05) as usize + 16);
    loop {
        at += match arrivals {
            Arrivals::Constant => gap_ns,
            // Inverse transform of a uniform in [0, 1): -ln(1 - u) is Exp(1).
            Arrivals::Poisson => -(1.0 - rng.random::<f64>()).ln() * gap_ns,
        };
        if at >= span_ns {
            return times;
        }
        times.push(at as u64);
    }
}

/// What the clients share while a load runs.
struct Shared<'a> {
    t0: Mutex<Option<Instant>>,
    opened: Barrier,
    go: Barrier,
    stop: AtomicBool,
    failure: Mutex<Option<anyhow::Error>>,
    /// Fetches finished (both phases).
    completed: AtomicU64,
    /// Open loop: the next arrival to take, and the arrivals.
    next_arrival: AtomicUsize,
    schedule: &'a [u64],
}

impl Shared<'_> {
    fn fail(&self, error: anyhow::Error) {
        let mut slot = self.failure.lock().expect("not poisoned");
        slot.get_or_insert(error);
        self.stop.store(true, Ordering::SeqCst);
    }

    fn start(&self) -> Instant {
        self.t0
            .lock()
            .expect("not poisoned")
            .expect("set before go")
    }
}

/// What one client measured.
struct ClientRecord {
    warm_up: FetchStats,
    measured: FetchStats,
    response: Histogram<u64>,
    lag: Histogram<u64>,
}

/// Run one load: open `point.clients` engines with `open(k)` (each in its own thread,
/// on its own runtime), start them together, warm up, measure, close them.
/// `counter` gives the disk counter once every client is connected (a server's new
/// connections may be new processes).
pub fn run_load<E, Open, Opening, Counter>(
    open: Open,
    engine_name: &str,
    spec: DatasetSpec,
    point: LoadPoint,
    settings: LoadSettings,
    counter: Counter,
) -> Result<LoadMeasured>
where
    E: Engine,
    Open: Fn(u32) -> Opening + Sync,
    Opening: std::future::Future<Output = Result<E>>,
    Counter: FnOnce() -> Result<DiskReadCounter, String>,
{
    let span = settings.warm_up + settings.measure;
    let schedule_times = match point.rate {
        Some(rate) => schedule(rate, point.arrivals, span, spec.seed ^ spec.size.bytes()),
        None => Vec::new(),
    };
    let parties = point.clients as usize + 1;
    let shared = Shared {
        t0: Mutex::new(None),
        opened: Barrier::new(parties),
        go: Barrier::new(parties),
        stop: AtomicBool::new(false),
        failure: Mutex::new(None),
        completed: AtomicU64::new(0),
        next_arrival: AtomicUsize::new(0),
        schedule: &schedule_times,
    };
    let warm_ns = settings.warm_up.as_nanos() as u64;
    let span_ns = span.as_nanos() as u64;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..point.clients)
            .map(|k| {
                let (shared, open) = (&shared, &open);
                std::thread::Builder::new()
                    .name(format!("client-{k}"))
                    .spawn_scoped(scope, move || {
                        client(k, open, engine_name, spec, point, warm_ns, span_ns, shared)
                    })
                    .expect("cannot start a client thread")
            })
            .collect();
        shared.opened.wait();
        let disk = if shared.stop.load(Ordering::SeqCst) {
            Err("a client failed to open".to_string())
        } else {
            counter()
        };
        let t0 = Instant::now() + Duration::from_millis(5);
        *shared.t0.lock().expect("not poisoned") = Some(t0);
        shared.go.wait();
        let watched = watch(&shared, t0, settings, disk);
        let records: Vec<ClientRecord> = handles
            .into_iter()
            .filter_map(|h| h.join().expect("a client thread panicked"))
            .collect();
        let ended = Instant::now();
        if let Some(error) = shared.failure.lock().expect("not poisoned").take() {
            return Err(error);
        }
        Ok(merge(records, watched, &shared, point, settings, t0, ended))
    })
}

/// What the main thread saw while the clients ran.
struct Watched {
    cpu: CpuUse,
    disk: DiskTotals,
    backlog_max: u64,
    limit_reached: bool,
}

/// The main thread during a load: sample the disk counter and the completions per
/// window, watch the open loop's backlog, take the process's CPU time over the measurement.
fn watch(
    shared: &Shared,
    t0: Instant,
    settings: LoadSettings,
    disk: Result<DiskReadCounter, String>,
) -> Watched {
    let measure_from = t0 + settings.warm_up;
    let end = measure_from + settings.measure;
    let (source, mut counter) = match disk {
        Ok(c) => (c.source.clone(), Some(c)),
        Err(why) => (format!("unavailable: {why}"), None),
    };
    let tick = Duration::from_millis(2);
    let mut backlog_max = 0;
    let mut limit_reached = false;
    let mut cpu_start = None;
    let mut last: Option<(Instant, Option<u64>, u64)> = None;
    let mut windows = Vec::new();
    let mut total: Option<u64> = counter.is_some().then_some(0);
    loop {
        let now = Instant::now();
        if now >= measure_from && cpu_start.is_none() {
            cpu_start = Some((now, process_cpu_seconds()));
            last = Some((
                now,
                counter.as_mut().and_then(DiskReadCounter::read_bytes),
                shared.completed.load(Ordering::SeqCst),
            ));
        }
        let window_due = last.is_some_and(|(at, _, _)| now >= at + Duration::from_nanos(WINDOW_NS));
        if window_due || (now >= end && last.is_some()) {
            let (at, bytes_then, done_then) = last.expect("checked");
            let bytes_now = counter.as_mut().and_then(DiskReadCounter::read_bytes);
            let done_now = shared.completed.load(Ordering::SeqCst);
            let bytes = bytes_then.zip(bytes_now).map(|(a, b)| b.saturating_sub(a));
            match (bytes, total.as_mut()) {
                (Some(b), Some(t)) => {
                    *t += b;
                    windows.push(DiskWindow {
                        start_s: (at - t0).as_secs_f64(),
                        bytes: b,
                        fetches: done_now - done_then,
                    });
                }
                _ => total = None,
            }
            last = Some((now, bytes_now, done_now));
        }
        if !shared.schedule.is_empty() {
            let due_ns = now.saturating_duration_since(t0).as_nanos() as u64;
            let due = shared.schedule.partition_point(|&t| t <= due_ns) as u64;
            let backlog = due.saturating_sub(shared.completed.load(Ordering::SeqCst));
            backlog_max = backlog_max.max(backlog);
            if backlog >= u64::from(settings.max_in_flight) && !limit_reached {
                limit_reached = true;
                shared.stop.store(true, Ordering::SeqCst);
            }
        }
        if now >= end || shared.stop.load(Ordering::SeqCst) {
            break;
        }
        std::thread::sleep(tick);
    }
    let (cpu_from, cpu_then) = cpu_start.unwrap_or((Instant::now(), process_cpu_seconds()));
    Watched {
        cpu: CpuUse {
            process_seconds: process_cpu_seconds() - cpu_then,
            wall_seconds: cpu_from.elapsed().as_secs_f64(),
            cpus: settings.cpus,
        },
        disk: DiskTotals {
            source,
            bytes: total,
            windows,
        },
        backlog_max,
        limit_reached,
    }
}

/// User + system CPU seconds of this process, all threads.
fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// One client thread: open its engine, wait for the start, fetch until the end.
#[allow(clippy::too_many_arguments)]
fn client<E, Open, Opening>(
    k: u32,
    open: &Open,
    engine_name: &str,
    spec: DatasetSpec,
    point: LoadPoint,
    warm_ns: u64,
    span_ns: u64,
    shared: &Shared,
) -> Option<ClientRecord>
where
    E: Engine,
    Open: Fn(u32) -> Opening,
    Opening: std::future::Future<Output = Result<E>>,
{
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            shared.fail(anyhow!(e).context("cannot start a client's runtime"));
            shared.opened.wait();
            shared.go.wait();
            return None;
        }
    };
    let opened = rt.block_on(open(k));
    shared.opened.wait();
    shared.go.wait();
    let mut engine = match opened {
        Ok(engine) => engine,
        Err(e) => {
            shared.fail(e.context(format!("client {k} could not open {engine_name}")));
            return None;
        }
    };
    if shared.stop.load(Ordering::SeqCst) {
        let _ = rt.block_on(engine.close());
        return None;
    }
    let t0 = shared.start();
    let mut record = ClientRecord {
        warm_up: FetchStats::new(false),
        measured: FetchStats::new(false),
        response: new_histogram(),
        lag: new_histogram(),
    };
    let outcome = rt.block_on(async {
        let mut ids = client_id_sequence(&spec, k);
        let mut out = Vec::with_capacity(spec.size.as_usize());
        let mut scratch = Vec::with_capacity(spec.size.as_usize());
        let mut fetches = 0u64;
        let end = t0 + Duration::from_nanos(span_ns);
        loop {
            if shared.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            // Closed loop: now; open loop: the next arrival, waited for.
            let intended = match point.rate {
                None => {
                    let now = Instant::now();
                    if now < t0 {
                        std::thread::sleep(t0 - now);
                    }
                    let now = Instant::now();
                    if now >= end {
                        return Ok(());
                    }
                    now
                }
                Some(_) => {
                    let i = shared.next_arrival.fetch_add(1, Ordering::SeqCst);
                    let Some(&offset) = shared.schedule.get(i) else {
                        return Ok(());
                    };
                    let due = t0 + Duration::from_nanos(offset);
                    let now = Instant::now();
                    if due > now {
                        std::thread::sleep(due - now);
                    }
                    due
                }
            };
            let id = ids.random_range(1..=spec.rows);
            engine.before_fetch(&mut out);

            let start = Instant::now();
            let fetched = engine.fetch(id, &mut out).await;
            let took = start.elapsed();

            let done = start + took;
            shared.completed.fetch_add(1, Ordering::SeqCst);
            fetched.with_context(|| {
                format!(
                    "{engine_name} fetch of id {id} (size {}, client {k}) failed",
                    spec.size
                )
            })?;
            let full = fetches.is_multiple_of(FULL_CHECK_EVERY);
            if let Some(what) = check_blob(spec.seed, spec.size, id, &out, full, &mut scratch) {
                return Err(FetchMismatch {
                    engine: engine_name.to_string(),
                    size: spec.size.to_string(),
                    id,
                    what,
                }
                .into());
            }
            fetches += 1;
            let measured = (intended - t0).as_nanos() as u64 >= warm_ns;
            let stats = if measured {
                &mut record.measured
            } else {
                &mut record.warm_up
            };
            let at = (done - t0).as_nanos() as u64;
            stats.record(at, took.as_nanos() as u64, None, out.len() as u64);
            if measured && point.rate.is_some() {
                record
                    .response
                    .saturating_record(((done - intended).as_nanos() as u64).max(1));
                record
                    .lag
                    .saturating_record(((start - intended).as_nanos() as u64).max(1));
            }
        }
    });
    let closed = rt.block_on(engine.close());
    match outcome.and(closed) {
        Ok(()) => Some(record),
        Err(e) => {
            shared.fail(e);
            None
        }
    }
}

/// The clients' records as one: histograms added, windows merged by start.
fn merge(
    records: Vec<ClientRecord>,
    watched: Watched,
    shared: &Shared,
    point: LoadPoint,
    settings: LoadSettings,
    t0: Instant,
    ended: Instant,
) -> LoadMeasured {
    let mut warm_up = FetchStats::new(false);
    let mut measured = FetchStats::new(false);
    let mut response = new_histogram();
    let mut lag = new_histogram();
    for r in &records {
        warm_up.absorb(&r.warm_up);
        measured.absorb(&r.measured);
        response.add(&r.response).expect("same bounds");
        lag.add(&r.lag).expect("same bounds");
    }
    let warm_ns = settings.warm_up.as_nanos() as u64;
    let ended_ns = (ended - t0).as_nanos() as u64;
    let measured_seconds = if watched.limit_reached {
        // Stopped early: the measurement lasted until the stop.
        (ended - t0)
            .saturating_sub(settings.warm_up)
            .min(settings.measure)
            .as_secs_f64()
    } else {
        settings.measure.as_secs_f64()
    };
    let (offered, unserved) = if point.rate.is_some() {
        // Arrivals of the measurement nobody took: recorded at the wait they had
        // so far, a lower bound of their response time.
        let taken = shared
            .next_arrival
            .load(Ordering::SeqCst)
            .min(shared.schedule.len());
        let first = shared.schedule.partition_point(|&t| t < warm_ns);
        let due_end = shared.schedule.partition_point(|&t| t <= ended_ns);
        // (A load stopped in its warm-up has none due in the measurement.)
        let unserved_from = taken.max(first).min(due_end);
        for &t in &shared.schedule[unserved_from..due_end] {
            response.saturating_record((ended_ns - t).max(1));
        }
        (
            Some(due_end.saturating_sub(first) as u64),
            (due_end - unserved_from) as u64,
        )
    } else {
        (None, 0)
    };
    let mut disk = watched.disk;
    if disk.bytes.is_none() && !disk.source.starts_with("unavailable") {
        disk.source = format!("unavailable: {} could not be read", disk.source);
    }
    LoadMeasured {
        warm_up,
        measured,
        response: point.rate.is_some().then_some(response),
        lag: point.rate.is_some().then_some(lag),
        measured_seconds,
        offered,
        unserved,
        backlog_max: watched.backlog_max,
        limit_reached: watched.limit_reached,
        cpu: watched.cpu,
        disk,
    }
}

/// One step of a saturation search: a rate offered and what came of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SaturationStep {
    pub rate: f64,
    pub achieved: f64,
    pub response: Percentiles,
    pub unserved: u64,
    pub limit_reached: bool,
    /// p99 response time at or under the target, and the in-flight limit not reached.
    pub met: bool,
}

impl SaturationStep {
    pub fn of(rate: f64, measured: &LoadMeasured, target: Duration) -> Self {
        let response = measured.headline();
        Self {
            rate,
            achieved: measured.achieved_rate(),
            response,
            unserved: measured.unserved,
            limit_reached: measured.limit_reached,
            met: !measured.limit_reached
                && response.count > 0
                && response.p99_ns <= target.as_nanos() as u64,
        }
    }
}

/// The highest rate found whose p99 response time meets the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    /// Fetches/s the clients reached in a closed loop: the most they can be offered.
    pub capacity: f64,
    pub steps: Vec<SaturationStep>,
    /// The highest rate that met the target; None when none did.
    pub sustainable: Option<f64>,
}

/// Search for the sustainable rate in `steps` open-loop steps below `capacity` (the
/// closed loop's throughput with the same clients: a higher rate only queues):
/// first the capacity itself, then bisection between the highest rate that met the
/// target and the lowest that did not. After n steps the answer is within
/// capacity / 2^(n-1) of the true rate.
pub fn search(
    capacity: f64,
    steps: u32,
    mut try_rate: impl FnMut(f64) -> Result<SaturationStep>,
) -> Result<Saturation> {
    let mut tried = Vec::new();
    let (mut met, mut missed) = (0.0f64, capacity);
    for n in 0..steps {
        let rate = if n == 0 {
            capacity
        } else {
            (met + missed) / 2.0
        };
        let step = try_rate(rate)?;
        if step.met {
            met = rate;
        } else {
            missed = rate;
        }
        tried.push(step);
        if n == 0 && step.met {
            break;
        }
    }
    Ok(Saturation {
        capacity,
        sustainable: (met > 0.0).then_some(met),
        steps: tried,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::fill_blob;
    use crate::engine::EngineSettings;
    use crate::size::SizeClass;

    /// Serves correct blobs after a fixed service time (a blocking sleep: one fetch
    /// at a time per client), with a long stall every `stall_every` fetches.
    struct SlowEngine {
        spec: DatasetSpec,
        service: Duration,
        stall: Duration,
        stall_every: u64,
        fetches: u64,
    }

    impl Engine for SlowEngine {
        async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
            self.fetches += 1;
            let wait = if self.stall_every > 0
                && self.fetches % self.stall_every == self.stall_every / 2
            {
                self.stall
            } else {
                self.service
            };
            std::thread::sleep(wait);
            out.resize(self.spec.size.as_usize(), 0);
            fill_blob(self.spec.seed, self.spec.size, id, out);
            Ok(())
        }
        fn settings(&self) -> EngineSettings {
            EngineSettings::new()
        }
    }

    fn spec() -> DatasetSpec {
        DatasetSpec {
            size: SizeClass::new(1024).unwrap(),
            rows: 1000,
            seed: 9,
            key: Default::default(),
        }
    }

    fn settings(warm_up_ms: u64, measure_ms: u64) -> LoadSettings {
        LoadSettings {
            warm_up: Duration::from_millis(warm_up_ms),
            measure: Duration::from_millis(measure_ms),
            max_in_flight: 256,
            cpus: 2.0,
        }
    }

    fn slow(
        service: Duration,
        stall: Duration,
        stall_every: u64,
    ) -> impl Fn(u32) -> std::future::Ready<Result<SlowEngine>> + Sync {
        move |_| {
            std::future::ready(Ok(SlowEngine {
                spec: spec(),
                service,
                stall,
                stall_every,
                fetches: 0,
            }))
        }
    }

    fn no_counter() -> Result<DiskReadCounter, String> {
        Err("not counted in tests".into())
    }

    /// One load of the test engine(s) `open` gives, without a disk counter.
    fn load<E: Engine, F: std::future::Future<Output = Result<E>>>(
        open: &(impl Fn(u32) -> F + Sync),
        point: LoadPoint,
        settings: LoadSettings,
    ) -> Result<LoadMeasured> {
        run_load(open, "slow", spec(), point, settings, no_counter)
    }

    #[test]
    fn a_stall_shows_in_response_time_but_not_in_service_time() {
        // 1 ms fetches, a 200 ms stall once every 1,000 (the 500th): one in the
        // measurement. Offered 400/s, each stall holds back ~80 arrivals behind it.
        let engine = slow(Duration::from_millis(1), Duration::from_millis(200), 1000);
        let open = load(
            &engine,
            LoadPoint::open(1, 400.0, Arrivals::Constant),
            settings(300, 2500),
        )
        .unwrap();
        let response = open.headline();
        let service = Percentiles::of(&open.measured.all);
        assert!(
            response.p99_ns > 20 * service.p99_ns,
            "response p99 {} vs service p99 {}",
            response.p99_ns,
            service.p99_ns
        );
        assert!(response.p99_ns > 100_000_000, "{}", response.p99_ns);
        assert!(!open.limit_reached);
        assert!(open.offered.unwrap() >= 900);

        // Closed loop: the stall is one slow fetch among ~1,800; p99 stays near 1 ms.
        let closed = load(&engine, LoadPoint::closed(1), settings(300, 2000)).unwrap();
        assert!(closed.response.is_none());
        let p = closed.headline();
        assert!(p.max_ns >= 200_000_000, "the stall happened: {}", p.max_ns);
        assert!(p.p99_ns < 20_000_000, "{}", p.p99_ns);
    }

    #[test]
    fn clients_run_at_once_and_their_fetches_add_up() {
        // 4 clients of a 5 ms engine: ~4x the fetches of one.
        let engine = slow(Duration::from_millis(5), Duration::ZERO, 0);
        let one = load(&engine, LoadPoint::closed(1), settings(100, 600)).unwrap();
        let four = load(&engine, LoadPoint::closed(4), settings(100, 600)).unwrap();
        let ratio = four.achieved_rate() / one.achieved_rate();
        assert!((3.0..4.5).contains(&ratio), "{ratio}");
        assert!(four.cpu.wall_seconds > 0.5, "{:?}", four.cpu);
        assert_eq!(four.disk.bytes, None, "unavailable, never 0");
        assert!(four.disk.source.starts_with("unavailable"));
        assert!(!four.measured.windows.windows().is_empty());
    }

    #[test]
    fn an_engine_that_cannot_keep_up_reaches_the_limit_and_is_stopped() {
        // 10 ms fetches (100/s) offered 1,000/s: the backlog passes 50 within ~60 ms.
        let engine = slow(Duration::from_millis(10), Duration::ZERO, 0);
        let mut s = settings(0, 3000);
        s.max_in_flight = 50;
        let started = Instant::now();
        let m = load(&engine, LoadPoint::open(1, 1000.0, Arrivals::Poisson), s).unwrap();
        assert!(m.limit_reached);
        assert!(m.backlog_max >= 50);
        assert!(started.elapsed() < Duration::from_secs(2), "stopped early");
        assert!(m.unserved > 0, "arrivals left waiting are counted");
        // Stopped in its warm-up: nothing was due in the measurement.
        let mut s = settings(1000, 1000);
        s.max_in_flight = 50;
        let m = load(&engine, LoadPoint::open(1, 1000.0, Arrivals::Poisson), s).unwrap();
        assert!(m.limit_reached);
        assert_eq!((m.offered, m.unserved, m.measured.count()), (Some(0), 0, 0));
    }

    #[test]
    fn a_failing_client_stops_the_load_with_its_error() {
        let opener = |k: u32| {
            std::future::ready(if k == 2 {
                Err(anyhow!("connection refused"))
            } else {
                Ok(SlowEngine {
                    spec: spec(),
                    service: Duration::from_millis(1),
                    stall: Duration::ZERO,
                    stall_every: 0,
                    fetches: 0,
                })
            })
        };
        let err = load(&opener, LoadPoint::closed(4), settings(0, 500))
            .err()
            .expect("fails");
        assert!(
            format!("{err:#}").contains("client 2 could not open slow: connection refused"),
            "{err:#}"
        );
    }

    #[test]
    fn the_search_finds_a_known_capacity_within_ten_percent() {
        // One client of a 4 ms engine serves at most 250 fetches/s; constant arrivals
        // below that never queue, above it the queue grows past a 20 ms p99 quickly.
        let engine = slow(Duration::from_millis(4), Duration::ZERO, 0);
        let target = Duration::from_millis(20);
        let closed = load(&engine, LoadPoint::closed(1), settings(100, 500)).unwrap();
        let capacity = closed.achieved_rate();
        let found = search(capacity, 6, |rate| {
            let m = load(
                &engine,
                LoadPoint::open(1, rate, Arrivals::Constant),
                settings(100, 1000),
            )?;
            Ok(SaturationStep::of(rate, &m, target))
        })
        .unwrap();
        let sustainable = found.sustainable.expect("some rate met 20 ms");
        assert!(
            (225.0..=262.5).contains(&sustainable),
            "{sustainable} of a known 250/s: {:?}",
            found.steps
        );
        assert!(found.steps.len() <= 6);
    }

    #[test]
    fn the_search_says_when_no_rate_meets_the_target() {
        let steps = search(100.0, 4, |rate| {
            Ok(SaturationStep {
                rate,
                achieved: rate,
                response: Percentiles::default(),
                unserved: 0,
                limit_reached: false,
                met: false,
            })
        })
        .unwrap();
        assert_eq!(steps.sustainable, None);
        let rates: Vec<f64> = steps.steps.iter().map(|s| s.rate).collect();
        assert_eq!(rates, [100.0, 50.0, 25.0, 12.5]);
    }

    #[test]
    fn schedules_have_the_rate_and_the_shape_asked_for() {
        let span = Duration::from_secs(10);
        let constant = schedule(100.0, Arrivals::Constant, span, 1);
        assert_eq!(constant.len(), 999);
        assert_eq!(constant[1] - constant[0], 10_000_000);
        let poisson = schedule(100.0, Arrivals::Poisson, span, 1);
        assert!((900..1100).contains(&poisson.len()), "{}", poisson.len());
        // Exponential gaps: about 1/e of them longer than the mean gap.
        let long = poisson
            .windows(2)
            .filter(|w| w[1] - w[0] > 10_000_000)
            .count();
        let share = long as f64 / poisson.len() as f64;
        assert!((0.30..0.44).contains(&share), "{share}");
        assert_eq!(
            poisson,
            schedule(100.0, Arrivals::Poisson, span, 1),
            "seeded"
        );
    }

    #[test]
    fn client_zero_draws_the_single_client_stream_and_the_others_their_own() {
        let s = spec();
        let draw = |mut r: Xoshiro256PlusPlus| -> Vec<u64> {
            (0..8).map(|_| r.random_range(1..=s.rows)).collect()
        };
        assert_eq!(draw(client_id_sequence(&s, 0)), draw(id_sequence(&s)));
        assert_ne!(
            draw(client_id_sequence(&s, 1)),
            draw(client_id_sequence(&s, 2))
        );
        assert_eq!(
            draw(client_id_sequence(&s, 3)),
            draw(client_id_sequence(&s, 3))
        );
    }
}
