//! `registry login` and `registry logout`, in helm's words and helm's registry config.

use std::io::Read;
use std::process::ExitCode;

use chartkit_oci::Credentials;
use chartkit_repo_client::Access;

use super::repo_support::{client, client_error};
use crate::cli::{RegistryCommand, RegistryLoginArgs};
use crate::output::{errln, out, outln};
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
    let (username, password) = if args.password_stdin {
        let username = args.username.clone().ok_or_else(|| missing("username"))?;
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| crate::error::err!("cannot read the password from stdin: {e}"))?;
        // As helm: the line break a shell's `echo` adds is not part of the password.
        (username, text.trim_end_matches(['\n', '\r']).to_owned())
    } else if let Some(password) = &args.password {
        let username = args.username.clone().ok_or_else(|| missing("username"))?;
        errln!("warning: using --password via the CLI is insecure. Use --password-stdin");
        (username, password.clone())
    } else {
        prompt_credentials(args.username.clone())?
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

/// What helm asks for when neither a password nor --password-stdin is given: the
/// username (unless -u gave it), then the password, or an identity token when the
/// username was left empty, read without echo on a terminal.
fn prompt_credentials(username: Option<String>) -> crate::error::Result<(String, String)> {
    let username = match username {
        Some(username) => username,
        None => read_line("Username: ", false)?.trim().to_owned(),
    };
    let (prompt, required) = match username.is_empty() {
        true => ("Token: ", "token required"),
        false => ("Password: ", "password required"),
    };
    let password = read_line(prompt, true)?;
    if password.is_empty() {
        crate::error::bail!("{required}");
    }
    Ok((username, password))
}

/// Prints `prompt` and reads a line from stdin; `silent`: with echo off while it is
/// typed (when stdin is a terminal), and a line break after, as helm's `readLine`.
fn read_line(prompt: &str, silent: bool) -> crate::error::Result<String> {
    out!("{prompt}")?;
    let stdin = std::io::stdin();
    let echo_off = silent.then(|| EchoOff::new(&stdin)).flatten();
    let mut line = String::new();
    let read = stdin.read_line(&mut line);
    drop(echo_off);
    read.map_err(|e| crate::error::err!("cannot read the answer from stdin: {e}"))?;
    if line.is_empty() {
        crate::error::bail!("EOF");
    }
    if silent {
        outln!()?;
    }
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}

/// The terminal's echo turned off while this lives (nothing when stdin is no terminal).
struct EchoOff {
    #[cfg(unix)]
    saved: rustix::termios::Termios,
}

impl EchoOff {
    #[cfg(unix)]
    fn new(stdin: &std::io::Stdin) -> Option<EchoOff> {
        use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
        let saved = tcgetattr(stdin).ok()?;
        let mut quiet = saved.clone();
        quiet.local_modes.remove(LocalModes::ECHO);
        tcsetattr(stdin, OptionalActions::Flush, &quiet).ok()?;
        Some(EchoOff { saved })
    }

    #[cfg(not(unix))]
    fn new(_stdin: &std::io::Stdin) -> Option<EchoOff> {
        None
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            let stdin = std::io::stdin();
            let _ = rustix::termios::tcsetattr(
                &stdin,
                rustix::termios::OptionalActions::Flush,
                &self.saved,
            );
        }
    }
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
