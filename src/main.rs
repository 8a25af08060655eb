//! `blobrace`: load datasets, measure without criterion, verify, drop, inspect.
//! The main job is `cargo bench` (benches/fetch.rs); this binary shares its knobs.
//! What each subcommand does is the library's (`blobrace::commands`).

// Every line shown goes through the one terminal writer (say.rs): `say!`, `show!`.
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use blobrace::commands::cli::Cli;
use blobrace::config::parse_args;
use blobrace::error::InputError;
use blobrace::say;

/// Output to a pipe its reader closed (`blobrace env | head -n 1`) ends the process
/// quietly, as a tool killed by SIGPIPE does (exit 141), not with a panic and a
/// backtrace. SIGPIPE itself stays ignored (Rust's default): a server closing a socket
/// must be an error the run handles, not a silent death.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if payload.starts_with("failed printing to std") && payload.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let cli = match parse_args::<Cli>(std::env::args_os()) {
        Ok(cli) => cli,
        Err(line) => {
            say!("{line}");
            return ExitCode::from(2);
        }
    };
    match blobrace::commands::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            say!("Error: {err:#}");
            if err.downcast_ref::<InputError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
