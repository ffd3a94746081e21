//! How Go's logging writes what Helm logs, for warnings repeated in Helm's words.

/// Go's `%q` of a string (`strconv.Quote`).
pub use chartkit_yaml::gofmt::quote as go_quote;

/// A value in a line of Go's `log/slog` text output (`key=value`): quoted when it is
/// empty or has white space, quotes, `=` or unprintable characters.
pub fn slog_value(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && c != '"' && c != '=');
    if plain {
        text.to_owned()
    } else {
        go_quote(text)
    }
}

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
    }
}
