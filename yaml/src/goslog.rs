//! Lines of Go's `log/slog` text handler, as Helm 4 logs (without the time):
//! `level=WARN msg="text" key=value`. Libraries collect Helm's notices as these lines
//! and the command line prints them, so scripts reading helm's stderr read chartkit's.

use crate::gofmt::quote as go_quote;

/// A value in a line of Go's `log/slog` text output (`key=value`), as its
/// `needsQuoting` decides: quoted when it is empty, or has a space, `=`, a character
/// JSON would escape (`"`, controls; but not `\\`), white space or an unprintable
/// character.
pub fn slog_value(text: &str) -> String {
    let plain = !text.is_empty()
        && text.chars().all(|c| {
            if c.is_ascii() {
                c == '\\' || (c > ' ' && c != '=' && c != '"')
            } else {
                c != '\u{FFFD}' && !c.is_whitespace() && !c.is_control() && is_print(c)
            }
        });
    if plain {
        text.to_owned()
    } else {
        go_quote(text)
    }
}

/// Go's `unicode.IsPrint` outside ASCII, near enough for log values: not a format
/// character, a separator other than the space, or a private-use code point.
fn is_print(c: char) -> bool {
    !matches!(c as u32,
        0x00A0 | 0x00AD | 0x1680 | 0x2000..=0x200F | 0x2028..=0x202F | 0x205F..=0x2064
        | 0x3000 | 0xFEFF | 0xE000..=0xF8FF | 0xFFF9..=0xFFFB | 0xF0000..=0x10FFFF)
}

/// The level of a line Helm logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// `log.Printf` (coalescing's notices), and `slog.Info`.
    Info,
    Warn,
    Error,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        }
    }
}

/// One line of Helm 4's log as its `slog.TextHandler` (without the time) writes it:
/// `level=WARN msg="text" key=value`, the message and values quoted as Go quotes them.
pub fn line(level: Level, message: &str, attributes: &[(&str, &str)]) -> String {
    let mut out = format!("level={} msg={}", level.name(), slog_value(message));
    for (key, value) in attributes {
        out.push(' ');
        out.push_str(&slog_value(key));
        out.push('=');
        out.push_str(&slog_value(value));
    }
    out
}

/// [`line`] at `WARN`.
pub fn warn(message: &str, attributes: &[(&str, &str)]) -> String {
    line(Level::Warn, message, attributes)
}

/// [`line`] at `INFO`: what Helm's `log.Printf` calls become once slog is the default
/// logger (coalescing's `warning: ...` notices).
pub fn info(message: &str, attributes: &[(&str, &str)]) -> String {
    line(Level::Info, message, attributes)
}
