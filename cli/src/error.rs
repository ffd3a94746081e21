//! The command line's error type: a typed root error with messages added around it as it
//! travels up, reported by [`crate::report::error`].
//!
//! This is what `anyhow` gives, minus one thing: `anyhow` captures a stack backtrace for
//! every error when `RUST_BACKTRACE` is set, and chartkit's errors are about the user's
//! charts and flags, where a backtrace of chartkit says nothing. Capturing one is not free:
//! in the statically linked release binary the first unwind sorts the unwind tables of
//! the whole program, 5 ms, more than rendering a small chart.

use std::fmt;

/// An error from a command, with the context it was reported in.
pub struct Error {
    root: Box<dyn std::error::Error + Send + Sync + 'static>,
    /// Messages added around the root, innermost first.
    context: Vec<String>,
    /// The next step for the user, printed on its own line after the message.
    hint: Option<String>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A root error that is only a message.
struct Message(String);

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Message {}

impl Error {
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error {
            root: Box::new(error),
            context: Vec::new(),
            hint: None,
        }
    }

    pub fn msg(message: impl fmt::Display) -> Error {
        Error::new(Message(message.to_string()))
    }

    /// Wraps the error in a message that says what was being done.
    pub fn context(mut self, message: impl fmt::Display) -> Error {
        self.context.push(message.to_string());
        self
    }

    /// Adds the next step for the user (`hint: ...` under the message).
    pub fn with_hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }

    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    /// Whether the root error or one of its sources is a write to a closed pipe.
    pub fn is_broken_pipe(&self) -> bool {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&*self.root);
        while let Some(error) = source {
            if error
                .downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return true;
            }
            source = error.source();
        }
        false
    }

    /// The messages from the outermost context down to the root error and its sources.
    /// A kube-rs error ends the chain in chartkit's words for it: its own text and its
    /// sources' (hyper, rustls) are Rust `Debug` output, not sentences.
    pub fn messages(&self) -> impl Iterator<Item = String> + '_ {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&*self.root);
        let sources = std::iter::from_fn(move || {
            let error = source?;
            if let Some(words) = kube_words(error) {
                source = None;
                return Some(words);
            }
            source = error.source();
            Some(error.to_string())
        });
        self.context.iter().rev().cloned().chain(sources)
    }

    /// The hint for the kube-rs error in the chain, when the root has none of its own
    /// (what to check when the API server could not be reached).
    pub fn kube_hint(&self) -> Option<String> {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&*self.root);
        while let Some(error) = source {
            if let Some(hint) = chartkit_cluster::kube_error::hint_for(error) {
                return Some(hint);
            }
            source = error.source();
        }
        None
    }
}

fn kube_words(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    chartkit_cluster::kube_error::words_for(error)
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for Error {
    fn from(error: E) -> Error {
        Error::new(error)
    }
}

/// The outermost message; with `{:#}`, every message joined by `: `.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            let messages: Vec<String> = self.messages().collect();
            f.write_str(&messages.join(": "))
        } else {
            match self.context.last() {
                Some(outer) => f.write_str(outer),
                None => fmt::Display::fmt(&self.root, f),
            }
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:#}")
    }
}

/// `.context(..)` and `.with_context(|| ..)` on results and options.
pub trait Context<T> {
    fn context(self, message: impl fmt::Display) -> Result<T>;
    fn with_context<M: fmt::Display>(self, message: impl FnOnce() -> M) -> Result<T>;
}

impl<T, E: std::error::Error + Send + Sync + 'static> Context<T> for Result<T, E> {
    fn context(self, message: impl fmt::Display) -> Result<T> {
        self.map_err(|e| Error::new(e).context(message))
    }

    fn with_context<M: fmt::Display>(self, message: impl FnOnce() -> M) -> Result<T> {
        self.map_err(|e| Error::new(e).context(message()))
    }
}

impl<T> Context<T> for Result<T, Error> {
    fn context(self, message: impl fmt::Display) -> Result<T> {
        self.map_err(|e| e.context(message))
    }

    fn with_context<M: fmt::Display>(self, message: impl FnOnce() -> M) -> Result<T> {
        self.map_err(|e| e.context(message()))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, message: impl fmt::Display) -> Result<T> {
        self.ok_or_else(|| Error::msg(message))
    }

    fn with_context<M: fmt::Display>(self, message: impl FnOnce() -> M) -> Result<T> {
        self.ok_or_else(|| Error::msg(message()))
    }
}

/// An [`Error`] from a format string.
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::error::Error::msg(format!($($arg)*))
    };
}

/// Returns early with an [`Error`] from a format string.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::err!($($arg)*))
    };
}

pub(crate) use {bail, err};

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Inner;

    impl fmt::Display for Inner {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("inner")
        }
    }

    impl std::error::Error for Inner {}

    #[derive(Debug)]
    struct Outer(Inner);

    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("outer")
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn messages_run_from_the_outermost_context_to_the_deepest_source() {
        let error: Result<()> = Err(Outer(Inner)).context("reading `x`");
        let error = error.context("cannot load").unwrap_err();
        assert_eq!(
            error.messages().collect::<Vec<_>>(),
            ["cannot load", "reading `x`", "outer", "inner"]
        );
        assert_eq!(error.to_string(), "cannot load");
        assert_eq!(
            format!("{error:#}"),
            "cannot load: reading `x`: outer: inner"
        );
        assert_eq!(err!("n = {}", 1).to_string(), "n = 1");
        assert_eq!(error.with_hint("try again").hint(), Some("try again"));
    }
}
