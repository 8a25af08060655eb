//! Run settings: the same knobs for `blobrace` subcommands (flags) and for
//! `cargo bench` (the `BLOBRACE_*` environment variables clap reads for each flag).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

use crate::cap::CapRequest;
use crate::dataset::DatasetSpec;
use crate::engine::{EngineKind, parse_engine_list};
use crate::error::InputError;
use crate::size::{SizeClass, parse_bytes, parse_size_list};
use crate::store::PgStorage;

/// "blobrace" in ASCII: the default seed.
pub const DEFAULT_SEED: u64 = 0x626c_6f62_7261_6365;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// 1KiB..32MiB, 3GiB per size class under a 1GiB / 2 CPU cap: the real question.
    Full,
    /// 1KiB, 64KiB, 512KiB, 4MiB; 768MiB per size class under a 256MiB cap; short timings.
    Quick,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Preset for everything below; any flag given overrides it.
    #[arg(long, env = "BLOBRACE_PROFILE", value_enum, default_value_t = Profile::Full)]
    pub profile: Profile,

    /// Engines, comma-separated, or "all": sqlite, sqlite-raw, fs, floor, postgres,
    /// postgres-raw, mariadb, mariadb-raw. Default: all (servers that cannot be reached are skipped).
    #[arg(long, env = "BLOBRACE_ENGINES")]
    pub engines: Option<String>,

    /// Size classes, comma-separated, e.g. "1KiB,64KiB,4MiB". KiB/k/K = 1024, kB/KB = 1000.
    #[arg(long, env = "BLOBRACE_SIZES")]
    pub sizes: Option<String>,

    /// Bytes of blobs per size class (whole blobs: rows = this / size). Default 3GiB (quick: 768MiB).
    #[arg(long, env = "BLOBRACE_DATASET_BYTES")]
    pub dataset_bytes: Option<String>,

    /// Memory cap of the measuring process, or "none". Default 1GiB (quick: 256MiB).
    #[arg(long, env = "BLOBRACE_CAP")]
    pub cap: Option<String>,

    /// CPU cap in CPUs, or "none". Default 2.
    #[arg(long, env = "BLOBRACE_CPUS")]
    pub cpus: Option<String>,

    /// Seed of blob contents and fetch ids.
    #[arg(long, env = "BLOBRACE_SEED")]
    pub seed: Option<u64>,

    /// Where datasets are stored (reused across runs).
    #[arg(long, env = "BLOBRACE_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,

    /// Where run results go: <results-dir>/<run-id>/results.{json,csv}.
    #[arg(long, env = "BLOBRACE_RESULTS_DIR", default_value = "charts")]
    pub results_dir: PathBuf,

    /// Warm-up per engine and size after the cache is emptied, e.g. "3s", "500ms". Default 3s (quick: 1s).
    #[arg(long, env = "BLOBRACE_WARMUP")]
    pub warmup: Option<String>,

    /// Measurement per engine and size. Default 10s (quick: 2s).
    #[arg(long, env = "BLOBRACE_MEASURE")]
    pub measure: Option<String>,

    /// PostgreSQL URL for the postgres engines. Default: built from compose/.env.
    #[arg(long, env = "BLOBRACE_POSTGRES_URL", hide_env_values = true)]
    pub postgres_url: Option<String>,

    /// MariaDB URL (a user that may create databases) for the mariadb engines. Default: root, from compose/.env.
    #[arg(long, env = "BLOBRACE_MARIADB_URL", hide_env_values = true)]
    pub mariadb_url: Option<String>,

    /// Load, measure and drop one size class at a time, so the disk holds one size
    /// class per store instead of all of them (the full matrix needs ~60GB otherwise).
    #[arg(long, env = "BLOBRACE_DROP_AFTER")]
    pub drop_after: bool,

    /// Latency target of the report's verdict: the largest size whose p99 is at or under it.
    #[arg(long, env = "BLOBRACE_TARGET_P99", default_value = "50ms")]
    pub target_p99: String,

    /// How PostgreSQL stores the blob column: extended (its default: try to compress,
    /// then TOAST) or external (TOAST without a compression attempt). Each is its own dataset.
    #[arg(long, env = "BLOBRACE_PG_STORAGE", value_enum, default_value_t = PgStorage::Extended)]
    pub pg_storage: PgStorage,

    /// criterion samples per engine and size (at least 10).
    #[arg(long, env = "BLOBRACE_SAMPLES", default_value_t = 10)]
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
    pub samples: usize,
    #[serde(default)]
    pub pg_storage: PgStorage,
    #[serde(default = "default_target_p99")]
    pub target_p99: Duration,
    #[serde(default)]
    pub drop_after: bool,
    /// Server URLs carry passwords: never written to results (see `Locations::describe`).
    #[serde(skip)]
    pub postgres_url: Option<String>,
    #[serde(skip)]
    pub mariadb_url: Option<String>,
}

fn default_target_p99() -> Duration {
    Duration::from_millis(50)
}

/// Where datasets live: the data directory for embedded stores, servers by URL.
#[derive(Debug, Clone, Default)]
pub struct Locations {
    pub data_dir: PathBuf,
    pub postgres_url: Option<String>,
    pub mariadb_url: Option<String>,
    pub pg_storage: PgStorage,
}

impl Locations {
    /// The configured URL of a server, if any.
    pub fn server_url(&self, server: crate::store::Server) -> Option<&str> {
        match server {
            crate::store::Server::Postgres => self.postgres_url.as_deref(),
            crate::store::Server::Mariadb => self.mariadb_url.as_deref(),
        }
    }
}

/// `scheme://user:secret@host/db` → `scheme://user@host/db`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.rsplit_once('@') {
        Some((creds, host)) => {
            let user = creds.split(':').next().unwrap_or("");
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_string(),
    }
}

/// KEY=VALUE lines of compose/.env (or $BLOBRACE_COMPOSE_ENV), if the file exists.
fn compose_env() -> std::collections::HashMap<String, String> {
    let path = std::env::var("BLOBRACE_COMPOSE_ENV").unwrap_or_else(|_| "compose/.env".into());
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches('"').to_string()))
        .collect()
}

impl RunConfig {
    pub fn locations(&self) -> Locations {
        Locations {
            data_dir: self.data_dir.clone(),
            postgres_url: self.postgres_url.clone(),
            mariadb_url: self.mariadb_url.clone(),
            pg_storage: self.pg_storage,
        }
    }

    pub fn datasets(&self) -> Vec<DatasetSpec> {
        self.sizes
            .iter()
            .map(|&size| DatasetSpec::new(size, self.dataset_bytes, self.seed).expect("validated"))
            .collect()
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

impl RunArgs {
    pub fn resolve(&self) -> Result<RunConfig, InputError> {
        let quick = self.profile == Profile::Quick;
        let engines = match &self.engines {
            Some(list) => parse_engine_list(list)?,
            None => EngineKind::ALL.to_vec(),
        };
        let sizes = match &self.sizes {
            Some(list) => parse_size_list(list)?,
            None if quick => parse_size_list("1KiB,64KiB,512KiB,4MiB")?,
            None => SizeClass::defaults(),
        };
        let dataset_bytes = match &self.dataset_bytes {
            Some(text) => parse_bytes(text)?,
            None if quick => 768 << 20,
            None => 3 << 30,
        };
        for size in &sizes {
            size.rows_for(dataset_bytes)?;
        }
        let memory_bytes = match self.cap.as_deref().map(str::trim) {
            Some("none") => None,
            Some(text) => {
                let bytes = parse_bytes(text)?;
                if bytes < 16 << 20 {
                    return Err(InputError::Value {
                        what: "cap",
                        input: text.into(),
                        why: "below 16MiB the process itself does not fit".into(),
                    });
                }
                // Loading or fetching one blob holds a few copies of it (our buffer, the
                // driver's argument or result buffer, SQLite's bind copy): measured peak
                // ~4.4x a 32MiB blob. Below this the kernel kills the run mid-way.
                let largest = sizes.iter().map(|s| s.bytes()).max().unwrap_or(0);
                let needed = (16 << 20) + 5 * largest;
                if bytes < needed {
                    return Err(InputError::Value {
                        what: "cap",
                        input: text.into(),
                        why: format!(
                            "{} blobs need a cap of at least {} (16MiB + 5 copies of a blob): raise --cap or drop the largest size",
                            crate::size::format_bytes(largest),
                            crate::size::format_bytes(needed)
                        ),
                    });
                }
                Some(bytes)
            }
            None if quick => Some(256 << 20),
            None => Some(1 << 30),
        };
        let cpus = match self.cpus.as_deref().map(str::trim) {
            Some("none") => None,
            Some(text) => {
                let c: f64 = text.parse().map_err(|_| InputError::Value {
                    what: "cpus",
                    input: text.into(),
                    why: "give a number of CPUs like 2 or 0.5, or none".into(),
                })?;
                if !(c >= 0.01 && c.is_finite()) {
                    return Err(InputError::Value {
                        what: "cpus",
                        input: text.into(),
                        why: "must be at least 0.01".into(),
                    });
                }
                Some(c)
            }
            None => Some(2.0),
        };
        let warmup = match &self.warmup {
            Some(t) => parse_duration(t)?,
            None if quick => Duration::from_secs(1),
            None => Duration::from_secs(3),
        };
        let measure = match &self.measure {
            Some(t) => parse_duration(t)?,
            None if quick => Duration::from_secs(2),
            None => Duration::from_secs(10),
        };
        if self.samples < 10 {
            return Err(InputError::Value {
                what: "samples",
                input: self.samples.to_string(),
                why: "criterion needs at least 10".into(),
            });
        }
        let env = compose_env();
        let port =
            |key: &str, default: &str| env.get(key).cloned().unwrap_or_else(|| default.into());
        let postgres_url = self.postgres_url.clone().or_else(|| {
            env.get("POSTGRES_PASSWORD").map(|pw| {
                format!(
                    "postgres://blobrace:{pw}@127.0.0.1:{}/blobrace",
                    port("BLOBRACE_POSTGRES_PORT", "15432")
                )
            })
        });
        let mariadb_url = self.mariadb_url.clone().or_else(|| {
            env.get("MARIADB_ROOT_PASSWORD").map(|pw| {
                format!(
                    "mysql://root:{pw}@127.0.0.1:{}",
                    port("BLOBRACE_MARIADB_PORT", "13306")
                )
            })
        });
        Ok(RunConfig {
            profile: self.profile,
            engines_explicit: self.engines.is_some(),
            postgres_url,
            mariadb_url,
            engines,
            sizes,
            dataset_bytes,
            cap: CapRequest { memory_bytes, cpus },
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            data_dir: self.data_dir.clone(),
            results_dir: self.results_dir.clone(),
            warmup,
            measure,
            samples: self.samples,
            pg_storage: self.pg_storage,
            target_p99: parse_duration(&self.target_p99)?,
            drop_after: self.drop_after,
        })
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

    fn resolve(args: &[&str]) -> Result<RunConfig, InputError> {
        let mut all = vec!["blobrace"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all).unwrap().run.resolve()
    }

    #[test]
    fn profiles_set_defaults_and_flags_override() {
        let quick = resolve(&["--profile", "quick"]).unwrap();
        assert_eq!(quick.sizes.len(), 4);
        assert_eq!(quick.dataset_bytes, 768 << 20);
        assert_eq!(quick.cap.memory_bytes, Some(256 << 20));
        let full = resolve(&["--sizes", "64KiB", "--cap", "none", "--cpus", "none"]).unwrap();
        assert_eq!(full.sizes, vec![SizeClass::new(65536).unwrap()]);
        assert_eq!(full.dataset_bytes, 3 << 30);
        assert_eq!(
            full.cap,
            CapRequest {
                memory_bytes: None,
                cpus: None
            }
        );
    }

    #[test]
    fn bad_values_name_the_problem() {
        assert!(
            resolve(&["--sizes", "12XB"])
                .unwrap_err()
                .to_string()
                .contains("12XB")
        );
        assert!(
            resolve(&["--sizes", "0"])
                .unwrap_err()
                .to_string()
                .contains("at least 8 bytes")
        );
        assert!(
            resolve(&["--engines", "mongo"])
                .unwrap_err()
                .to_string()
                .contains("unknown engine 'mongo'")
        );
        let small = resolve(&["--sizes", "4MiB", "--dataset-bytes", "1MiB"])
            .unwrap_err()
            .to_string();
        assert!(small.contains("smaller than one 4MiB blob"), "{small}");
        assert!(
            resolve(&["--warmup", "3"])
                .unwrap_err()
                .to_string()
                .contains("unit")
        );
        assert!(resolve(&["--cap", "1MiB"]).is_err());
        assert!(resolve(&["--cpus", "two"]).is_err());
        assert!(resolve(&["--samples", "3"]).is_err());
    }

    #[test]
    fn urls_are_redacted() {
        assert_eq!(
            redact_url("postgres://u:secret@h:1/db"),
            "postgres://u@h:1/db"
        );
        assert_eq!(redact_url("mysql://root:p@ss@h:2"), "mysql://root@h:2");
        assert_eq!(redact_url("postgres://h/db"), "postgres://h/db");
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("0s").is_err());
    }
}
