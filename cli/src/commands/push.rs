use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::output::outln;

use crate::error::Context;
use chartkit_yaml::Value;

use crate::cli::PushArgs;
use crate::env;
use crate::report::with_hint;

/// A repository to push to, with what `helm repo add` stored for it.
#[derive(Debug, Default)]
struct Target {
    url: String,
    username: Option<String>,
    password: Option<String>,
    ca_file: Option<PathBuf>,
    insecure: bool,
}

pub fn run(args: PushArgs) -> crate::error::Result<ExitCode> {
    let file_name = args
        .chart
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| n.ends_with(".tgz"))
        .ok_or_else(|| {
            with_hint(
                crate::error::err!("`{}` is not a chart package", args.chart.display()),
                "package the chart first: chartkit package DIR",
            )
        })?
        .to_owned();
    let package = std::fs::read(&args.chart)
        .with_context(|| format!("cannot read `{}`", args.chart.display()))?;
    let prov = if args.prov {
        let path = PathBuf::from(format!("{}.prov", args.chart.display()));
        Some(std::fs::read(&path).map_err(|e| {
            with_hint(
                crate::error::err!("cannot read `{}`: {e}", path.display()),
                "sign the package with `chartkit package --sign`, or push without --prov",
            )
        })?)
    } else {
        None
    };
    let mut target = resolve(&args.repo)?;
    if args.username.is_some() {
        target.username = args.username.clone();
    }
    if args.password.is_some() {
        target.password = args.password.clone();
    }
    if args.ca_file.is_some() {
        target.ca_file = args.ca_file.clone();
    }
    target.insecure |= args.insecure_skip_tls_verify;

    let mut client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(args.timeout))
        .user_agent(concat!("chartkit/", env!("CARGO_PKG_VERSION")));
    if target.insecure {
        client = client.tls_danger_accept_invalid_certs(true);
    } else if let Some(ca) = &target.ca_file {
        client = client.tls_backend_preconfigured(ca_file_config(ca)?);
    }
    let client = client.build().context("cannot set up the HTTP client")?;

    let endpoint = format!("{}/api/charts", target.url.trim_end_matches('/'));
    let mut form = reqwest::blocking::multipart::Form::new().part(
        "chart",
        reqwest::blocking::multipart::Part::bytes(package)
            .file_name(file_name.clone())
            .mime_str("application/gzip")?,
    );
    if let Some(prov) = prov {
        form = form.part(
            "prov",
            reqwest::blocking::multipart::Part::bytes(prov)
                .file_name(format!("{file_name}.prov"))
                .mime_str("application/pgp-signature")?,
        );
    }
    let mut request = client.post(&endpoint).multipart(form);
    if let Some(token) = &args.token {
        request = request.bearer_auth(token);
    } else if let Some(user) = &target.username {
        request = request.basic_auth(user, target.password.as_deref());
    }
    let response = request.send().map_err(|e| {
        with_hint(
            crate::error::err!("cannot reach {endpoint}: {}", error_chain(&e)),
            "check the URL and that the server is running",
        )
    })?;
    let status = response.status();
    let body = response.text().unwrap_or_default();
    if status.is_success() {
        outln!("Pushed {file_name} to {}", target.url)?;
        return Ok(ExitCode::SUCCESS);
    }
    let message = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or_else(|| body.trim().to_owned());
    let error = crate::error::err!("{endpoint} refused {file_name} ({status}): {message}");
    let hint = match status.as_u16() {
        401 | 403 => Some("give credentials with --username/--password or --token"),
        409 => Some("bump the chart version, or start the server with --allow-overwrite"),
        413 => {
            Some("the package is larger than the server accepts (chartkit serve --max-upload-size)")
        }
        404 => Some("is this a ChartMuseum-compatible server? the upload API is POST /api/charts"),
        _ => None,
    };
    Err(match hint {
        Some(hint) => with_hint(error, hint),
        None => error,
    })
}

/// TLS that trusts only the certificates in `path` (PEM), as helm's `--ca-file` does.
fn ca_file_config(path: &Path) -> crate::error::Result<rustls::ClientConfig> {
    let certs = chartkit_repo_client::read_certs(path).map_err(crate::error::Error::msg)?;
    chartkit_repo_client::tls::client_config(certs, None)
        .with_context(|| format!("cannot use `{}` as a CA file", path.display()))
}

/// An error and its sources, each stated once.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut messages = Vec::new();
    let mut source = Some(error);
    while let Some(cause) = source {
        messages.push(cause.to_string());
        source = cause.source();
    }
    crate::report::chain(messages)
}

/// A URL as given, or a repository name looked up in chartkit's repositories.yaml, then
/// in Helm's.
fn resolve(repo: &str) -> crate::error::Result<Target> {
    if repo.contains("://") {
        return Ok(Target {
            url: repo.to_owned(),
            ..Target::default()
        });
    }
    if let Ok(paths) = super::repo_support::paths()
        && let Ok(ours) = chartkit_repo_client::RepoFile::load(&paths.repositories_file())
        && let Some(entry) = ours.get(repo)
    {
        let text = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        return Ok(Target {
            url: entry.url.clone(),
            username: text(&entry.username),
            password: text(&entry.password),
            ca_file: text(&entry.ca_file).map(PathBuf::from),
            insecure: entry.insecure_skip_tls_verify,
        });
    }
    let path = env::helm_repository_config().ok_or_else(|| {
        crate::error::err!("`{repo}` is not a URL and Helm's repositories.yaml cannot be located")
    })?;
    let not_found = || {
        with_hint(
            crate::error::err!("no repository named `{repo}` in `{}`", path.display()),
            format!("pass the repository URL, or add it first: helm repo add {repo} URL"),
        )
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found()),
        Err(e) => return Err(crate::error::err!("cannot read `{}`: {e}", path.display())),
    };
    let config = chartkit_yaml::parse_values(&text)
        .with_context(|| format!("cannot parse `{}`", path.display()))?;
    let entry = config
        .get("repositories")
        .and_then(Value::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(Value::as_map)
        .find(|r| r.get("name").and_then(Value::as_str) == Some(repo))
        .ok_or_else(not_found)?;
    let text = |key: &str| {
        entry
            .get(key)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    Ok(Target {
        url: text("url").ok_or_else(|| {
            crate::error::err!("repository `{repo}` in `{}` has no url", path.display())
        })?,
        username: text("username"),
        password: text("password"),
        ca_file: text("caFile").map(PathBuf::from),
        insecure: matches!(
            entry.get("insecure_skip_tls_verify"),
            Some(Value::Bool(true))
        ),
    })
}
