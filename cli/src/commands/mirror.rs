use std::process::ExitCode;

use chartkit_dependency::mirror::{MirrorError, MirrorOptions, MirrorSource, MirrorTarget, mirror};

use crate::cli::MirrorArgs;
use crate::output::{errln, outln};

/// `chartkit mirror SOURCE --to DIR|oci://HOST/PATH`.
pub fn run(args: MirrorArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let client = super::repo_support::client(offline, 120)?;
    let to = MirrorTarget::parse(&args.to);
    let options = MirrorOptions {
        source: MirrorSource::parse(&args.source).map_err(mirror_error)?,
        versions: args.versions,
        with_dependencies: args.with_dependencies,
        to: to.clone(),
        access: super::repo_support::access(&args.access),
        load: super::load_options()?,
    };
    let report = mirror(&client, &options, &mut |line| {
        let _ = outln!("{line}");
    })
    .map_err(mirror_error)?;
    for warning in &report.warnings {
        errln!("warning: {warning}");
    }
    let what = match to {
        MirrorTarget::Directory(_) => "package(s)",
        MirrorTarget::Registry(_) => "chart(s)",
    };
    outln!(
        "Mirrored into {to}: {} new {what}, {} provenance file(s), {} already present",
        report.copied.len(),
        report.provenance.len(),
        report.present
    )?;
    Ok(ExitCode::SUCCESS)
}

/// A mirror error, with the repository client's hints for its errors.
fn mirror_error(error: MirrorError) -> crate::error::Error {
    match error {
        MirrorError::Client(error) => super::repo_support::client_error(*error),
        error => crate::error::Error::new(error),
    }
}
