use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chartkit_repo_client::{ChartSource, Client, Content, LocateError, LocateOptions, Located};

use super::chart_source::locate_error;
use super::in_order::{CONCURRENCY, run_in_order};
use super::repo_support::{access, client};
use crate::cli::PullArgs;
use crate::error::Context;
use crate::output::out;

/// `helm pull`: resolve the version with Helm's rules, take the package from the
/// content-addressed cache or download it, check it against the index digest, verify
/// it if asked, and only then write it (or unpack it) where the user asked.
///
/// Several charts (`pull A B C`, the same flags for each, as helm's loop takes them) are
/// fetched concurrently and reported in argument order with helm's lines; as in helm's
/// loop, the first chart that fails ends the command and those after it are not written.
pub fn run(args: PullArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let keyring = match args.verify {
        true => Some(super::keyring_or_default(args.keyring.as_deref(), "gpg --export")?.1),
        false => None,
    };
    let client = client(offline, args.timeout)?;
    let options = LocateOptions {
        version: args.version.as_deref(),
        devel: args.devel,
        access: access(&args.access),
        verify: keyring.as_ref(),
        provenance: args.prov,
    };
    let mut written = Vec::new();
    let outcome = run_in_order(
        &args.charts,
        CONCURRENCY,
        |chart| fetch(&client, chart, &args, &options),
        |pulled| finish(pulled, &args, &mut written),
    );
    // What was pulled before a failure is kept, as helm's loop keeps it.
    chartkit_durable::commit_all(written)?;
    outcome?;
    Ok(ExitCode::SUCCESS)
}

/// A chart found, with its files written beside their targets (not yet in place).
struct Pulled {
    located: Located,
    staged: Vec<chartkit_durable::Staged>,
}

/// Finds one chart and, unless it is to be unpacked, writes its files under temporary
/// names (the wait for the disk is taken here, on the worker).
fn fetch(
    client: &Client,
    chart: &str,
    args: &PullArgs,
    options: &LocateOptions<'_>,
) -> crate::error::Result<Pulled> {
    let source = ChartSource::remote(chart, args.repo.as_deref()).map_err(locate_error)?;
    let located = source
        .locate(Some(client), options)
        .map_err(|error| match error {
            LocateError::Verify { file_name, error } => crate::error::Error::new(*error).context(
                format!("{file_name} failed verification; nothing was written"),
            ),
            error => locate_error(error),
        })?;
    let mut staged = Vec::new();
    if !args.untar {
        let Content::Package { bytes, file_name } = &located.content else {
            unreachable!("a repository reference is always located as a package")
        };
        std::fs::create_dir_all(&args.destination)
            .with_context(|| format!("cannot create `{}`", args.destination.display()))?;
        let target = args.destination.join(helm_file_name(&source, file_name));
        if let Some(prov) = &located.provenance {
            staged.push(chartkit_durable::stage(&prov_path(&target), prov)?);
        }
        staged.push(chartkit_durable::stage(&target, bytes)?);
    }
    Ok(Pulled { located, staged })
}

/// Reports one chart as helm does, and puts its files in place (or unpacks it).
fn finish(
    pulled: Pulled,
    args: &PullArgs,
    written: &mut Vec<chartkit_durable::Staged>,
) -> crate::error::Result<()> {
    let Pulled { located, staged } = pulled;
    super::chart_source::report_pulled(&located);
    if args.untar {
        let Content::Package { bytes, file_name } = &located.content else {
            unreachable!("a repository reference is always located as a package")
        };
        // Joined as Go's filepath.Join cleans it: `-d out` with the default `.` is `out`.
        let dir = super::go_clean(&args.destination.join(&args.untardir));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
        chartkit_chart::archive::unpack(bytes, &dir, &super::limits()?)
            .with_context(|| format!("failed to untar {file_name} into `{}`", dir.display()))?;
    }
    written.extend(staged);
    if let Some(verification) = &located.verification {
        out!("{verification}")?;
    }
    Ok(())
}

/// The name helm's pull gives the file: `NAME-VERSION.tgz`, except for a reference with
/// a digest, which helm 4 names after the reference's last path segment with its last
/// `:` made a `-`: `NAME@sha256-HEX.tgz`.
fn helm_file_name(source: &ChartSource, file_name: &str) -> String {
    match source {
        ChartSource::Oci(reference) if let Some(digest) = &reference.digest => {
            format!("{}@{}.tgz", reference.name(), digest.replacen(':', "-", 1))
        }
        _ => file_name.to_owned(),
    }
}

fn prov_path(package: &Path) -> PathBuf {
    let mut path = package.as_os_str().to_owned();
    path.push(".prov");
    PathBuf::from(path)
}
