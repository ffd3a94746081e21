//! How much of a chart's files a page carries. A chart may hold megabytes of README or
//! values; a page that size is slow to send and to render, and the rest is a download away.

/// Charts on one page of the list: 5,000 charts on one page would be megabytes of HTML.
pub const LIST_PAGE_SIZE: usize = 100;
/// A description in the list at most; the chart's page shows it whole.
pub const LIST_DESCRIPTION_BYTES: usize = 400;
/// README Markdown read at most (before rendering).
pub const README_BYTES: usize = 256 * 1024;
/// values.yaml shown at most.
pub const VALUES_BYTES: usize = 256 * 1024;
/// Rows of the values.schema.json table at most.
pub const SCHEMA_ROWS: usize = 500;
/// Nesting of values.schema.json followed at most.
pub const SCHEMA_DEPTH: usize = 16;
/// Templates listed at most.
pub const TEMPLATE_FILES: usize = 1000;
/// Bytes of each side a comparison diffs at most, values and templates together.
pub const COMPARE_BYTES: usize = 1024 * 1024;

/// The text cut to at most `limit` bytes at a character boundary, and whether it was cut.
pub fn truncate(text: &str, limit: usize) -> (&str, bool) {
    if text.len() <= limit {
        return (text, false);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_keeps_characters_whole() {
        assert_eq!(truncate("abc", 5), ("abc", false));
        assert_eq!(truncate("aé", 2), ("a", true));
    }
}
