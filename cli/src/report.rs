//! Error output: `error: <what happened>`, its causes, and a hint when there is a next step.

use std::process::ExitCode;

use crate::error::Error;

/// The error, with `hint` printed on its own line after its message.
pub fn with_hint(error: impl Into<Error>, hint: impl Into<String>) -> Error {
    error.into().with_hint(hint)
}

/// Prints an error chain to stderr and returns the failure exit code.
pub fn error(error: &Error) -> ExitCode {
    let mut message = String::new();
    for text in error.messages() {
        // Library errors already print their source; do not repeat it.
        if message.ends_with(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    eprintln!("error: {message}");
    if let Some(hint) = error.hint() {
        eprintln!("hint: {hint}");
    }
    ExitCode::FAILURE
}
