//! Helm 4's colours in a release's status table: the namespace in cyan, the status green,
//! red or yellow by how the revision went. Only the table is coloured; JSON and YAML
//! never are.

use std::io::IsTerminal as _;

use chartkit_release::{Release, Status};

use crate::env;

const RESET: &str = "\x1b[0m";

/// Whether to colour, from `--color`, else HELM_COLOR: `always`, `never`, or `auto` (the
/// default) when stdout is a terminal. A non-empty NO_COLOR turns colour off whatever
/// the mode, as it does for helm.
pub fn enabled(flag: Option<&str>) -> bool {
    if env::var(env::NO_COLOR).is_some() {
        return false;
    }
    let from_env = env::var(env::HELM_COLOR).map(|v| v.to_lowercase());
    match flag.or(from_env.as_deref()) {
        Some("always") => true,
        Some("never") => false,
        _ => std::io::stdout().is_terminal(),
    }
}

/// The status text with its NAMESPACE and STATUS lines coloured as helm colours them.
pub fn status_table(text: &str, release: &Release) -> String {
    let namespace = format!("NAMESPACE: {}\n", release.namespace);
    let status = release.status();
    let status_line = format!("STATUS: {status}\n");
    let colour = match status {
        Status::Deployed => Some("\x1b[32m"),
        Status::Failed | Status::Unknown => Some("\x1b[31m"),
        Status::PendingInstall
        | Status::PendingUpgrade
        | Status::PendingRollback
        | Status::Uninstalling => Some("\x1b[33m"),
        _ => None,
    };
    let mut text = text.replacen(
        &namespace,
        &format!("NAMESPACE: \x1b[36m{}{RESET}\n", release.namespace),
        1,
    );
    if let Some(colour) = colour {
        text = text.replacen(
            &status_line,
            &format!("STATUS: {colour}{status}{RESET}\n"),
            1,
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_and_status_are_coloured_as_helm_colours_them() {
        let mut release = Release {
            namespace: "default".into(),
            ..Default::default()
        };
        release.info = Some(chartkit_release::Info {
            status: Status::Deployed,
            ..Default::default()
        });
        let text = "NAME: a\nNAMESPACE: default\nSTATUS: deployed\nREVISION: 1\n";
        assert_eq!(
            status_table(text, &release),
            "NAME: a\nNAMESPACE: \x1b[36mdefault\x1b[0m\nSTATUS: \x1b[32mdeployed\x1b[0m\nREVISION: 1\n"
        );
        // Superseded and uninstalled stay plain.
        release.info.as_mut().unwrap().status = Status::Superseded;
        let text = "NAMESPACE: default\nSTATUS: superseded\n";
        assert_eq!(
            status_table(text, &release),
            "NAMESPACE: \x1b[36mdefault\x1b[0m\nSTATUS: superseded\n"
        );
    }
}
