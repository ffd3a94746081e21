//! `helm search hub`: Artifact Hub's search, printed as helm prints it.

use std::process::ExitCode;

use crate::cli::OutputFormat;
use crate::cli_helm::SearchHubArgs;
use crate::error::{Result, bail, err};

pub fn run(args: SearchHubArgs, offline: bool) -> Result<ExitCode> {
    if offline || crate::env::offline() {
        let endpoint = &args.endpoint;
        bail!("cannot search `{endpoint}` offline: the hub is only on the network");
    }
    let term = args.keyword.join(" ");
    let user_agent = format!("chartkit/{}", env!("CARGO_PKG_VERSION"));
    let charts = chartkit_repo_client::search_hub(&args.endpoint, &term, &user_agent)?;
    if charts.is_empty() && args.fail_on_no_result {
        return Err(err!("no results found"));
    }
    let text = match args.output {
        OutputFormat::Table if charts.is_empty() => "No results found\n".to_owned(),
        OutputFormat::Table => {
            let mut header = vec!["URL", "CHART VERSION", "APP VERSION", "DESCRIPTION"];
            if args.list_repo_url {
                header.push("REPO URL");
            }
            let mut rows = vec![header.into_iter().map(str::to_owned).collect::<Vec<_>>()];
            for c in &charts {
                let mut row = vec![
                    c.url.clone(),
                    c.version.clone(),
                    c.app_version.clone(),
                    c.description.clone(),
                ];
                if args.list_repo_url {
                    row.push(c.repository_url.clone());
                }
                rows.push(row);
            }
            super::table::layout(&rows, args.max_col_width)
        }
        OutputFormat::Json => {
            let s = chartkit_yaml::gojson::string;
            let items: Vec<String> = charts
                .iter()
                .map(|c| {
                    format!(
                        "{{\"url\":{},\"version\":{},\"app_version\":{},\"description\":{},\"repository\":{{\"url\":{},\"name\":{}}}}}",
                        s(&c.url),
                        s(&c.version),
                        s(&c.app_version),
                        s(&c.description),
                        s(&c.repository_url),
                        s(&c.repository_name)
                    )
                })
                .collect();
            format!("[{}]\n", items.join(","))
        }
        OutputFormat::Yaml => {
            use chartkit_yaml::Value;
            let string = |v: &str| Value::String(v.to_owned());
            let list = charts
                .iter()
                .map(|c| {
                    let mut repository = chartkit_yaml::Map::new();
                    repository.insert("name".into(), string(&c.repository_name));
                    repository.insert("url".into(), string(&c.repository_url));
                    let mut item = chartkit_yaml::Map::new();
                    item.insert("app_version".into(), string(&c.app_version));
                    item.insert("description".into(), string(&c.description));
                    item.insert("repository".into(), Value::Map(repository));
                    item.insert("url".into(), string(&c.url));
                    item.insert("version".into(), string(&c.version));
                    Value::Map(item)
                })
                .collect();
            chartkit_yaml::to_yaml(&Value::Seq(list))
        }
    };
    crate::output::stdout_bytes(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
