use std::process::ExitCode;

use chartkit_repo_client::RepoFile;

use super::repo_support::{client_error, go_json_rows, paths, yaml_rows};
use crate::cli::{OutputFormat, RepoListArgs};
use crate::output::errln;

/// `helm repo list`.
pub fn run(args: RepoListArgs) -> crate::error::Result<ExitCode> {
    let repos = RepoFile::load(&paths()?.repositories_file()).map_err(client_error)?;
    if repos.repositories.is_empty() && args.output == OutputFormat::Table {
        errln!("no repositories to show");
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<(&str, &str)>> = repos
        .repositories
        .iter()
        .map(|r| vec![("name", r.name.as_str()), ("url", r.url.as_str())])
        .collect();
    let text = match args.output {
        OutputFormat::Json => go_json_rows(&rows),
        OutputFormat::Yaml => yaml_rows(&rows),
        OutputFormat::Table => {
            let mut table = Vec::new();
            if !args.no_headers {
                table.push(vec!["NAME".to_owned(), "URL".to_owned()]);
            }
            for r in &repos.repositories {
                table.push(vec![r.name.clone(), r.url.clone()]);
            }
            super::table::layout(&table, 0)
        }
    };
    crate::output::stdout_bytes(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
