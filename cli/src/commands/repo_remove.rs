use std::process::ExitCode;

use chartkit_repo_client::RepoFile;

use super::repo_support::{client_error, paths};
use crate::cli::RepoRemoveArgs;
use crate::output::outln;

/// `helm repo remove`: each repository is removed from the list (written after each, as
/// helm does) and its cached index deleted. Packages stay in the content store, which
/// other repositories may share.
pub fn run(args: RepoRemoveArgs) -> crate::error::Result<ExitCode> {
    let paths = paths()?;
    let file = paths.repositories_file();
    let _lock = RepoFile::lock(&file).map_err(client_error)?;
    let mut repos = RepoFile::load(&file).map_err(client_error)?;
    if repos.repositories.is_empty() {
        return Err(crate::error::err!("no repositories configured"));
    }
    for name in &args.names {
        let Some(entry) = repos.get(name).cloned() else {
            return Err(crate::error::err!("no repo named {name:?} found"));
        };
        repos.remove(name);
        repos.save(&file).map_err(client_error)?;
        let files = chartkit_repo_client::IndexFiles::of(&paths.index_dir(), &entry);
        files.remove(&paths.cache_home).map_err(|(path, e)| {
            crate::error::err!("can't remove index file {}: {e}", path.display())
        })?;
        outln!("{name:?} has been removed from your repositories")?;
    }
    Ok(ExitCode::SUCCESS)
}
