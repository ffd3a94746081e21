use std::process::ExitCode;

use chartkit_dependency::mirror::{MirrorOptions, mirror};

use crate::cli::MirrorArgs;
use crate::output::outln;

/// `chartkit mirror REPO[/NAME] --to DIR`.
pub fn run(args: MirrorArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let client = super::repo_support::client(offline, 120)?;
    // A registry target: the mirror is made in a staging directory of the cache (kept, so
    // a re-run copies only what is new), then pushed.
    let registry = args
        .to
        .to_str()
        .filter(|to| chartkit_oci::is_oci(to))
        .map(str::to_owned);
    let to = match &registry {
        Some(destination) => {
            let key = destination.replace([':', '/'], "_");
            client.paths.cache_home.join("mirror-v1").join(key)
        }
        None => args.to.clone(),
    };
    // A URL keeps its slashes; otherwise `REPO/NAME` names one chart.
    let (repo, chart) = if args.source.contains("://") {
        (args.source.clone(), None)
    } else {
        match args.source.split_once('/') {
            Some((repo, chart)) => (repo.to_owned(), Some(chart.to_owned())),
            None => (args.source.clone(), None),
        }
    };
    let options = MirrorOptions {
        repo,
        chart,
        versions: args.versions,
        with_dependencies: args.with_dependencies,
        to: to.clone(),
        load: super::load_options()?,
        registry: super::repo_support::access(&args.access),
    };
    let report = mirror(&client, &options, &mut |line| {
        let _ = outln!("{line}");
    })?;
    for warning in &report.warnings {
        crate::log::warn(warning);
    }
    if let Some(destination) = &registry {
        let access = super::repo_support::access(&args.access);
        let pushed = chartkit_dependency::mirror::push_to_registry(
            &client,
            &to,
            destination,
            &access,
            &super::load_options()?,
            &mut |line| {
                let _ = outln!("{line}");
            },
        )?;
        outln!(
            "Mirrored into {destination}: {} chart version(s) pushed, {} new package(s) fetched",
            pushed.len(),
            report.copied.len()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "Mirrored into {}: {} new package(s), {} provenance file(s), {} already present",
        args.to.display(),
        report.copied.len(),
        report.provenance.len(),
        report.present
    )?;
    Ok(ExitCode::SUCCESS)
}
