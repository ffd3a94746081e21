use std::path::Path;
use std::process::ExitCode;

use chartkit_addon::{AddonVersion, Picked};
use chartkit_index::ChartVersion;
use chartkit_version::{Version, VersionRange};
use chartkit_yaml::Value;

use crate::cli::{AddonResolveArgs, OutputFormat};
use crate::error::Context;

/// `chartkit addon resolve`: the versions to install, or why there are none.
pub fn resolve(args: AddonResolveArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let range = args
        .version
        .as_deref()
        .map(VersionRange::parse)
        .transpose()
        .context("invalid --version")?;
    let kube = cluster_version(args.kube_version.as_deref(), "--kube-version")?;
    let vela = cluster_version(args.vela_version.as_deref(), "--vela-version")?;
    let available = match (&args.index, &args.repo) {
        (Some(path), _) => addon_versions(local_entries(path)?),
        (None, Some(repo)) => addon_versions(remote_entries(repo, offline)?),
        (None, None) => {
            crate::error::bail!("give the repository with --index FILE or --repo NAME|URL")
        }
    };
    let picked = chartkit_addon::resolve(
        &args.name,
        range.as_ref(),
        kube.as_ref(),
        vela.as_ref(),
        &available,
    )?;
    let text = match args.output {
        OutputFormat::Table => table(&picked),
        OutputFormat::Json => format!("{}\n", serde_json::Value::Array(json(&picked))),
        OutputFormat::Yaml => chartkit_yaml::to_yaml(&yaml(&picked)),
    };
    crate::output::stdout_bytes(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn cluster_version(text: Option<&str>, flag: &str) -> crate::error::Result<Option<Version>> {
    text.map(|t| {
        Version::parse(t).with_context(|| {
            format!("invalid {flag} `{t}`: expected a version such as 1.28.3 or v1.28.3")
        })
    })
    .transpose()
}

/// Every entry of a local index file, with its chart name.
fn local_entries(path: &Path) -> crate::error::Result<Vec<(String, ChartVersion)>> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read the index `{}`", path.display()))?;
    let source = path.display().to_string();
    let loaded = chartkit_index::parse_index(&bytes, &source)
        .with_context(|| format!("cannot read the index `{source}`"))?;
    for warning in &loaded.warnings {
        crate::log::warn(warning);
    }
    Ok(loaded
        .index
        .entries
        .into_iter()
        .flat_map(|(name, versions)| versions.into_iter().map(move |v| (name.clone(), v)))
        .collect())
}

/// Every entry of `--repo`'s index: a repository added with `chartkit repo add` (its
/// cached index, as `search repo` reads it), or a URL (asked for its index as `pull
/// --repo` does, falling back to the cache). Caching, credentials and `--offline` are the
/// client's; entries are read from the compact form the client keeps.
fn remote_entries(repo: &str, offline: bool) -> crate::error::Result<Vec<(String, ChartVersion)>> {
    use chartkit_repo_client::Refresh;
    let client = super::repo_support::client(offline, 120)?;
    let (entry, refresh) = match client.repo(repo) {
        Ok(entry) => (entry.clone(), Refresh::IfMissing),
        Err(_) if repo.contains("://") => (client.entry_for_url(repo), Refresh::Always),
        Err(e) => return Err(super::repo_support::client_error(e)),
    };
    let loaded = client
        .load_index(&entry, refresh)
        .map_err(super::repo_support::client_error)?;
    for warning in &loaded.warnings {
        crate::log::warn(warning);
    }
    let index = &loaded.index;
    let mut out = Vec::new();
    for name in index.chart_names() {
        let versions = index
            .versions(name)
            .with_context(|| format!("cannot read the cached index of {repo}"))?;
        for version in &versions {
            let chart = index
                .entry(version)
                .with_context(|| format!("cannot read the cached index of {repo}"))?;
            out.push((name.to_owned(), chart));
        }
    }
    Ok(out)
}

/// Every entry as an addon version; an entry whose addon annotations cannot be read is
/// left out with a warning, as Helm leaves out entries it cannot read.
fn addon_versions(entries: Vec<(String, ChartVersion)>) -> Vec<AddonVersion> {
    let mut out = Vec::new();
    for (name, entry) in &entries {
        match AddonVersion::from_annotations(
            name,
            &entry.metadata.version,
            &entry.metadata.annotations,
        ) {
            Ok(addon) => out.push(addon),
            Err(e) => crate::log::warn(&format!("skipping index entry {e}")),
        }
    }
    out
}

fn table(picked: &[Picked]) -> String {
    let mut rows = vec![
        ["NAME", "VERSION", "REQUIRED BY"]
            .map(str::to_owned)
            .to_vec(),
    ];
    for p in picked {
        rows.push(vec![
            p.name.clone(),
            p.version.original().to_owned(),
            p.required_by.join(", "),
        ]);
    }
    // An addon nothing requires ends its line after the version.
    super::table::layout(&rows, 0)
        .lines()
        .map(|line| format!("{}\n", line.trim_end()))
        .collect()
}

fn json(picked: &[Picked]) -> Vec<serde_json::Value> {
    picked
        .iter()
        .map(|p| {
            serde_json::json!({
                "name": p.name,
                "version": p.version.original(),
                "requiredBy": p.required_by,
            })
        })
        .collect()
}

fn yaml(picked: &[Picked]) -> Value {
    Value::Seq(
        picked
            .iter()
            .map(|p| {
                let mut map = chartkit_yaml::Map::new();
                map.insert("name".into(), Value::String(p.name.clone()));
                map.insert(
                    "version".into(),
                    Value::String(p.version.original().to_owned()),
                );
                map.insert(
                    "requiredBy".into(),
                    Value::Seq(p.required_by.iter().cloned().map(Value::String).collect()),
                );
                Value::Map(map)
            })
            .collect(),
    )
}
