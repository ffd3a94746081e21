//! Go's quoting of strings, for the texts chartkit repeats in Go's words (`%q` in
//! Helm's log lines, go-yaml's and the API server's errors).

/// Go's `strconv.Quote` (what `%q` prints): backslash escapes for quotes, backslashes and
/// control characters, every other character as it is.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_as_strconv_quote() {
        assert_eq!(super::quote("a\"b\\c\n\u{1}ñ"), "\"a\\\"b\\\\c\\n\\x01ñ\"");
    }
}
