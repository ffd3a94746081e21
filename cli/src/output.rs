//! Everything the command line prints goes through here.
//!
//! `print!` panics when stdout is a pipe whose reader has gone
//! (`chartkit show values big.tgz | head -1`): Rust ignores SIGPIPE, so the write fails
//! with `EPIPE` instead. helm, a Go program, is killed by SIGPIPE on such a write, quietly,
//! and its shell reports 141. chartkit does the same: on a broken pipe it puts SIGPIPE's
//! default action back and raises it, so scripts see exactly what they see with helm.

use std::fmt;
use std::io::{self, Write};

/// Writes to stdout; on a broken pipe the process ends as helm's would.
pub fn stdout(args: fmt::Arguments<'_>) -> io::Result<()> {
    let mut out = io::stdout().lock();
    let written = out.write_fmt(args).and_then(|()| out.flush());
    check(written)
}

/// Writes bytes to stdout; on a broken pipe the process ends as helm's would.
pub fn stdout_bytes(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    let written = out.write_all(bytes).and_then(|()| out.flush());
    check(written)
}

/// Writes to stderr; on a broken pipe the process ends as helm's would. Other failures
/// are ignored: there is nowhere left to report them.
pub fn stderr(args: fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = check(err.write_fmt(args).and_then(|()| err.flush()));
}

/// Passes the result on, except a broken pipe, which ends the process.
fn check(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => broken_pipe(),
        other => other,
    }
}

/// Ends the process as a write to a closed pipe ends a Go program: killed by SIGPIPE,
/// without a message.
pub fn broken_pipe() -> ! {
    #[cfg(unix)]
    {
        // Restores SIGPIPE's default action (terminate) and raises it.
        let _ = signal_hook::low_level::emulate_default_handler(signal_hook::consts::SIGPIPE);
        // Not reached; the status a shell would report for the signal.
        std::process::exit(128 + signal_hook::consts::SIGPIPE)
    }
    #[cfg(not(unix))]
    std::process::exit(1)
}

/// `print!` through [`stdout`]; evaluates to an `io::Result<()>`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::stdout(format_args!($($arg)*))
    };
}

/// `println!` through [`stdout`]; evaluates to an `io::Result<()>`.
macro_rules! outln {
    () => {
        $crate::output::stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` through [`stderr`].
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {errln, out, outln};
