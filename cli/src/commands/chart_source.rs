//! The chart argument of `show`, `template`, `install`, `upgrade` and `diff upgrade`,
//! turned into a loaded chart by the repository client's one resolver
//! (`chartkit_repo_client::ChartSource`); this file only adds the flags, the keyring,
//! `--dependency-update` and the hints.

use chartkit_repo_client::{ChartSource, LocateError, LocateOptions};

use super::repo_support::{access, client, client_error};
use crate::cli::ChartSourceArgs;
use crate::error::{Error, Result};
use crate::output::errln;

/// Loads the chart `argument` names: a directory or package on disk, or a repository
/// chart chosen with Helm's version rules and fetched through chartkit's cache. With
/// `--verify`, the package is used only once its provenance file checks out.
/// `dependency_update` fetches a directory's missing dependencies first, as helm's
/// `--dependency-update` does; `check_api_version` refuses apiVersions helm would not
/// render.
pub fn load(
    argument: &str,
    source: &ChartSourceArgs,
    dependency_update: bool,
    check_api_version: bool,
    offline: bool,
) -> Result<chartkit_chart::Chart> {
    let chart_source =
        ChartSource::parse(argument, source.repo.as_deref()).map_err(locate_error)?;
    if let ChartSource::Local(path) = &chart_source
        && dependency_update
        && path.is_dir()
        && super::dependency::missing_dependencies(path)?
    {
        // helm updates only when something is missing, and prints the update's progress.
        let client = client(offline, 120)?;
        super::dependency::update_with(&client, path, &access(&source.access), &mut |line| {
            let _ = crate::output::outln!("{line}");
        })?;
    }
    let keyring = match source.verify {
        true => Some(super::keyring_or_default(source.keyring.as_deref(), "gpg --export")?.1),
        false => None,
    };
    // The client (and any tunnel it opened) lives only while the chart is found.
    let client = match chart_source.needs_client() {
        true => Some(client(offline, 120)?),
        false => None,
    };
    let options = LocateOptions {
        version: source.version.as_deref(),
        devel: source.devel,
        access: access(&source.access),
        verify: keyring.as_ref(),
        provenance: false,
    };
    let located = chart_source
        .locate(client.as_ref(), &options)
        .map_err(locate_error)?;
    drop(client);
    report_pulled(&located);
    let load_options = chartkit_chart::LoadOptions {
        check_api_version,
        ..super::load_options()?
    };
    let chart = located.load(&load_options).map_err(locate_error)?;
    for warning in &chart.warnings {
        crate::log::line(warning);
    }
    Ok(chart)
}

/// What helm says on stderr about a chart found: an OCI pull's reference and digest,
/// and any warning.
pub fn report_pulled(located: &chartkit_repo_client::Located) {
    if let Some((reference, digest)) = &located.pulled {
        errln!("Pulled: {reference}");
        errln!("Digest: {digest}");
        if reference.contains('_') {
            errln!("{reference} contains an underscore.");
            errln!("{}", chartkit_oci::reference::UNDERSCORE_MESSAGE);
        }
    }
    for warning in &located.warnings {
        crate::log::line(warning);
    }
}

/// The resolver's error, with helm's words for a failed verification and the next step.
pub fn locate_error(error: LocateError) -> Error {
    const REFERENCES: &str = "a chart in a repository is REPO/NAME (`chartkit repo list` shows the names), a package URL, or NAME with --repo URL";
    match error {
        LocateError::Client(error) => client_error(*error),
        LocateError::Verify { error, .. } => super::verify::in_helm_words(*error),
        error @ LocateError::Provenance { .. } => Error::new(error)
            .with_hint("the chart is not signed, or its repository does not serve its .prov"),
        error @ (LocateError::NoSuchPath { .. } | LocateError::NotAReference { .. }) => {
            Error::new(error).with_hint(format!("check the path; {REFERENCES}"))
        }
        error @ LocateError::UnpackedNotVerifiable { .. } => Error::new(error)
            .with_hint("package and sign it (chartkit package --sign), then use the package"),
        error => Error::new(error),
    }
}
