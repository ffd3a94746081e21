use std::process::ExitCode;

use chartkit_repo_client::RepoFile;

use super::repo_support::{client_error, paths};
use crate::cli::RepoImportHelmArgs;
use crate::env;
use crate::output::outln;
use crate::report::with_hint;

/// Takes over the repositories of Helm's repositories.yaml that chartkit does not have,
/// for a chartkit kept apart from helm (CHARTKIT_CONFIG_HOME or --repository-config);
/// otherwise chartkit reads Helm's list itself and there is nothing to do. Indexes are
/// not downloaded here; `chartkit repo update` does that, all at once.
pub fn run(args: RepoImportHelmArgs) -> crate::error::Result<ExitCode> {
    let helm_file = env::helm_repository_config().ok_or_else(|| {
        with_hint(
            crate::error::err!("cannot locate Helm's repositories.yaml"),
            format!("set {} to its path", env::HELM_REPOSITORY_CONFIG),
        )
    })?;
    if !helm_file.exists() {
        return Err(with_hint(
            crate::error::err!(
                "Helm's repository list `{}` does not exist",
                helm_file.display()
            ),
            format!(
                "set {} to its path if it is elsewhere",
                env::HELM_REPOSITORY_CONFIG
            ),
        ));
    }
    let paths = paths()?;
    let file = paths.repositories_file();
    if same_file(&file, &helm_file) {
        outln!(
            "chartkit already uses Helm's repository list `{}`: nothing to import",
            helm_file.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let helm = RepoFile::load(&helm_file).map_err(client_error)?;
    let _lock = RepoFile::lock(&file).map_err(client_error)?;
    let mut ours = RepoFile::load(&file).map_err(client_error)?;
    let mut added = 0;
    for entry in helm.repositories {
        match ours.get(&entry.name) {
            Some(existing) if *existing == entry => {
                outln!(
                    "{:?} already exists with the same configuration, skipping",
                    entry.name
                )?;
                continue;
            }
            Some(existing) if !args.force_update => {
                crate::log::warn(&format!(
                    "{:?} is {} in chartkit and {} in Helm; kept chartkit's (--force-update takes Helm's)",
                    entry.name, existing.url, entry.url
                ));
                continue;
            }
            _ => {}
        }
        outln!("{:?} has been added to your repositories", entry.name)?;
        ours.update(entry);
        added += 1;
    }
    if added > 0 {
        ours.save(&file).map_err(client_error)?;
        outln!("Run \"chartkit repo update\" to download their indexes.")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether two paths name one file (the same path, or links to one file).
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}
