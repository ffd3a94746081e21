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
    if let Some(args) = chartmuseum_args() {
        return match commands::serve::run_chartmuseum(&args) {
            Ok(code) => code,
            Err(error) => report::error(&error),
        };
    }
    let cli = match cli::Cli::from_args() {
        Ok(cli) => cli,
        Err(error) => return report::usage(&error),
    };
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(error) => report::error(&error),
    }
}

/// ChartMuseum's arguments when the binary runs as ChartMuseum: invoked as `chartmuseum`
/// (a link to it), or as `chartkit serve --chartmuseum ...`.
fn chartmuseum_args() -> Option<Vec<String>> {
    let mut args = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
    let program = args.next()?;
    let name = std::path::Path::new(&program).file_name()?.to_str()?;
    let rest: Vec<String> = args.collect();
    if name == "chartmuseum" || name == "chartmuseum.exe" {
        return Some(rest);
    }
    match rest.as_slice() {
        [serve, flag, tail @ ..] if serve == "serve" && flag == "--chartmuseum" => {
            Some(tail.to_vec())
        }
        _ => None,
    }
}
