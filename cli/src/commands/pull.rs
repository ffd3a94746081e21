use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chartkit_repo_client::{ChartSource, Content, LocateError, LocateOptions};

use super::chart_source::locate_error;
use super::repo_support::{access, client};
use crate::cli::PullArgs;
use crate::error::Context;
use crate::output::out;

/// `helm pull`: resolve the version with Helm's rules, take the package from the
/// content-addressed cache or download it, check it against the index digest, verify
/// it if asked, and only then write it (or unpack it) where the user asked.
pub fn run(args: PullArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let source = ChartSource::remote(&args.chart, args.repo.as_deref()).map_err(locate_error)?;
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
    let located = source
        .locate(Some(&client), &options)
        .map_err(|error| match error {
            LocateError::Verify { file_name, error } => crate::error::Error::new(*error).context(
                format!("{file_name} failed verification; nothing was written"),
            ),
            error => locate_error(error),
        })?;
    drop(client);
    for warning in &located.warnings {
        crate::log::line(warning);
    }
    let Content::Package { bytes, file_name } = &located.content else {
        unreachable!("a repository reference is always located as a package")
    };
    let (package, file_name, prov) = (bytes, file_name.clone(), located.provenance.clone());
    let verification = located.verification;
    if args.untar {
        // Joined as Go's filepath.Join cleans it: `-d out` with the default `.` is `out`.
        let dir = super::go_clean(&args.destination.join(&args.untardir));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
        chartkit_chart::archive::unpack(package, &dir, &super::limits()?)
            .with_context(|| format!("failed to untar {file_name} into `{}`", dir.display()))?;
    } else {
        std::fs::create_dir_all(&args.destination)
            .with_context(|| format!("cannot create `{}`", args.destination.display()))?;
        let target = args.destination.join(&file_name);
        let mut files: Vec<(PathBuf, &[u8])> = vec![(target.clone(), package)];
        if let Some(prov) = &prov {
            files.push((prov_path(&target), prov));
        }
        chartkit_durable::write_all(&files, chartkit_durable::Options::default())?;
    }
    if let Some(verification) = verification {
        out!("{verification}")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn prov_path(package: &Path) -> PathBuf {
    let mut path = package.as_os_str().to_owned();
    path.push(".prov");
    PathBuf::from(path)
}
