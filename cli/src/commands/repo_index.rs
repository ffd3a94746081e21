use std::process::ExitCode;

use crate::error::Context;
use chartkit_repo::{IndexDirOptions, index_directory};
use sha2::{Digest, Sha256};

use crate::cli::RepoIndexArgs;
use crate::env;

pub fn run(args: RepoIndexArgs) -> crate::error::Result<ExitCode> {
    let dir = std::fs::canonicalize(&args.dir)
        .with_context(|| format!("cannot read the directory `{}`", args.dir.display()))?;
    // One digest cache per repository directory, so runs over different directories never
    // share (or evict) each other's records.
    let digest_cache = env::cache_home().map(|home| {
        let key = hex::encode(Sha256::digest(dir.as_os_str().as_encoded_bytes()));
        home.join("repo-index-v2").join(&key[..32])
    });
    let options = IndexDirOptions {
        url: args.url,
        merge: args.merge,
        json: args.json,
        digest_cache,
    };
    let report = index_directory(&dir, &options)
        .with_context(|| format!("cannot index `{}`", args.dir.display()))?;
    for warning in &report.warnings {
        crate::log::warn(warning);
    }
    Ok(ExitCode::SUCCESS)
}
