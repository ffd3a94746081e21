//! `chartkit sandbox up|down|status`: an embedded Kubernetes API server for kubectl and
//! helm, in the foreground or in the background.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use crate::cli::SandboxUpArgs;
use crate::env;
use crate::error::{Context, Result, bail, err};
use crate::report::with_hint;

/// Where a background sandbox records itself.
fn state_file() -> Result<PathBuf> {
    env::state_home()
        .map(|d| d.join("sandbox.json"))
        .ok_or_else(|| {
            err!("cannot tell where to keep the sandbox's state: set CHARTKIT_STATE_HOME or HOME")
        })
}

fn kubeconfig(args: &SandboxUpArgs) -> Result<PathBuf> {
    args.kubeconfig
        .clone()
        .or_else(env::kubeconfig_path)
        .ok_or_else(|| err!("cannot tell which kubeconfig to write: give --kubeconfig FILE"))
}

pub fn up(args: SandboxUpArgs) -> Result<ExitCode> {
    let pod_ready_delay = parse_duration(&args.pod_ready_delay).ok_or_else(|| {
        with_hint(
            err!(
                "--pod-ready-delay {:?} is not a duration",
                args.pod_ready_delay
            ),
            "write it as 500ms, 2s or 1m",
        )
    })?;
    let job_duration = match &args.job_duration {
        None => None,
        Some(text) => Some(parse_duration(text).ok_or_else(|| {
            with_hint(
                err!("--job-duration {text:?} is not a duration"),
                "write it as 0s, 500ms, 2s or 1m",
            )
        })?),
    };
    if args
        .nodes
        .iter()
        .any(|n| !chartkit_sandbox::meta::check_subdomain(n).is_empty())
    {
        bail!(
            "--nodes: node names must be lowercase RFC 1123 subdomains, found {:?}",
            args.nodes
        );
    }
    let kubeconfig = kubeconfig(&args)?;
    if args.background {
        return start_background(&args, &kubeconfig);
    }
    let token: [u8; 16] = rand::random();
    let shutdown_token = hex::encode(token);
    let defaults = chartkit_sandbox::Settings::default();
    let settings = chartkit_sandbox::Settings {
        pod_ready_delay,
        job_duration: job_duration.unwrap_or(defaults.job_duration),
        nodes: args.nodes.clone(),
        ..defaults
    };
    let options = chartkit_sandbox::Options {
        addr: args.addr,
        tls: args.tls,
        data: args.data.clone(),
        settings,
        shutdown_token: Some(shutdown_token.clone()),
        audit_log: args.audit_log.clone(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let sandbox = chartkit_sandbox::Sandbox::start(options).await.map_err(|e| match &e {
            chartkit_sandbox::SandboxError::Bind { source, .. }
                if source.kind() == std::io::ErrorKind::AddrInUse =>
            {
                with_hint(e, "another process is using the port; pick another with --addr 127.0.0.1:PORT, or 127.0.0.1:0 for any free one")
            }
            chartkit_sandbox::SandboxError::Persist(chartkit_sandbox::persist::PersistError::Locked { .. }) => {
                with_hint(e, "stop that sandbox first, or give this one another --data directory")
            }
            chartkit_sandbox::SandboxError::Persist(chartkit_sandbox::persist::PersistError::Corrupt { .. }) => {
                with_hint(e, "the file was damaged after it was written; move the data directory aside to start afresh, or restore it from a backup")
            }
            _ => e.into(),
        })?;
        for warning in sandbox.warnings() {
            crate::log::warn(warning);
        }
        chartkit_sandbox::kubeconfig::write(&kubeconfig, &sandbox.url(), sandbox.tls())
            .map_err(crate::error::Error::msg)?;
        if let Some(state) = &args.state_file {
            let record = json!({
                "pid": std::process::id(),
                "url": sandbox.url(),
                "kubeconfig": kubeconfig,
                "shutdownToken": shutdown_token,
            });
            chartkit_durable::write_with(
                state,
                record.to_string().as_bytes(),
                chartkit_durable::Options { mode: Some(0o600) },
            )?;
        } else {
            let banner = banner(&sandbox.url(), &kubeconfig, &args, false);
            crate::output::stdout_bytes(banner.as_bytes())?;
        }
        // Dropping the sandbox (on a signal) stops it.
        tokio::select! {
            () = shutdown_signal() => {}
            () = sandbox.wait() => {}
        }
        Ok(ExitCode::SUCCESS)
    })
}

fn banner(url: &str, kubeconfig: &Path, args: &SandboxUpArgs, background: bool) -> String {
    let mut out = format!(
        "Sandbox Kubernetes API server (v1.34) listening on {url}\n\
         Context \"chartkit-sandbox\" written to {} and made current.\n\
         Try:\n  kubectl get nodes\n  helm install web ./my-chart --wait\n",
        kubeconfig.display()
    );
    if args.tls {
        out.push_str("TLS is on: the kubeconfig holds the sandbox's CA and bearer token.\n");
    }
    if background {
        out.push_str("Stop it with: chartkit sandbox down\n");
    } else {
        out.push_str("Stop it with Ctrl-C.\n");
    }
    out
}

fn start_background(args: &SandboxUpArgs, kubeconfig: &Path) -> Result<ExitCode> {
    let state = state_file()?;
    if let Some(running) = read_state(&state)
        && is_up(&running)
    {
        return Err(with_hint(
            err!(
                "a sandbox is already running at {}",
                running["url"].as_str().unwrap_or("?")
            ),
            "stop it first with: chartkit sandbox down",
        ));
    }
    let dir = state.parent().expect("the state file is in a directory");
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    let _ = std::fs::remove_file(&state);
    let log_path = dir.join("sandbox.log");
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("cannot create `{}`", log_path.display()))?;
    let exe = std::env::current_exe().context("cannot find chartkit's own executable")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("sandbox")
        .arg("up")
        .arg("--addr")
        .arg(args.addr.to_string())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--pod-ready-delay")
        .arg(&args.pod_ready_delay)
        .arg("--nodes")
        .arg(args.nodes.join(","))
        .arg("--state-file")
        .arg(&state);
    if let Some(d) = &args.data {
        cmd.arg("--data").arg(d);
    }
    if let Some(d) = &args.job_duration {
        cmd.arg("--job-duration").arg(d);
    }
    if let Some(f) = &args.audit_log {
        cmd.arg("--audit-log")
            .arg(std::path::absolute(f).unwrap_or_else(|_| f.clone()));
    }
    if args.tls {
        cmd.arg("--tls");
    }
    cmd.stdin(std::process::Stdio::null())
        .stdout(log.try_clone().context("cannot open the log")?)
        .stderr(log);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().context("cannot start the background sandbox")?;
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(record) = read_state(&state) {
            let url = record["url"].as_str().unwrap_or("").to_string();
            crate::output::stdout_bytes(banner(&url, kubeconfig, args, true).as_bytes())?;
            return Ok(ExitCode::SUCCESS);
        }
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            bail!(
                "the background sandbox stopped at once ({status}):\n{}",
                log.trim_end()
            );
        }
        if std::time::Instant::now() > deadline {
            bail!(
                "the background sandbox did not report its address within 15 seconds; see `{}`",
                log_path.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read_state(path: &Path) -> Option<serde_json::Value> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Whether the recorded sandbox answers.
fn is_up(record: &serde_json::Value) -> bool {
    let Some(url) = record["url"].as_str() else {
        return false;
    };
    let Some(addr) = url.split("://").nth(1) else {
        return false;
    };
    let Ok(addr) = addr.parse::<std::net::SocketAddr>() else {
        return false;
    };
    std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok()
}

pub fn down() -> Result<ExitCode> {
    let state = state_file()?;
    let Some(record) = read_state(&state) else {
        return Err(with_hint(
            err!("no background sandbox is running"),
            "start one with: chartkit sandbox up --background",
        ));
    };
    let url = record["url"].as_str().unwrap_or("");
    if !is_up(&record) {
        let _ = std::fs::remove_file(&state);
        crate::output::stdout(format_args!("The sandbox at {url} had already stopped.\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let token = record["shutdownToken"].as_str().unwrap_or("");
    let client = reqwest::blocking::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .context("cannot build an HTTP client")?;
    client
        .post(format!("{url}{}", chartkit_sandbox::http::SHUTDOWN_PATH))
        .header(chartkit_sandbox::http::SHUTDOWN_HEADER, token)
        .send()
        .and_then(|r| r.error_for_status())
        .with_context(|| format!("cannot ask the sandbox at {url} to stop"))?;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while is_up(&record) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_file(&state);
    crate::output::stdout(format_args!("Stopped the sandbox at {url}.\n"))?;
    Ok(ExitCode::SUCCESS)
}

pub fn status() -> Result<ExitCode> {
    let state = state_file()?;
    match read_state(&state) {
        Some(record) if is_up(&record) => {
            crate::output::stdout(format_args!(
                "running at {} (pid {}), kubeconfig {}\n",
                record["url"].as_str().unwrap_or("?"),
                record["pid"],
                record["kubeconfig"].as_str().unwrap_or("?"),
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            crate::output::stdout(format_args!("not running\n"))?;
            Ok(ExitCode::from(3))
        }
    }
}

/// `500ms`, `2s`, `1m`, `1.5s`.
fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = text.split_at(split);
    let n: f64 = number.parse().ok()?;
    let seconds = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(seconds).ok()
}

/// Completes on SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Some(Duration::from_secs(2)));
        assert_eq!(parse_duration("1m"), Some(Duration::from_secs(60)));
        assert_eq!(parse_duration("x"), None);
    }
}
