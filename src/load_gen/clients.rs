//! The load itself: one thread per client, each with its own engine and runtime, a
//! watcher sampling the disk, completions and the backlog every 200 ms, and the
//! merge of what the clients measured into one `LoadMeasured`.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use hdrhistogram::Histogram;

use crate::dataset::DatasetSpec;
use crate::db::engine::Engine;
use crate::disk::io::DiskReadCounter;
use crate::measure::{FetchStep, Fetched};
use crate::stats::window::WINDOW_NS;
use crate::stats::{FetchStats, new_histogram};

use super::schedule::{client_id_sequence, schedule};
use super::{CpuUse, DiskTotals, DiskWindow, LoadMeasured, LoadPoint, LoadSettings};
use crate::workload::access::Sampler;

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
    /// Which ids the clients ask for, each drawing from its own seeded sequence.
    access: Sampler,
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
        access: settings.access.sampler(spec.rows),
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
        warm_up: FetchStats::new(false).with_bands(spec.mix.map(|m| m.get().band_grid())),
        measured: FetchStats::new(false).with_bands(spec.mix.map(|m| m.get().band_grid())),
        response: new_histogram(),
        lag: new_histogram(),
    };
    let outcome = rt.block_on(async {
        let mut ids = client_id_sequence(&spec, k);
        let mut step = FetchStep::new(engine_name, Some(k), spec);
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
            let id = shared.access.next(&mut ids);
            let fetched = step.fetch(&mut engine, id, None).await;
            shared.completed.fetch_add(1, Ordering::SeqCst);
            let Fetched {
                start, took, bytes, ..
            } = fetched?;
            let done = start + took;
            let measured = (intended - t0).as_nanos() as u64 >= warm_ns;
            let stats = if measured {
                &mut record.measured
            } else {
                &mut record.warm_up
            };
            let at = (done - t0).as_nanos() as u64;
            stats.record(at, took.as_nanos() as u64, None, bytes);
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
    let grid = records
        .iter()
        .find_map(|r| Some(r.measured.bands.as_ref()?.grid().clone()));
    let mut warm_up = FetchStats::new(false).with_bands(grid.clone());
    let mut measured = FetchStats::new(false).with_bands(grid);
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
