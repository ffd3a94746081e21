use std::process::ExitCode;

use chartkit_repo_client::{ClientError, Hit, Refresh, SearchOptions};

use super::repo_support::{client, client_error, go_json_rows, yaml_rows};
use crate::cli::{OutputFormat, SearchRepoArgs};

/// `helm search repo`, over the cached compact indexes of every configured repository.
/// Nothing is downloaded: `chartkit repo update` does that.
pub fn run(args: SearchRepoArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let client = client(offline, 120)?;
    if client.repos.repositories.is_empty() {
        return Err(crate::report::with_hint(
            crate::error::err!("no repositories configured"),
            "chartkit repo add NAME URL, or chartkit repo import-helm",
        ));
    }
    let mut indexes = Vec::new();
    for entry in &client.repos.repositories {
        match client.load_index(entry, Refresh::Never) {
            Ok(loaded) => {
                for warning in &loaded.warnings {
                    crate::log::warn(warning);
                }
                indexes.push(loaded);
            }
            Err(e @ (ClientError::NoCachedIndex { .. } | ClientError::Offline { .. })) => {
                crate::log::warn_with_hint(
                    "repo is corrupt or missing",
                    &[("repo", &entry.name), ("error", &e.to_string())],
                    &format!("run `chartkit repo update {}`", entry.name),
                );
            }
            Err(e) => {
                crate::log::warn_with_hint(
                    "repo is corrupt or missing",
                    &[("repo", &entry.name), ("error", &e.to_string())],
                    &format!("run `chartkit repo update {}`", entry.name),
                );
            }
        }
    }
    let options = SearchOptions {
        query: (!args.keyword.is_empty()).then(|| args.keyword.join(" ")),
        regexp: args.regexp,
        versions: args.versions,
        version: args.version.clone(),
        devel: args.devel,
    };
    let hits = chartkit_repo_client::search(&indexes, &options).map_err(client_error)?;
    if hits.is_empty() && args.fail_on_no_result {
        return Err(crate::error::err!("no results found"));
    }
    let text = match args.output {
        OutputFormat::Json => go_json_rows(&rows(&hits)),
        OutputFormat::Yaml => yaml_rows(&rows(&hits)),
        OutputFormat::Table if hits.is_empty() => "No results found\n".to_owned(),
        OutputFormat::Table => {
            let mut table = vec![super::table::search_header()];
            for hit in &hits {
                let m = &hit.chart.metadata;
                table.push(vec![
                    hit.name.clone(),
                    m.version.clone(),
                    m.app_version.clone(),
                    m.description.clone(),
                ]);
            }
            super::table::layout(&table, args.max_col_width)
        }
    };
    crate::output::stdout_bytes(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// Helm's `repoChartElement` fields, in its order.
fn rows(hits: &[Hit]) -> Vec<Vec<(&str, &str)>> {
    hits.iter()
        .map(|h| {
            let m = &h.chart.metadata;
            vec![
                ("name", h.name.as_str()),
                ("version", m.version.as_str()),
                ("app_version", m.app_version.as_str()),
                ("description", m.description.as_str()),
            ]
        })
        .collect()
}
