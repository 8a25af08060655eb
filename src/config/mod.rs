//! Run settings: the same knobs for `blobrace` subcommands (flags) and for
//! `cargo bench` (the `BLOBRACE_*` environment variables clap reads for each flag).
//! The top of the library's layers: it builds `Locations` for stores and engines.
//!
//! Split the way ripgrep splits its flags: what was typed (`args`, every value parsed
//! by clap through `parse`, so a bad value is one error naming the flag), the presets
//! each profile fills in (`preset`), and what it resolves to (`resolve` checks what
//! involves two flags at once and builds a `RunConfig`, `run_config`).

mod args;
mod command_line;
mod environment;
mod mix_source;
mod parse;
mod preset;
mod resolve;
mod run_config;
mod share;
#[cfg(test)]
mod tests;

use std::time::Duration;

pub use args::{Mode, RunArgs, ServerUrls};
pub use command_line::{parse_args, usage_error};
pub use environment::{OTHER_VARIABLES, check_variables, flag_variables, known_variables};
pub use parse::{
    ClientList, EngineList, Limit, MAX_CLIENTS, MAX_RATE, Precision, RateList, SizeList,
    parse_duration, parse_duration_or_zero, parse_percent, parse_precision,
};
pub use preset::{CacheChoice, Preset, PresetValues};
pub use run_config::{LeftOut, NO_WRITER, RunConfig};
pub use share::{Share, parse_share};

/// "blobrace" in ASCII: the default seed.
pub const DEFAULT_SEED: u64 = 0x626c_6f62_7261_6365;

/// The verdict's default: a fetch whose p99 is over this is too slow.
pub const DEFAULT_TARGET_P99: Duration = Duration::from_millis(50);

/// Smallest memory cap the measuring process itself fits in, measured (2026-11-27,
/// cgroup v1, 64 MiB per size class, sqlite, fs and the floor loaded then measured with
/// 1 and 16 clients): at 1 KiB, 20 MiB killed the measurement, 24 MiB the load, and
/// 32 MiB fs's measurement (its 65,536 files' inodes and dentries, charged to the cap,
/// are not reclaimed fast enough); 48 MiB ran every size of the quick profile. It was
/// 16 MiB, and `--cap 17MiB` passed the check, then the kernel killed the process
/// without a word.
pub const MIN_CAP_BYTES: u64 = 48 << 20;

/// A run's config from its flags, resolved as `blobrace measure` resolves them: for
/// the tests of every layer that takes a `RunConfig`.
#[cfg(test)]
pub(crate) fn resolve_flags(args: &[&str]) -> Result<RunConfig, String> {
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }
    let mut all = vec!["blobrace"];
    all.extend_from_slice(args);
    Cli::try_parse_from(all)
        .map_err(|e| e.to_string())?
        .run
        .resolve()
        .map_err(|e| e.to_string())
}
