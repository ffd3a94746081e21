//! Error output: `Error: <what happened>`, its causes, and a hint when there is a next step.
//! The prefix and the exit status (1) are helm's, so scripts written for helm keep working.

use std::process::ExitCode;

use crate::error::Error;
use crate::output::errln;

/// The error, with `hint` printed on its own line after its message.
pub fn with_hint(error: impl Into<Error>, hint: impl Into<String>) -> Error {
    error.into().with_hint(hint)
}

/// Prints an error chain to stderr and returns the failure exit code. An error that is
/// only a closed pipe ends the process as a broken pipe does elsewhere (quietly).
pub fn error(error: &Error) -> ExitCode {
    if error.is_broken_pipe() {
        crate::output::broken_pipe();
    }
    errln!("Error: {}", chain(error.messages()));
    if let Some(hint) = error
        .hint()
        .map(str::to_string)
        .or_else(|| error.kube_hint())
    {
        errln!("hint: {hint}");
    }
    ExitCode::FAILURE
}

/// Prints what clap has to say about the command line: help and the version to stdout
/// (exit 0; a command group given without a command prints its help, as helm does), and
/// usage errors to stderr with helm's `Error:` prefix and exit status 1, where clap would
/// use `error:` and 2.
pub fn usage(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let text = error.render().to_string();
    match error.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = crate::output::stdout(format_args!("{text}"));
            ExitCode::SUCCESS
        }
        _ => {
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            crate::output::stderr(format_args!("Error: {text}"));
            ExitCode::FAILURE
        }
    }
}

/// Joins an error's messages, outermost first, with `: `, leaving out a cause whose text
/// an outer message already states (library errors often print their source).
pub fn chain(messages: impl IntoIterator<Item = String>) -> String {
    let mut joined = String::new();
    for text in messages {
        if text.is_empty() || joined.contains(&text) {
            continue;
        }
        if !joined.is_empty() {
            joined.push_str(": ");
        }
        joined.push_str(&text);
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::chain;

    #[test]
    fn a_cause_already_stated_is_not_repeated() {
        let messages = [
            "cannot load the chart at `x`",
            "`x/Chart.yaml`: validation: chart.metadata.version \"y\" is invalid\nhint: use a semantic version",
            "validation: chart.metadata.version \"y\" is invalid",
        ];
        assert_eq!(
            chain(messages.map(String::from)),
            "cannot load the chart at `x`: `x/Chart.yaml`: validation: chart.metadata.version \"y\" is invalid\nhint: use a semantic version"
        );
        assert_eq!(
            chain(["cannot read `a`", "No such file"].map(String::from)),
            "cannot read `a`: No such file"
        );
    }
}
