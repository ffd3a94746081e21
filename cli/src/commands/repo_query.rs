use std::process::ExitCode;

use crate::error::Context;
use chartkit_index::{ChartVersion, select};
use chartkit_repo::IndexCache;

use crate::cli::RepoQueryArgs;
use crate::env;

pub fn run(args: RepoQueryArgs) -> crate::error::Result<ExitCode> {
    let cache_home = env::cache_home();
    let index = IndexCache::load_or_build(&args.index, cache_home.as_deref())
        .with_context(|| format!("cannot load the index `{}`", args.index.display()))?;
    for warning in &index.warnings {
        eprintln!("warning: {warning}");
    }
    if let Some(why) = &index.not_cached {
        eprintln!(
            "warning: not caching the parsed index: {why}\nhint: set {} to a writable directory",
            env::CACHE_HOME
        );
    }
    if args.pull {
        let request = select::pull_request(args.version.as_deref(), args.devel);
        let chosen = index
            .get(&args.chart, &request)
            .with_context(|| format!("cannot choose a version of `{}`", args.chart))?;
        println!("{}", chartkit_index::entry_to_json(&chosen));
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
    println!("{}", search_json(&found));
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
