use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chartkit_repo_client::{ChartRef, Resolved};

use super::repo_support::{apply_access, client, client_error};
use crate::cli::PullArgs;
use crate::error::Context;
use crate::output::{errln, out};

/// `helm pull`: resolve the version with Helm's rules, take the package from the
/// content-addressed cache or download it, check it against the index digest, verify
/// it if asked, and only then write it (or unpack it) where the user asked.
pub fn run(args: PullArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let client = client(offline, args.timeout)?;
    let reference = ChartRef::parse(&args.chart, args.repo.as_deref()).map_err(client_error)?;
    let (mut entry, refresh) = client.entry_for(&reference).map_err(client_error)?;
    apply_access(&mut entry, &args.access);
    let resolved: Resolved = match &reference {
        ChartRef::Direct { url } => client.direct(url, entry),
        _ => {
            let loaded = client.load_index(&entry, refresh).map_err(client_error)?;
            for warning in &loaded.warnings {
                errln!("warning: {warning}");
            }
            client
                .resolve_in(&loaded, &reference, args.version.as_deref(), args.devel)
                .map_err(client_error)?
        }
    };
    let package = client.fetch_package(&resolved).map_err(client_error)?;
    let file_name = resolved.file_name();
    let prov = if args.prov || args.verify {
        Some(client.fetch_prov(&resolved).map_err(client_error)?)
    } else {
        None
    };
    let mut verification = None;
    if args.verify {
        let (_, keyring) = super::keyring_or_default(args.keyring.as_deref(), "gpg --export")?;
        let prov_text = String::from_utf8_lossy(prov.as_deref().unwrap_or_default()).into_owned();
        verification = Some(
            chartkit_signing::verify(&prov_text, &package.bytes, &file_name, &keyring)
                .with_context(|| format!("{file_name} failed verification; nothing was written"))?,
        );
    }
    if args.untar {
        // Joined as Go's filepath.Join cleans it: `-d out` with the default `.` is `out`.
        let dir = super::go_clean(&args.destination.join(&args.untardir));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
        chartkit_chart::archive::unpack(&package.bytes, &dir, &super::limits()?)
            .with_context(|| format!("failed to untar {file_name} into `{}`", dir.display()))?;
    } else {
        std::fs::create_dir_all(&args.destination)
            .with_context(|| format!("cannot create `{}`", args.destination.display()))?;
        let target = args.destination.join(&file_name);
        let mut files: Vec<(PathBuf, &[u8])> = vec![(target.clone(), &package.bytes)];
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
