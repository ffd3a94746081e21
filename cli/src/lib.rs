//! The `chartkit` command line. `main.rs` only calls [`run`].

mod cli;
mod commands;
mod env;
mod error;
mod report;

use std::process::ExitCode;

/// Parses the command line, runs the command and reports errors.
pub fn run() -> ExitCode {
    let cli = cli::Cli::from_args();
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(error) => report::error(&error),
    }
}
