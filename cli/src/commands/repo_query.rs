use std::process::ExitCode;

use crate::output::outln;

use crate::error::Context;
use chartkit_index::{ChartVersion, select};
use chartkit_repo::IndexCache;

use crate::cli::{OutputFormat, RepoQueryArgs};
use crate::env;
use chartkit_yaml::Value;

pub fn run(args: RepoQueryArgs) -> crate::error::Result<ExitCode> {
    let cache_home = env::cache_home();
    let index = IndexCache::load_or_build(&args.index, cache_home.as_deref())
        .with_context(|| format!("cannot load the index `{}`", args.index.display()))?;
    for warning in &index.warnings {
        crate::log::warn(warning);
    }
    if let Some(why) = &index.not_cached {
        crate::log::warn_with_hint(
            &format!("not caching the parsed index: {why}"),
            &[],
            &format!("set {} to a writable directory", env::CACHE_HOME),
        );
    }
    if args.pull {
        let request = select::pull_request(args.version.as_deref(), args.devel);
        let chosen = index
            .get(&args.chart, &request)
            .with_context(|| format!("cannot choose a version of `{}`", args.chart))?;
        outln!("{}", chartkit_index::entry_to_json(&chosen))?;
        return Ok(ExitCode::SUCCESS);
    }
    let found = index
        .search(
            &args.chart,
            args.version.as_deref(),
            args.devel,
            args.versions,
        )
        .map_err(|e| crate::error::err!("an invalid version/constraint format: {e}"))?;
    let text = match args.output {
        OutputFormat::Json => format!("{}\n", search_json(&found)),
        OutputFormat::Yaml => chartkit_yaml::to_yaml(&search_yaml(&found)),
        OutputFormat::Table => search_table(&found, args.max_col_width),
    };
    crate::output::stdout_bytes(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The JSON `helm search repo -o json` prints, without the repository prefix.
fn search_json(found: &[ChartVersion]) -> String {
    let rows: Vec<serde_json::Value> = found
        .iter()
        .map(|v| {
            serde_json::json!({
                "name": v.metadata.name,
                "version": v.metadata.version,
                "app_version": v.metadata.app_version,
                "description": v.metadata.description,
            })
        })
        .collect();
    serde_json::Value::Array(rows).to_string()
}

/// The rows `helm search repo -o yaml` prints (go-yaml sorts their keys).
fn search_yaml(found: &[ChartVersion]) -> Value {
    Value::Seq(
        found
            .iter()
            .map(|v| {
                let text = |s: &str| Value::String(s.to_owned());
                Value::Map(
                    [
                        ("name", text(&v.metadata.name)),
                        ("version", text(&v.metadata.version)),
                        ("app_version", text(&v.metadata.app_version)),
                        ("description", text(&v.metadata.description)),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
                )
            })
            .collect(),
    )
}

/// The table `helm search repo` prints, without the repository prefix.
fn search_table(found: &[ChartVersion], max_width: usize) -> String {
    if found.is_empty() {
        return "No results found\n".to_owned();
    }
    let mut rows = vec![super::table::search_header()];
    for v in found {
        rows.push(vec![
            v.metadata.name.clone(),
            v.metadata.version.clone(),
            v.metadata.app_version.clone(),
            v.metadata.description.clone(),
        ]);
    }
    super::table::layout(&rows, max_width)
}
