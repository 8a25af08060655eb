//! `cargo bench --bench clients`: each raw server engine beside the simplest independent
//! client of its protocol (psycopg 3 for PostgreSQL, PyMySQL for the MySQL protocol,
//! `scripts/independent_client.py`), on the same rows with the same SQL, cold, in
//! alternating rounds in the same minutes. A raw engine is the protocol's cost: where it
//! is slower than an independent client, the figure is the client's, not the server's.
//!
//! Each round, for each client in turn (the order swapped every round): the server is
//! started cold (the store's own eviction: a restart and its files dropped), the client
//! connects, then fetches the round's ids, each timed alone (the raw engine through
//! blobrace's own fetch step, checked after the clock; the independent client timing its
//! own query and read, the length checked after its clock).
//!
//! Knobs: the run's variables (BLOBRACE_ENGINES, BLOBRACE_SIZES, BLOBRACE_DATASET_BYTES,
//! BLOBRACE_CAP, ...; docs/knobs.md) and BLOBRACE_CLIENTS_ROUNDS (default 4),
//! BLOBRACE_CLIENTS_FETCHES (per client and round, default 150). Exit 1 where a raw engine's
//! p50 is above the independent client's beyond both intervals and by more than 10%.

// Every line shown goes through the one terminal writer (say.rs): `say!`, `show!`.
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use clap::Parser;
use rand::{RngExt, SeedableRng};
use sea_orm::DbBackend;

use blobrace::config::{RunArgs, RunConfig, parse_args};
use blobrace::dataset::DatasetSpec;
use blobrace::db::engine::{Client, Engine};
use blobrace::db::registry::EngineKind;
use blobrace::db::registry::stores_for;
use blobrace::load::{Wanted, ensure_loaded};
use blobrace::measure::FetchStep;
use blobrace::run::{apply_cap, fit_servers, reachable_engines};
use blobrace::say;
use blobrace::stats::format_ns;

#[derive(Parser)]
struct EnvOnly {
    #[command(flatten)]
    run: RunArgs,
}

/// A raw engine slower than this share above the independent client, beyond both
/// p50 intervals, fails the check.
const TOLERANCE: f64 = 1.10;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let config = parse_args::<EnvOnly>(["clients".into()])
        .and_then(|cli| cli.run.resolve().map_err(|e| format!("Error: {e}")));
    let config = match config {
        Ok(config) => config,
        Err(line) => {
            say!("{line}");
            std::process::exit(2);
        }
    };
    match bench(config) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            say!("Error: {e:#}");
            let input = e.downcast_ref::<blobrace::error::InputError>().is_some();
            std::process::exit(if input { 2 } else { 1 });
        }
    }
}

/// A positive count from a variable, or its default.
fn count_var(name: &str, default: usize) -> Result<usize> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(text) => match text.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => bail!("{name}={text:?}: expected a whole number above 0"),
        },
    }
}

/// Ok(false): a raw engine slower than its independent client beyond noise.
fn bench(mut config: RunConfig) -> Result<bool> {
    let rounds = count_var("BLOBRACE_CLIENTS_ROUNDS", 4)?;
    let fetches = count_var("BLOBRACE_CLIENTS_FETCHES", 150)?;
    if config.size_mix.is_some() {
        bail!("the clients check runs on size classes: unset BLOBRACE_SIZE_MIX");
    }
    config
        .engines
        .retain(|e| e.client() == Client::Raw && e.store().server().is_some());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(reachable_engines(&mut config))?;
    if config.engines.is_empty() {
        bail!(
            "no raw server engine to check (postgres-raw, mariadb-raw, mysql-raw, dolt-raw): bring the servers up (scripts/servers.sh up) or name them in BLOBRACE_ENGINES"
        );
    }
    // Under the run's cap, as blobrace measures (apply_cap says it).
    let (_cap, _guard) = apply_cap(&config)?;
    let _server_caps = rt.block_on(fit_servers(&mut config))?;
    let at = config.locations();
    let (_, failed) = rt.block_on(ensure_loaded(
        &at,
        (
            &stores_for(&config.engines),
            &config.datasets(),
            Wanted::Every,
        ),
        config.fail_fast,
        |_| Ok(()),
    ))?;
    if !failed.is_empty() {
        bail!("{} load(s) failed (the reasons are above)", failed.len());
    }
    say!(
        "clients: {rounds} rounds of {fetches} cold fetches per client, engine and size; the servers restarted cold before each client's turn"
    );
    let mut all_within = true;
    for spec in config.datasets() {
        for &engine in &config.engines {
            let (client, raw, independent) =
                rt.block_on(compare(&config, engine, spec, rounds, fetches))?;
            all_within &= verdict(engine, spec, client, &raw, &independent);
        }
    }
    Ok(all_within)
}

/// One engine at one size: the independent client's name, the raw engine's and the
/// independent client's times, alternating rounds, each after its own cold start.
async fn compare(
    config: &RunConfig,
    engine: EngineKind,
    spec: DatasetSpec,
    rounds: usize,
    fetches: usize,
) -> Result<(&'static str, Vec<u64>, Vec<u64>)> {
    let at = config.locations();
    let server = engine.store().server().expect("a server engine");
    let url = server.require_url(at.fetch_url(server))?.to_string();
    let namespace = server.namespace(&spec, &at.knobs);
    let sql_server = server.require_sql()?;
    let (protocol, client) = match sql_server.backend() {
        DbBackend::Postgres => ("postgres", "psycopg"),
        DbBackend::MySql => ("mysql", "PyMySQL"),
        other => bail!("no independent client for {other:?}"),
    };
    let sql = sql_server.fetch_sql(&at.knobs);
    let read = engine.store().dataset_read(spec);
    let mut ids = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(spec.seed ^ 0x636c_6965_6e74);
    let (mut raw, mut independent) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let round_ids: Vec<u64> = (0..fetches)
            .map(|_| ids.random_range(1..=spec.rows))
            .collect();
        for turn in 0..2 {
            // Raw first in even rounds, the independent client first in odd ones.
            let raw_turn = (round + turn) % 2 == 0;
            let mut store = engine.store().open(&at, spec);
            store
                .evict()
                .await
                .with_context(|| format!("{}: starting the server cold", engine.name()))?;
            drop(store);
            if raw_turn {
                let mut opened = engine.open(&at, spec).await?;
                let mut step = FetchStep::new(engine.name(), None, read);
                for &id in &round_ids {
                    raw.push(step.fetch(&mut opened, id, None).await?.took.as_nanos() as u64);
                }
                opened.close().await?;
            } else {
                independent.extend(run_independent(
                    protocol, &url, &namespace, sql, &read, &round_ids,
                )?);
            }
        }
        say!(
            "  {} {}: round {} of {rounds} done",
            engine.name(),
            spec.size_label(),
            round + 1
        );
    }
    Ok((client, raw, independent))
}

/// The independent client on `ids`, through scripts/independent-client.sh: its times.
fn run_independent(
    protocol: &str,
    url: &str,
    namespace: &str,
    sql: &str,
    spec: &DatasetSpec,
    ids: &[u64],
) -> Result<Vec<u64>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/independent-client.sh");
    // The URL (its password) through the environment, not the command line others see.
    let mut child = Command::new("bash")
        .args([script, protocol, namespace, sql])
        .env("INDEPENDENT_CLIENT_URL", url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {script}"))?;
    {
        let mut stdin = child.stdin.take().expect("piped");
        for &id in ids {
            let line = match spec.key_of(id) {
                Some(key) => format!("{id} {} {}\n", spec.blob_bytes(id), hex(&key)),
                None => format!("{id} {}\n", spec.blob_bytes(id)),
            };
            stdin.write_all(line.as_bytes())?;
        }
    }
    let stdout = child.stdout.take().expect("piped");
    let mut times = Vec::with_capacity(ids.len());
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        times.push(
            line.trim()
                .parse::<u64>()
                .with_context(|| format!("the independent client said {line:?}"))?,
        );
    }
    let status = child.wait()?;
    if !status.success() || times.len() != ids.len() {
        bail!(
            "the independent {protocol} client failed ({status}, {} of {} fetches; its reason is above)",
            times.len(),
            ids.len()
        );
    }
    Ok(times)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The p50 of `times` with its 95% interval from order statistics (distribution-free):
/// ranks n/2 ± 1.96·√n/2.
fn p50_interval(times: &mut [u64]) -> (u64, u64, u64) {
    times.sort_unstable();
    let n = times.len();
    let half = 1.96 * (n as f64).sqrt() / 2.0;
    let low = ((n as f64 / 2.0 - half).floor().max(0.0)) as usize;
    let high = ((n as f64 / 2.0 + half).ceil() as usize).min(n - 1);
    (times[n / 2], times[low], times[high])
}

fn p99(times: &[u64]) -> u64 {
    times[(times.len() * 99 / 100).min(times.len() - 1)]
}

/// Say one engine's comparison; false where the raw engine is slower beyond noise.
fn verdict(
    engine: EngineKind,
    spec: DatasetSpec,
    client: &str,
    raw: &[u64],
    independent: &[u64],
) -> bool {
    let (mut raw, mut independent) = (raw.to_vec(), independent.to_vec());
    let (r50, r_low, r_high) = p50_interval(&mut raw);
    let (i50, i_low, i_high) = p50_interval(&mut independent);
    let ratio = r50 as f64 / i50 as f64;
    let slower = r_low > i_high && ratio > TOLERANCE;
    say!(
        "{} {} cold: p50 {} ({}–{}) p99 {} (n={}) | {client} p50 {} ({}–{}) p99 {} (n={}) | ratio {ratio:.2}: {}",
        engine.name(),
        spec.size_label(),
        format_ns(r50 as f64),
        format_ns(r_low as f64),
        format_ns(r_high as f64),
        format_ns(p99(&raw) as f64),
        raw.len(),
        format_ns(i50 as f64),
        format_ns(i_low as f64),
        format_ns(i_high as f64),
        format_ns(p99(&independent) as f64),
        independent.len(),
        if slower {
            "SLOWER than the independent client beyond both intervals".to_string()
        } else if r_low > i_high {
            format!(
                "slower beyond both intervals, by {:.0}%: within the {:.0}% allowed",
                (ratio - 1.0) * 100.0,
                (TOLERANCE - 1.0) * 100.0
            )
        } else if r_high < i_low {
            "faster".to_string()
        } else {
            "within noise".to_string()
        }
    );
    !slower
}
