//! Error output: `error: <what happened>`, its causes, and a hint when there is a next step.

use std::process::ExitCode;

/// A next step for the user. Attach one with [`with_hint`]; [`error`] prints it on its own
/// line after the message.
#[derive(Debug)]
pub struct Hint(pub String);

/// Wraps an error so that its message is printed as usual, followed by `hint: ...`.
pub fn with_hint(error: impl Into<anyhow::Error>, hint: impl Into<String>) -> anyhow::Error {
    let error = error.into();
    // The hint goes at the root of the chain, where `error` can find it by type; the
    // message (with its causes) becomes the context above it.
    anyhow::Error::new(Hint(hint.into())).context(format!("{error:#}"))
}

impl std::fmt::Display for Hint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Hint {}

/// Prints an error chain to stderr and returns the failure exit code.
pub fn error(error: &anyhow::Error) -> ExitCode {
    let mut message = String::new();
    let mut hints = Vec::new();
    for (i, cause) in error.chain().enumerate() {
        if let Some(hint) = cause.downcast_ref::<Hint>() {
            hints.push(hint.0.clone());
            continue;
        }
        let text = cause.to_string();
        // Library errors already print their source; do not repeat it.
        if message.ends_with(&text) {
            continue;
        }
        if i > 0 && !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    eprintln!("error: {message}");
    for hint in hints {
        eprintln!("hint: {hint}");
    }
    ExitCode::FAILURE
}
