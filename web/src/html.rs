//! The only way text reaches a page.
//!
//! A page is built in an [`Html`] buffer. Markup can be added only as a `&'static str` (a
//! literal written in this crate) or as [`Sanitized`] (HTML that went through ammonia); any
//! other string is text and goes through [`escape`]. Chart data are `String`s, never
//! `'static`, so there is no call that could put them on a page unescaped.

use std::fmt::Write as _;

/// Escapes text for HTML element content and double- or single-quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(&mut out, text);
    out
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // NUL and other controls (but tab and newlines) have no place on a page.
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

/// HTML made safe by the sanitiser; only [`crate::markdown`] makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sanitized(pub(crate) String);

impl Sanitized {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A page or a piece of one under construction.
#[derive(Debug, Default, Clone)]
pub struct Html(String);

impl Html {
    pub fn new() -> Self {
        Self(String::with_capacity(4096))
    }

    /// Markup written in this crate.
    pub fn raw(&mut self, markup: &'static str) -> &mut Self {
        self.0.push_str(markup);
        self
    }

    /// Text of any origin, escaped.
    pub fn text(&mut self, text: &str) -> &mut Self {
        escape_into(&mut self.0, text);
        self
    }

    /// A number or other value whose `Display` is text.
    pub fn display(&mut self, value: impl std::fmt::Display) -> &mut Self {
        let mut text = String::new();
        let _ = write!(text, "{value}");
        self.text(&text)
    }

    pub fn sanitized(&mut self, html: &Sanitized) -> &mut Self {
        self.0.push_str(&html.0);
        self
    }

    /// `<tag class="...">text</tag>` with static tag and class.
    pub fn element(&mut self, open: &'static str, text: &str, close: &'static str) -> &mut Self {
        self.raw(open).text(text).raw(close)
    }

    /// A link whose address is checked by [`safe_href`]; an unsafe one becomes plain text.
    pub fn link(&mut self, href: &str, text: &str) -> &mut Self {
        match safe_href(href) {
            Some(href) => self
                .raw("<a href=\"")
                .text(href)
                .raw("\" rel=\"nofollow noopener noreferrer\">")
                .text(text)
                .raw("</a>"),
            None => self.text(text),
        }
    }

    /// A link to a page of this server under `base` (the site's base path), made from
    /// escaped path segments.
    pub fn local_link(&mut self, base: &str, segments: &[&str], text: &str) -> &mut Self {
        self.raw("<a href=\"").text(base);
        for segment in segments {
            self.raw("/").text(&percent_encode_segment(segment));
        }
        self.raw("\">").text(text).raw("</a>")
    }

    pub fn append(&mut self, other: &Html) -> &mut Self {
        self.0.push_str(&other.0);
        self
    }

    pub fn into_string(self) -> String {
        self.0
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The address if it is http, https, mailto or relative (no scheme at all); `None` for
/// `javascript:`, `data:`, `vbscript:` and anything else. Browsers ignore tabs and newlines
/// inside a scheme and leading spaces and controls, so those are dropped before looking.
pub fn safe_href(href: &str) -> Option<&str> {
    let cleaned: String = href
        .trim_start_matches(|c: char| c.is_whitespace() || c.is_control())
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let scheme_end = cleaned.find([':', '/', '?', '#']);
    match scheme_end {
        Some(end) if cleaned[end..].starts_with(':') => {
            let scheme = cleaned[..end].to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "mailto").then_some(href.trim())
        }
        _ => Some(href.trim()),
    }
}

/// Percent-encodes a path segment (a chart name or version) for an address.
pub fn percent_encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'+') {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x" onclick='y'>&</a>"#),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(escape("a\u{0}b"), "a\u{FFFD}b");
    }

    #[test]
    fn safe_href_allows_web_and_relative_only() {
        for good in [
            "https://x.io/a",
            "http://x",
            "mailto:a@b",
            "/charts/a",
            "docs/x.md",
            "#top",
            "?q=1",
        ] {
            assert!(safe_href(good).is_some(), "{good}");
        }
        for bad in [
            "javascript:alert(1)",
            " JavaScript:alert(1)",
            "java\tscript:alert(1)",
            "data:text/html,x",
            "vbscript:x",
            "\u{1}javascript:x",
        ] {
            assert_eq!(safe_href(bad), None, "{bad}");
        }
    }

    #[test]
    fn unsafe_link_becomes_text() {
        let mut html = Html::new();
        html.link("javascript:alert(1)", "click");
        assert_eq!(html.as_str(), "click");
    }

    #[test]
    fn local_link_encodes_segments() {
        let mut html = Html::new();
        html.local_link("/ctx", &["charts", "a\"b/c"], "x");
        assert_eq!(html.as_str(), "<a href=\"/ctx/charts/a%22b%2Fc\">x</a>");
    }
}
