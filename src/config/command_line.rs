//! The command line as every tool here reads it: the `BLOBRACE_*` variables checked
//! first, then clap; a usage error is one line naming what was typed (the flag, or the
//! variable where the value came from one), and exit code 2.

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};

use super::environment::check_variables;

/// `T` from `args` (the program name first) and the environment. `Err` is the one line
/// to print before exiting with 2; `--help` and `--version` are printed here and exit.
pub fn parse_args<T: clap::Parser>(args: impl IntoIterator<Item = OsString>) -> Result<T, String> {
    let args: Vec<OsString> = args.into_iter().collect();
    let command = T::command();
    let set = std::env::vars_os().filter_map(|(name, _)| name.into_string().ok());
    check_variables(&command, set).map_err(|e| format!("Error: {e}"))?;
    match T::try_parse_from(&args) {
        Ok(parsed) => Ok(parsed),
        Err(e) => match usage_error(&e, &command, &args) {
            Some(line) => Err(line),
            None => e.exit(),
        },
    }
}

/// A clap error as the one line the tools print: `Error: <what> ...`. None for `--help`
/// and `--version`, which clap prints itself. A bad value that came from a variable
/// (its flag not typed) is said against the variable: "for '--engines <ENGINES>'"
/// sent a user of `BLOBRACE_ENGINES=...` looking for a flag they never typed.
pub fn usage_error(e: &clap::Error, command: &clap::Command, args: &[OsString]) -> Option<String> {
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        return None;
    }
    let text = e.render().to_string();
    let mut text = text.trim_start_matches("error: ").trim_end().to_string();
    if let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg)
        && let Some(long) = arg
            .split_whitespace()
            .next()
            .and_then(|f| f.strip_prefix("--"))
        && let Some(variable) = variable_of(command, long)
        && std::env::var_os(&variable).is_some()
        && !typed(args, long)
    {
        text = text.replace(
            &format!("'{arg}'"),
            &format!("{variable} (the variable of --{long})"),
        );
    }
    Some(format!("Error: {text}"))
}

/// The variable of the flag `--long` anywhere in `command`.
fn variable_of(command: &clap::Command, long: &str) -> Option<String> {
    command
        .get_arguments()
        .find(|a| a.get_long() == Some(long))
        .and_then(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .or_else(|| {
            command
                .get_subcommands()
                .find_map(|sub| variable_of(sub, long))
        })
}

/// Whether `--long` was typed (alone or as `--long=value`).
fn typed(args: &[OsString], long: &str) -> bool {
    let flag = format!("--{long}");
    args.iter().any(|a| {
        let a = a.to_string_lossy();
        a == flag || a.starts_with(&format!("{flag}="))
    })
}
