//! `registry login` and `registry logout`, in helm's words and helm's registry config.

use std::io::Read;
use std::process::ExitCode;

use chartkit_oci::Credentials;
use chartkit_repo_client::Access;

use super::repo_support::{client, client_error};
use crate::cli::{RegistryCommand, RegistryLoginArgs};
use crate::output::errln;
use crate::report::with_hint;

pub fn run(command: RegistryCommand) -> crate::error::Result<ExitCode> {
    match command {
        RegistryCommand::Login(args) => login(args),
        RegistryCommand::Logout(args) => {
            let host = host(&args.host);
            let client = client(true, 30)?;
            errln!("Removing login credentials for {host}");
            client.registry_logout(&host).map_err(client_error)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn login(args: RegistryLoginArgs) -> crate::error::Result<ExitCode> {
    let host = host(&args.host);
    let missing = |what: &str| {
        with_hint(
            crate::error::err!("registry login needs a {what} for {host}"),
            "give -u USERNAME and the password with --password-stdin (or -p)",
        )
    };
    let username = args.username.clone().ok_or_else(|| missing("username"))?;
    let password = if args.password_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| crate::error::err!("cannot read the password from stdin: {e}"))?;
        // As helm: the line break a shell's `echo` adds is not part of the password.
        text.trim_end_matches(['\n', '\r']).to_owned()
    } else if let Some(password) = &args.password {
        errln!("warning: using --password via the CLI is insecure. Use --password-stdin");
        password.clone()
    } else {
        return Err(missing("password"));
    };
    let access = Access {
        ca_file: args.ca_file.clone(),
        cert_file: args.cert_file.clone(),
        key_file: args.key_file.clone(),
        insecure_skip_tls_verify: args.insecure,
        plain_http: args.plain_http,
        ..Access::default()
    };
    let client = client(false, 30)?;
    client
        .registry_login(&host, Credentials { username, password }, &access)
        .map_err(client_error)?;
    errln!("Login Succeeded");
    Ok(ExitCode::SUCCESS)
}

/// The registry host: `oci://` and a trailing `/` are let through.
fn host(text: &str) -> String {
    let text = text.trim();
    let text = if chartkit_oci::is_oci(text) {
        &text[chartkit_oci::reference::SCHEME.len()..]
    } else {
        text
    };
    text.trim_end_matches('/').to_owned()
}
