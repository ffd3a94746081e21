//! Errors with Go's wording, plus Helm's rewording of them.

use std::fmt;

/// A template that failed to parse. Displays as Go does:
/// `template: NAME:LINE: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("template: {name}:{line}: {message}")]
pub struct ParseError {
    pub name: String,
    pub line: usize,
    pub message: String,
}

impl ParseError {
    /// Helm's `cleanupParseError`: `parse error at (NAME:LINE): MESSAGE`, where only the
    /// text after the last `": "` of Go's message is kept.
    pub fn helm_message(&self) -> String {
        let full = self.to_string();
        let last = full.rsplit(": ").next().unwrap_or(&full);
        format!("parse error at ({}:{}): {}", self.name, self.line, last)
    }
}

/// A failure while executing a template.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecError {
    /// The name of the template being executed (`executing "NAME"`).
    pub template: String,
    /// `file:line:col` of the node that failed, when known.
    pub location: Option<String>,
    /// The failing node as Go prints it (`at <.Values.x>`).
    pub context: Option<String>,
    /// What went wrong, including any nested error's full text.
    pub message: String,
    /// The template error a function (`include`, `tpl`) failed with, if any.
    pub cause: Option<Box<Error>>,
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.location, &self.context) {
            (Some(location), Some(context)) => write!(
                f,
                "template: {location}: executing {} at <{context}>: {}",
                crate::print::quote(&self.template),
                self.message
            ),
            _ => write!(f, "template: {}: {}", self.template, self.message),
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error("{0}")]
    Exec(ExecError),
    /// `ExecuteTemplate` with an unknown name.
    #[error("template: no template {} associated with template {}", crate::print::quote(.name), crate::print::quote(.set))]
    NoTemplate { name: String, set: String },
}

const WARN_START: &str = "HELM_ERR_START";
const WARN_END: &str = "HELM_ERR_END";

/// Wraps a `fail`/`required` message the way Helm does, so that Helm's error cleanup can
/// find it again however deeply it was nested.
pub(crate) fn helm_warning(message: &str) -> String {
    format!("{WARN_START}{message}{WARN_END}")
}

impl Error {
    /// Whether the render stopped at its memory limit ([`crate::MemoryBudget`]), here or
    /// in a template it called, so that callers can say how to raise the limit.
    pub fn is_memory_limit(&self) -> bool {
        self.to_string().contains(crate::MEMORY_LIMIT_EXCEEDED)
    }

    /// The message `helm template` 4.x prints for this error (after `Error: `):
    ///
    /// - parse errors: `parse error at (FILE:LINE): MESSAGE` (Helm's `cleanupParseError`);
    /// - `fail` and `required`: `execution error at (FILE:LINE:COL): MESSAGE`, with the
    ///   outermost location (Helm's `cleanupExecError`);
    /// - other execution errors: Helm 4's multi-line trace, one block per template
    ///   (`FILE:LINE:COL`, `executing "NAME" at <NODE>:`, the message), following
    ///   `include` calls inward. When the innermost failure is a function's error
    ///   (`error calling ...`), Helm 4 prints Go's one-line text instead.
    pub fn helm_message(&self) -> String {
        match self {
            Error::Parse(p) => p.helm_message(),
            Error::Exec(e) => {
                let full = e.to_string();
                let mut tokens = full.splitn(3, ": ");
                if let (Some(_), Some(location), Some(rest)) =
                    (tokens.next(), tokens.next(), tokens.next())
                    && let Some(start) = rest.find(WARN_START)
                {
                    let body = &rest[start + WARN_START.len()..];
                    if let Some(end) = body.rfind(WARN_END) {
                        return format!("execution error at ({location}): {}", &body[..end]);
                    }
                }
                trace(self).unwrap_or(full)
            }
            Error::NoTemplate { .. } => self.to_string(),
        }
    }
}

/// Helm 4's multi-line rendering of a chain of template errors, or `None` when it would
/// fall back to Go's one-line text.
fn trace(err: &Error) -> Option<String> {
    let mut out = String::new();
    let mut current = err;
    loop {
        match current {
            Error::Exec(e) => {
                let (location, context) = (e.location.as_ref()?, e.context.as_ref()?);
                out.push_str(&format!(
                    "{location}\n  executing {} at <{context}>:\n    ",
                    crate::print::quote(&e.template)
                ));
                match (&e.cause, e.message.strip_prefix("error calling include: ")) {
                    (Some(cause), Some(_)) => {
                        out.push_str("error calling include:\n");
                        current = cause;
                    }
                    _ => {
                        // Helm 4 keeps Go's text when a function (other than include)
                        // failed.
                        if e.message.starts_with("error calling ") {
                            return None;
                        }
                        out.push_str(&e.message);
                        return Some(out);
                    }
                }
            }
            Error::NoTemplate { .. } => {
                out.push_str(&current.to_string());
                return Some(out);
            }
            Error::Parse(_) => return None,
        }
    }
}
