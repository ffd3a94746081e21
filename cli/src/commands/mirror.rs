use std::process::ExitCode;

use chartkit_dependency::mirror::{MirrorOptions, mirror};

use crate::cli::MirrorArgs;
use crate::output::outln;

/// `chartkit mirror REPO[/NAME] --to DIR`.
pub fn run(args: MirrorArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let client = super::repo_support::client(offline, 120)?;
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
        to: args.to.clone(),
        load: super::load_options()?,
    };
    let report = mirror(&client, &options, &mut |line| {
        let _ = outln!("{line}");
    })?;
    for warning in &report.warnings {
        crate::log::warn(warning);
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
