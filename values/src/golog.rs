//! How Go's logging writes what Helm logs, for warnings repeated in Helm's words.

/// Go's `%q` of a string (`strconv.Quote`).
pub use chartkit_yaml::gofmt::quote as go_quote;

pub use chartkit_yaml::goslog::{Level, info, line, slog_value, warn};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slog_quotes_like_go() {
        assert_eq!(slog_value("sub.enabled"), "sub.enabled");
        assert_eq!(
            slog_value("\"exports\" is not a table"),
            r#""\"exports\" is not a table""#
        );
        assert_eq!(slog_value("a, b"), r#""a, b""#);
        assert_eq!(slog_value(""), r#""""#);
        assert_eq!(slog_value("a\\b\u{7f}"), "a\\b\u{7f}");
        assert_eq!(slog_value("tab\there"), r#""tab\there""#);
        assert_eq!(slog_value("é"), "é");
    }

    #[test]
    fn lines_are_slogs() {
        assert_eq!(
            warn(
                "returned non-bool value",
                &[("path", "sub.enabled"), ("chart", "sub")]
            ),
            "level=WARN msg=\"returned non-bool value\" path=sub.enabled chart=sub"
        );
        assert_eq!(
            info("warning: skipped value for demo.m: Not a table.", &[]),
            "level=INFO msg=\"warning: skipped value for demo.m: Not a table.\""
        );
        assert_eq!(warn("done", &[]), "level=WARN msg=done");
    }
}
