use std::process::ExitCode;

use crate::output::outln;

use crate::error::Context;
use chartkit_chart::{PackageOptions, Packaged, package_all};
use chartkit_signing::{
    KeyError, Keyring, Sha256Digest, check_signing_key, provenance_file_name, sign_chart_digest,
};

use crate::cli::PackageArgs;
use crate::env;
use crate::report::with_hint;

/// What `--sign` needs, gathered before packaging so a bad key fails before any archive
/// is written.
struct Signer {
    keyring: Keyring,
    key: String,
    passphrase: Option<String>,
}

pub fn run(args: PackageArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let signer = signer(&args)?;
    let options = PackageOptions {
        version: args.version,
        app_version: args.app_version,
        destination: args.destination,
        mtime: env::number(env::SOURCE_DATE_EPOCH)?.unwrap_or(0),
        load: super::load_options()?,
    };
    for path in &args.paths {
        if !path.is_dir() {
            crate::error::bail!(
                "`{}` is not a chart directory; `chartkit package` packs directories",
                path.display()
            );
        }
    }
    if args.dependency_update {
        for path in &args.paths {
            super::dependency::update_before(path, false, &Default::default(), offline)?;
        }
    }
    let (packaged, failure) = package_all(&args.paths, &options);
    for done in &packaged {
        for warning in &done.chart.warnings {
            crate::log::line(warning);
        }
        if let Some(signer) = &signer {
            sign(signer, done)?;
        }
        outln!(
            "Successfully packaged chart and saved it to: {}",
            done.path.display()
        )?;
    }
    if let Some((path, error)) = failure {
        return Err(
            crate::error::Error::new(error).context(format!("cannot package `{}`", path.display()))
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn signer(args: &PackageArgs) -> crate::error::Result<Option<Signer>> {
    if !args.sign {
        return Ok(None);
    }
    // clap enforces both with --sign; the messages cover library callers of run().
    let key = args
        .key
        .clone()
        .context("--key is required for signing a package")?;
    let (keyring_path, keyring) =
        super::keyring_or_default(args.keyring.as_deref(), "gpg --export-secret-keys")?;
    let passphrase = args
        .passphrase_file
        .as_ref()
        .map(|p| super::read_passphrase(p))
        .transpose()?;
    // A key that cannot sign fails here, before any archive is written.
    keyring
        .find(&key)
        .and_then(|k| check_signing_key(k, passphrase.as_deref()))
        .map_err(key_error)
        .with_context(|| format!("cannot sign with keyring `{}`", keyring_path.display()))?;
    Ok(Some(Signer {
        keyring,
        key,
        passphrase,
    }))
}

/// Writes `NAME-VERSION.tgz.prov` beside the package.
fn sign(signer: &Signer, packaged: &Packaged) -> crate::error::Result<()> {
    let key = signer.keyring.find(&signer.key)?;
    let digest =
        Sha256Digest::from_hex(&packaged.sha256).context("package digest is not sha256 hex")?;
    let file_name = packaged
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prov = sign_chart_digest(
        &packaged.chart.metadata.to_yaml(),
        &file_name,
        &digest,
        key,
        signer.passphrase.as_deref(),
    )
    .map_err(key_error)
    .with_context(|| format!("cannot sign `{}`", packaged.path.display()))?;
    let prov_path = packaged
        .path
        .with_file_name(provenance_file_name(&file_name));
    chartkit_durable::write(&prov_path, prov.as_bytes())?;
    Ok(())
}

/// Adds the next step for key errors that have an obvious one.
fn key_error(error: KeyError) -> crate::error::Error {
    let hint = match error {
        KeyError::PassphraseRequired { .. } => {
            "pass --passphrase-file FILE (or `-` to read it from stdin)"
        }
        KeyError::WrongPassphrase { .. } => "check the passphrase file's first line",
        KeyError::NoSecretKey { .. } => {
            "--keyring must hold the secret key, e.g. from `gpg --export-secret-keys`"
        }
        KeyError::NotFound { .. } | KeyError::Ambiguous { .. } => {
            "list the keys with `chartkit key list --keyring KEYRING`"
        }
        _ => return crate::error::Error::new(error),
    };
    with_hint(error, hint)
}
