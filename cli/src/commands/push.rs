use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::output::outln;

use crate::error::Context;

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
    if chartkit_oci::is_oci(&args.repo) {
        return super::push_oci::run(args);
    }
    let [chart] = args.charts.as_slice() else {
        return Err(with_hint(
            crate::error::err!("a chart repository takes one package per push"),
            "push the packages one by one, or push them to an OCI registry (oci://HOST/PATH) in one command",
        ));
    };
    let file_name = package_name(chart)?;
    let package =
        std::fs::read(chart).with_context(|| format!("cannot read `{}`", chart.display()))?;
    let prov = if args.prov {
        let path = PathBuf::from(format!("{}.prov", chart.display()));
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
    let mut parts = vec![("chart", file_name.clone(), "application/gzip", package)];
    if let Some(prov) = prov {
        let name = format!("{file_name}.prov");
        parts.push(("prov", name, "application/pgp-signature", prov));
    }
    // The form is built in memory and sent as one body: reqwest's streamed multipart
    // body reports a refused TLS handshake as "receiver is gone" now and then,
    // hiding the certificate error the user needs to see.
    let (content_type, body) = multipart_form(&parts);
    let mut request = client
        .post(&endpoint)
        .header(reqwest::header::CONTENT_TYPE, content_type)
        .body(body);
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

/// The package's file name; push takes a packaged chart on disk (as helm push does), so
/// anything else is refused with what to do instead.
fn package_name(chart: &Path) -> crate::error::Result<String> {
    let shown = chart.display();
    if chart.is_dir() {
        return Err(with_hint(
            crate::error::err!("`{shown}` is a directory; push takes a packaged chart (.tgz)"),
            format!("package it first: chartkit package {shown}"),
        ));
    }
    let name = chart
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if !name.ends_with(".tgz") {
        let reference = shown.to_string();
        let hint = if reference.contains("://") || reference.matches('/').count() == 1 {
            "push uploads a package on disk; to copy a chart from a repository, `chartkit pull` it first"
        } else {
            "package the chart first: chartkit package DIR"
        };
        return Err(with_hint(
            crate::error::err!("`{shown}` is not a chart package (NAME-VERSION.tgz)"),
            hint,
        ));
    }
    if !chart.exists() {
        return Err(with_hint(
            crate::error::err!("chart package `{shown}` not found"),
            "check the path; `chartkit package DIR` writes NAME-VERSION.tgz",
        ));
    }
    Ok(name.to_owned())
}

/// A URL as given, or a repository name looked up in the repository list chartkit uses
/// (helm's by default), then in Helm's own when chartkit keeps another.
fn resolve(repo: &str) -> crate::error::Result<Target> {
    if repo.contains("://") {
        return Ok(Target {
            url: repo.to_owned(),
            ..Target::default()
        });
    }
    let load = |path: &Path| {
        chartkit_repo_client::RepoFile::load(path).map_err(super::repo_support::client_error)
    };
    if let Ok(paths) = super::repo_support::paths()
        && let Some(entry) = load(&paths.repositories_file())?.get(repo)
    {
        return Ok(Target::of(entry));
    }
    let path = env::helm_repository_config().ok_or_else(|| {
        crate::error::err!("`{repo}` is not a URL and Helm's repositories.yaml cannot be located")
    })?;
    let helms = load(&path)?;
    let entry = helms.get(repo).ok_or_else(|| {
        with_hint(
            crate::error::err!("no repository named `{repo}` in `{}`", path.display()),
            format!("pass the repository URL, or add it first: helm repo add {repo} URL"),
        )
    })?;
    if entry.url.is_empty() {
        crate::error::bail!("repository `{repo}` in `{}` has no url", path.display());
    }
    Ok(Target::of(entry))
}

impl Target {
    fn of(entry: &chartkit_repo_client::RepoEntry) -> Target {
        let text = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        Target {
            url: entry.url.clone(),
            username: text(&entry.username),
            password: text(&entry.password),
            ca_file: text(&entry.ca_file).map(PathBuf::from),
            insecure: entry.insecure_skip_tls_verify,
        }
    }
}

/// A `multipart/form-data` body of file parts (field, file name, media type, bytes).
fn multipart_form(parts: &[(&str, String, &str, Vec<u8>)]) -> (String, Vec<u8>) {
    use sha2::{Digest, Sha256};
    // A boundary made from the parts' digest cannot plausibly occur inside them.
    let mut hasher = Sha256::new();
    parts.iter().for_each(|part| hasher.update(&part.3));
    let boundary: String = (hasher.finalize().iter().take(16))
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut body = Vec::new();
    for (field, file_name, media_type, bytes) in parts {
        // File names are NAME-VERSION.tgz, which chart name and version rules keep free
        // of quotes and line breaks.
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{file_name}\"\r\nContent-Type: {media_type}\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}
