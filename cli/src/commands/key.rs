use std::process::ExitCode;

use crate::output::{out, outln};

use crate::error::Context;
use chartkit_signing::{
    Key, format_date, generate_key, write_public_key_file, write_public_keyring_file,
    write_secret_key_file,
};

use crate::cli::{KeyCommand, KeyGenerateArgs, KeyListArgs};
use crate::report::with_hint;

pub fn run(command: KeyCommand) -> crate::error::Result<ExitCode> {
    match command {
        KeyCommand::Generate(args) => generate(args),
        KeyCommand::List(args) => list(args),
    }
}

const SECRET_FILE: &str = "secret.asc";
const PUBLIC_FILE: &str = "public.asc";
/// Binary form for `helm verify --keyring` / `helm pull --verify --keyring`, which read
/// only binary keyrings.
const PUBLIC_KEYRING_FILE: &str = "public.gpg";

fn generate(args: KeyGenerateArgs) -> crate::error::Result<ExitCode> {
    let passphrase = match &args.passphrase_file {
        Some(path) => {
            let passphrase = super::read_passphrase(path)?;
            if passphrase.is_empty() {
                // Silently writing an unprotected key would defeat the flag's purpose.
                crate::error::bail!(
                    "the passphrase in `{}` is empty; put the passphrase on its first line, or omit --passphrase-file for an unprotected key",
                    path.display()
                );
            }
            Some(passphrase)
        }
        None => None,
    };
    let secret_path = args.output.join(SECRET_FILE);
    let public_path = args.output.join(PUBLIC_FILE);
    let keyring_path = args.output.join(PUBLIC_KEYRING_FILE);
    if secret_path.exists() {
        return Err(with_hint(
            crate::error::err!(
                "`{}` already exists; refusing to overwrite a secret key",
                secret_path.display()
            ),
            "move the existing key away or choose another directory with -o",
        ));
    }
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create directory `{}`", args.output.display()))?;
    let key = generate_key(&args.name, &args.email, passphrase.as_deref())?;
    write_secret_key_file(&secret_path, &key.secret)?;
    write_public_key_file(&public_path, &key.public)?;
    write_public_keyring_file(&keyring_path, &key.public_binary)?;
    outln!("Generated ed25519 key {}", key.fingerprint)?;
    outln!("User ID: {}", key.user_id)?;
    outln!(
        "Secret key: {}{}",
        secret_path.display(),
        if passphrase.is_some() {
            " (passphrase-protected)"
        } else {
            ""
        }
    )?;
    outln!("Public key: {}", public_path.display())?;
    outln!("Public keyring for helm: {}", keyring_path.display())?;
    Ok(ExitCode::SUCCESS)
}

fn list(args: KeyListArgs) -> crate::error::Result<ExitCode> {
    let keyring = super::read_keyring(&args.keyring)?;
    let mut out = String::new();
    for (i, key) in keyring.keys().iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&describe(key));
    }
    out!("{out}")?;
    Ok(ExitCode::SUCCESS)
}

/// A key in the layout of `gpg --list-keys`: kind, algorithm, creation date and state,
/// then the fingerprint, then the user ids.
fn describe(key: &Key) -> String {
    let kind = if key.has_secret() { "sec" } else { "pub" };
    let mut state = String::new();
    if key.is_revoked() {
        state.push_str(" [revoked]");
    }
    if let Some(expires) = key.expires() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let word = if expires <= now { "expired" } else { "expires" };
        state.push_str(&format!(" [{word}: {}]", format_date(expires)));
    }
    let mut text = format!(
        "{kind}   {} {}{state}\n      {}\n",
        key.algorithm(),
        format_date(key.created()),
        key.fingerprint()
    );
    for user_id in key.user_ids() {
        text.push_str(&format!("uid   {user_id}\n"));
    }
    text
}
