//! READMEs: Markdown to HTML with pulldown-cmark, then through ammonia, whose allow-list
//! (no `script`, `style`, `svg`, `iframe`, `form`, no `on*` or `style` attributes) is what
//! stands between a chart author and the reader's browser. Links keep only http, https,
//! mailto and relative addresses.

use crate::html::Sanitized;
use crate::limits;
use pulldown_cmark::{Options, Parser, html::push_html};
use std::collections::HashSet;

/// A README rendered once, for a server to keep beside the package it came from
/// ([`crate::ChartDetail::readme_rendered`]): parsing and sanitising a README of a few KB
/// was most of a chart page's time, and a stored version's README never changes.
#[derive(Debug, Clone)]
pub struct RenderedReadme {
    html: Sanitized,
    truncated: bool,
}

impl RenderedReadme {
    pub fn new(markdown: &str) -> RenderedReadme {
        let (html, truncated) = render_readme(markdown);
        RenderedReadme { html, truncated }
    }

    pub fn html(&self) -> &Sanitized {
        &self.html
    }

    /// Whether the Markdown was cut at [`limits::README_BYTES`].
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Bytes it holds, for a cache's budget.
    pub fn len(&self) -> usize {
        self.html.as_str().len()
    }

    pub fn is_empty(&self) -> bool {
        self.html.as_str().is_empty()
    }
}

/// The README rendered and sanitised, and whether the Markdown was cut at
/// [`limits::README_BYTES`].
pub fn render_readme(markdown: &str) -> (Sanitized, bool) {
    let (markdown, truncated) = limits::truncate(markdown, limits::README_BYTES);
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut unsafe_html = String::with_capacity(markdown.len() * 3 / 2);
    push_html(&mut unsafe_html, Parser::new_ext(markdown, options));
    (sanitize(&unsafe_html), truncated)
}

/// HTML of any origin made safe to embed.
pub fn sanitize(unsafe_html: &str) -> Sanitized {
    let schemes: HashSet<&str> = ["http", "https", "mailto"].into_iter().collect();
    let clean = ammonia::Builder::default()
        .url_schemes(schemes)
        .url_relative(ammonia::UrlRelative::PassThrough)
        .link_rel(Some("nofollow noopener noreferrer"))
        .clean(unsafe_html)
        .to_string();
    Sanitized(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders() {
        let (html, truncated) = render_readme(
            "# Title\n\nSome *text* and [a link](https://x.io).\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        );
        let html = html.as_str();
        assert!(!truncated);
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(html.contains("<em>text</em>"), "{html}");
        assert!(html.contains("href=\"https://x.io\""), "{html}");
        assert!(html.contains("<table>"), "{html}");
    }

    #[test]
    fn scripts_handlers_and_bad_schemes_are_removed() {
        let (html, _) = render_readme(concat!(
            "<script>alert(1)</script>\n\n",
            "<img src=x onerror=alert(2)>\n\n",
            "[click](javascript:alert(3)) <a href=\"JaVaScRiPt:alert(4)\">x</a>\n\n",
            "<svg><script>alert(5)</script><circle onload=alert(6)/></svg>\n\n",
            "<iframe src=\"https://evil\"></iframe><style>body{}</style>\n\n",
            "<a href=\"data:text/html,<script>alert(7)</script>\">d</a>\n",
        ));
        let lower = html.as_str().to_ascii_lowercase();
        for bad in [
            "<script",
            "onerror",
            "onload",
            "javascript:",
            "<svg",
            "<iframe",
            "<style",
            "data:",
        ] {
            assert!(!lower.contains(bad), "{bad} in {lower}");
        }
    }

    #[test]
    fn long_readme_is_cut() {
        let long = "word ".repeat(limits::README_BYTES);
        let (_, truncated) = render_readme(&long);
        assert!(truncated);
    }
}
