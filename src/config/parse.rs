//! The value parsers clap calls for each flag: a bad value is one error naming the
//! flag and what it takes.

use std::time::Duration;

use crate::cap::disk::DiskCap;
use crate::db::registry::{EngineKind, parse_engine_list};
use crate::error::InputError;
use crate::size::{SizeClass, parse_bytes, parse_size_list};
use crate::stats::precision::Targets;

use super::MIN_CAP_BYTES;

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

/// A limit that can be switched off with `none`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit<T> {
    None,
    Some(T),
}

/// A parser's None ("none") is the limit switched off.
impl<T> From<Option<T>> for Limit<T> {
    fn from(value: Option<T>) -> Self {
        value.map_or(Limit::None, Limit::Some)
    }
}

impl<T> Limit<T> {
    pub(super) fn into_option(self) -> Option<T> {
        match self {
            Limit::None => None,
            Limit::Some(v) => Some(v),
        }
    }
}

pub(super) fn parse_sizes(text: &str) -> Result<SizeList, InputError> {
    parse_size_list(text).map(SizeList)
}

/// `--size-mix`: one size distribution (`mix::parse`, or sampled from a table:
/// `mix_source`), kept once in this process.
pub(super) fn parse_size_mix(text: &str) -> Result<crate::dataset::mix::MixRef, InputError> {
    if super::mix_source::is_table(text) {
        return super::mix_source::sample(text).map(crate::dataset::mix::intern);
    }
    crate::dataset::mix::parse(text).map(crate::dataset::mix::intern)
}

/// `--saturate-sizes`: sizes, or "none".
pub(super) fn parse_size_list_or_none(text: &str) -> Result<SizeList, InputError> {
    if text.trim() == "none" {
        return Ok(SizeList(Vec::new()));
    }
    parse_sizes(text)
}

pub(super) fn parse_engines(text: &str) -> Result<EngineList, InputError> {
    parse_engine_list(text).map(EngineList)
}

pub(super) fn parse_memory_cap(text: &str) -> Result<Limit<u64>, InputError> {
    if text.trim() == "none" {
        return Ok(Limit::None);
    }
    let bytes = parse_bytes(text)?;
    if bytes < MIN_CAP_BYTES {
        return Err(InputError::Value {
            what: "cap",
            input: text.into(),
            why: format!(
                "below {} the process itself does not fit (measured: the kernel killed it there)",
                crate::size::format_bytes(MIN_CAP_BYTES)
            ),
        });
    }
    Ok(Limit::Some(bytes))
}

pub(super) fn parse_disk_cap_flag(text: &str) -> Result<Limit<DiskCap>, InputError> {
    Ok(crate::cap::disk::parse_disk_cap(text)?.into())
}

pub(super) fn parse_network_rtt_flag(
    text: &str,
) -> Result<Limit<crate::deploy::network::NetworkRtt>, InputError> {
    Ok(crate::deploy::network::parse_network_rtt(text)?.into())
}

pub(super) fn parse_disk_latency_flag(
    text: &str,
) -> Result<Limit<crate::deploy::slow_disk::DiskLatency>, InputError> {
    Ok(crate::deploy::slow_disk::parse_disk_latency(text)?.into())
}

pub(super) fn parse_cpus(text: &str) -> Result<Limit<f64>, InputError> {
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
pub(super) fn parse_clients(text: &str) -> Result<ClientList, InputError> {
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
            Err(_) if part.bytes().all(|b| b.is_ascii_digit()) => {
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
pub(super) fn parse_rates(text: &str) -> Result<RateList, InputError> {
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
        if rate <= 0.0 || rate.is_nan() {
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

pub(super) fn parse_max_in_flight(text: &str) -> Result<u32, InputError> {
    match text.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(InputError::Value {
            what: "max-in-flight",
            input: text.into(),
            why: "give a number of fetches, at least 1".into(),
        }),
    }
}

pub(super) fn parse_samples(text: &str) -> Result<usize, InputError> {
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

pub(super) fn precision_label(precision: Option<Targets>) -> String {
    match precision {
        Some(t) => t.label(),
        None => "off".into(),
    }
}

/// `127.0.0.1:9464`, `[::1]:9464`, `0.0.0.0:0`: where to serve the run's metrics.
pub fn parse_metrics_addr(text: &str) -> Result<std::net::SocketAddr, InputError> {
    text.trim().parse().map_err(|_| InputError::Value {
        what: "--metrics-addr (BLOBRACE_METRICS_ADDR)",
        input: text.into(),
        why: "give an IP address and a port, like 127.0.0.1:9464 (port 0: one the system picks); a host name is not resolved".into(),
    })
}

/// `3s`, `500ms`, `2m`, `1.5s`.
pub fn parse_duration(text: &str) -> Result<Duration, InputError> {
    let t = text.trim();
    let bad = |why: &str| InputError::Value {
        what: "duration",
        input: text.into(),
        why: why.into(),
    };
    // The unit is read off the end, the number is whatever is left (a sign and an
    // exponent included): "1e30s" is too long, "-1s" not more than zero, "1ns" an
    // unknown unit; each said as what it is.
    let units: [(&str, f64); 5] = [
        ("min", 60.0),
        ("ms", 0.001),
        ("s", 1.0),
        ("m", 60.0),
        ("h", 3600.0),
    ];
    let Some((num, per)) = units
        .iter()
        .find_map(|(unit, per)| Some((t.strip_suffix(unit)?, *per)))
        .filter(|(num, _)| num.trim().parse::<f64>().is_ok())
    else {
        let letters = t.trim_start_matches(|c: char| !c.is_ascii_alphabetic());
        return Err(if t.parse::<f64>().is_ok() {
            bad("add a unit: ms, s, m or h (like 250ms or 2s)")
        } else if !letters.is_empty() && t[..t.len() - letters.len()].trim().parse::<f64>().is_ok()
        {
            bad(&format!("unknown unit '{letters}' (use ms, s, m or h)"))
        } else {
            bad("give a number and a unit, like 250ms, 2s, 1m or 1h")
        });
    };
    let value: f64 = num.trim().parse().expect("checked above");
    let secs = value * per;
    if secs <= 0.0 {
        return Err(bad("must be more than zero"));
    }
    // A figure past what a run can take was a panic converting it ("cannot convert
    // float seconds to Duration"): a week is more than any step of a run.
    if !secs.is_finite() || secs > MAX_DURATION_SECS {
        return Err(bad("too long: at most a week (168h)"));
    }
    let duration = Duration::from_secs_f64(secs);
    if duration.is_zero() {
        return Err(bad("shorter than a nanosecond: must be more than zero"));
    }
    Ok(duration)
}

/// `--seed`: a whole number from 0 to 2^64-1.
pub fn parse_seed(text: &str) -> Result<u64, InputError> {
    text.trim().parse().map_err(|_| InputError::Value {
        what: "seed",
        input: text.into(),
        why: format!("a seed is a whole number from 0 to {}", u64::MAX),
    })
}

/// The longest duration a flag takes.
const MAX_DURATION_SECS: f64 = 7.0 * 24.0 * 3600.0;

/// A duration where 0 means "off" (`--disk-probe 0s`; "off" says the same).
pub fn parse_duration_or_zero(text: &str) -> Result<Duration, InputError> {
    let t = text.trim();
    if t == "off" {
        return Ok(Duration::ZERO);
    }
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
