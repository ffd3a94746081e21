use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Mutex;

use chartkit_repo_client::{ClientError, IndexUpdate, RepoEntry};

use super::repo_support::client;
use crate::cli::RepoUpdateArgs;
use crate::output::outln;

/// `helm repo update`: every repository (or those named) at once, each index fetched
/// only if it changed. On a terminal each repository gets a progress line on stderr;
/// piped, only helm's lines are printed.
pub fn run(args: RepoUpdateArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let client = client(offline, args.timeout)?;
    if client.repos.repositories.is_empty() {
        return Err(crate::report::with_hint(
            crate::error::err!("no repositories found. You must add one before updating"),
            "chartkit repo add NAME URL (repositories added with helm repo add are used as they are)",
        ));
    }
    for name in &args.names {
        if client.repos.get(name).is_none() {
            return Err(crate::error::err!(
                "no repositories found matching '{name}'.  Nothing will be updated"
            ));
        }
    }
    let repos: Vec<&RepoEntry> = client
        .repos
        .repositories
        .iter()
        .filter(|r| args.names.is_empty() || args.names.contains(&r.name))
        .collect();
    outln!("Hang tight while we grab the latest from your chart repositories...")?;
    let bars = std::io::stderr()
        .is_terminal()
        .then(indicatif::MultiProgress::new);
    let lines = Mutex::new(Vec::<String>::new());
    let failed = Mutex::new(Vec::<String>::new());
    // How to raise the bound on index downloads, when an index was over it.
    let limit_hint = Mutex::new(None::<String>);
    std::thread::scope(|scope| {
        for repo in &repos {
            let bar = bars.as_ref().map(|multi| {
                let bar = multi.add(indicatif::ProgressBar::new_spinner());
                bar.set_style(
                    indicatif::ProgressStyle::with_template("{prefix} {msg}")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
                );
                bar.set_prefix(format!("{:?}", repo.name));
                bar.set_message("connecting");
                bar
            });
            let (client, lines, failed, limit_hint) = (&client, &lines, &failed, &limit_hint);
            scope.spawn(move || {
                let report = |done: u64, total: Option<u64>| {
                    if let Some(bar) = &bar {
                        bar.set_message(match total {
                            Some(total) => format!("{} of {}", size(done), size(total)),
                            None => size(done),
                        });
                    }
                };
                let result = client.update_index_with_progress(repo, Some(&report));
                if let Ok(update) = &result {
                    for warning in update.warnings() {
                        crate::log::warn(warning);
                    }
                }
                let line = match &result {
                    Ok(_) => format!(
                        "...Successfully got an update from the {:?} chart repository",
                        repo.name
                    ),
                    Err(e) => {
                        failed
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(repo.url.clone());
                        if let ClientError::IndexTooLarge { limit, .. } = e {
                            let hint = super::repo_support::index_limit_hint(*limit);
                            *limit_hint.lock().unwrap_or_else(|e| e.into_inner()) = Some(hint);
                        }
                        format!(
                            "...Unable to get an update from the {:?} chart repository ({}):\n\t{}",
                            repo.name,
                            repo.url,
                            crate::report::chain(std::iter::once(e.to_string()))
                        )
                    }
                };
                if let Some(bar) = &bar {
                    bar.finish_with_message(match result {
                        Ok(IndexUpdate::NotModified { .. }) => "unchanged".to_owned(),
                        Ok(IndexUpdate::Downloaded { bytes, .. }) => {
                            format!("downloaded {}", size(bytes))
                        }
                        Err(_) => "failed".to_owned(),
                    });
                }
                lines.lock().unwrap_or_else(|e| e.into_inner()).push(line);
            });
        }
    });
    if let Some(multi) = &bars {
        let _ = multi.clear();
    }
    for line in lines.into_inner().unwrap_or_else(|e| e.into_inner()) {
        outln!("{line}")?;
    }
    let failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
    if !failed.is_empty() {
        let error = crate::error::err!(
            "failed to update the following repositories: [{}]",
            failed.join(" ")
        );
        return Err(
            match limit_hint.into_inner().unwrap_or_else(|e| e.into_inner()) {
                Some(hint) => crate::report::with_hint(error, hint),
                None => error,
            },
        );
    }
    outln!("Update Complete. ⎈Happy Helming!⎈")?;
    Ok(ExitCode::SUCCESS)
}

/// Bytes as people read them.
fn size(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if bytes >= 1024 * 1024 {
        format!("{:.1} MiB", bytes as f64 / MIB)
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}
