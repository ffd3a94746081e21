mod create;
mod lint;
mod package;
mod repo_index;
mod repo_query;
mod show;

use std::process::ExitCode;

use chartkit_chart::LoadOptions;
use chartkit_chart::archive::Limits;

use crate::cli::{Cli, Command, RepoCommand};
use crate::env;

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Create(args) => create::run(args),
        Command::Package(args) => package::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Show(command) => show::run(command),
        Command::Repo(RepoCommand::Index(args)) => repo_index::run(args),
        Command::Repo(RepoCommand::Query(args)) => repo_query::run(args),
    }
}

/// Archive and chart size limits, from the environment or Helm's defaults.
pub fn limits() -> anyhow::Result<Limits> {
    let mut limits = Limits::default();
    if let Some(size) = env::number(env::MAX_FILE_SIZE)? {
        limits.max_file_size = size;
    }
    if let Some(size) = env::number(env::MAX_CHART_SIZE)? {
        limits.max_total_size = size;
    }
    Ok(limits)
}

pub fn load_options() -> anyhow::Result<LoadOptions> {
    Ok(LoadOptions { limits: limits()? })
}
