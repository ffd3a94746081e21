use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use chartkit_repo_client::{RepoEntry, RepoFile};

use super::repo_support::{apply_access, client, client_error};
use crate::cli::RepoAddArgs;
use crate::output::outln;
use crate::report::with_hint;

/// `helm repo add`: the index is downloaded and checked before the repository is
/// recorded; a name already recorded with the same settings is left alone, with other
/// settings it needs --force-update.
pub fn run(args: RepoAddArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let client = client(offline, args.timeout)?;
    let mut entry = RepoEntry {
        name: args.name.clone(),
        url: args.url.clone(),
        ..RepoEntry::default()
    };
    apply_access(&mut entry, &args.access);
    if !entry.username.is_empty() && entry.password.is_empty() {
        entry.password = read_password(args.password_stdin)?;
    }
    if args.name.contains('/') {
        return Err(crate::error::err!(
            "repository name ({}) contains '/', please specify a different name without '/'",
            args.name
        ));
    }
    if !args.force_update
        && let Some(existing) = client.repos.get(&args.name)
    {
        if *existing != entry {
            return Err(with_hint(
                crate::error::err!(
                    "repository name ({}) already exists, please specify a different name",
                    args.name
                ),
                format!(
                    "it is {} now; pass --force-update to replace it",
                    existing.url
                ),
            ));
        }
        outln!(
            "{:?} already exists with the same configuration, skipping",
            args.name
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let update = client.update_index(&entry).map_err(|e| match e {
        // helm refuses the scheme before it tries the repository.
        e @ chartkit_repo_client::ClientError::NoProtocolHandler { .. } => client_error(e),
        e => client_error(e).context(format!(
            "looks like {:?} is not a valid chart repository or cannot be reached",
            args.url
        )),
    })?;
    for warning in update.warnings() {
        crate::log::warn(warning);
    }
    // Read again under helm's lock, so a repository another process (chartkit or
    // helm) added meanwhile is kept.
    let file = client.paths.repositories_file();
    let _lock = RepoFile::lock(&file).map_err(client_error)?;
    let mut repos = RepoFile::load(&file).map_err(client_error)?;
    repos.update(entry);
    repos.save(&file).map_err(client_error)?;
    outln!("{:?} has been added to your repositories", args.name)?;
    Ok(ExitCode::SUCCESS)
}

/// The password from stdin (`--password-stdin`, or stdin that is not a terminal), its
/// line ending removed as helm removes it.
fn read_password(from_stdin: bool) -> crate::error::Result<String> {
    let stdin = std::io::stdin();
    if !from_stdin && stdin.is_terminal() {
        return Err(with_hint(
            crate::error::err!("--username was given without a password"),
            "pass --password, or --password-stdin with the password on stdin",
        ));
    }
    let mut text = String::new();
    stdin
        .lock()
        .read_to_string(&mut text)
        .map_err(|e| crate::error::err!("cannot read the password from stdin: {e}"))?;
    let text = text.strip_suffix('\n').unwrap_or(&text);
    Ok(text.strip_suffix('\r').unwrap_or(text).to_owned())
}
