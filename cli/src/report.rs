//! Error output: `error: <what happened>`, its causes, and a hint when there is a next step.

use std::process::ExitCode;

/// A next step for the user, attached to an error with `.context(Hint(..))`-style wrapping.
#[derive(Debug)]
pub struct Hint(pub String);

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
        if i > 0 && !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&cause.to_string());
    }
    eprintln!("error: {message}");
    for hint in hints {
        eprintln!("hint: {hint}");
    }
    ExitCode::FAILURE
}
