//! The `chartkit` command line. `main.rs` only calls [`run`].

mod cli;
mod cli_helm;
mod commands;
mod env;
mod error;
mod kube;
mod log;
mod output;
mod report;
mod wait_view;

use std::process::ExitCode;

/// Parses the command line, runs the command and reports errors.
pub fn run() -> ExitCode {
    let cli = match cli::Cli::from_args() {
        Ok(cli) => cli,
        Err(error) => return report::usage(&error),
    };
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(error) => report::error(&error),
    }
}
