//! How much of an index is ever held in memory at once.
//!
//! A streamed index ([`crate::CompactReader`]) holds a few pieces of text and the trees of
//! the charts being decoded; a tree is about ten times its text, so a piece (one chart's
//! versions, unless the chart is small) is bounded by [`MAX_CHART_TEXT`]. An index that
//! cannot be streamed is read whole, text and tree, which only an index up to
//! [`MAX_WHOLE_READING`] may be. The largest public indexes are tens of megabytes and
//! written in lines, as helm writes them, so they stream; these limits only stop an index
//! made to exhaust memory (or one broken badly enough to).

/// The longest text of one chart's versions (and the longest line) read in pieces.
pub const MAX_CHART_TEXT: usize = 8 * 1024 * 1024;

/// The largest index read whole (one not written in lines, JSON, or with anchors,
/// tags or a chart over [`MAX_CHART_TEXT`]); the tree costs about ten times this.
pub const MAX_WHOLE_READING: u64 = 32 * 1024 * 1024;

/// Refuses to read an index of `size` bytes whole when that would take memory out of
/// proportion ([`MAX_WHOLE_READING`]).
pub fn check_whole_reading(size: u64) -> Result<(), crate::IndexError> {
    if size > MAX_WHOLE_READING {
        return Err(crate::IndexError::TooLargeToReadWhole {
            size,
            limit: MAX_WHOLE_READING,
        });
    }
    Ok(())
}

/// A byte count as people read it: `512 MiB`, `2 GiB`, `1.5 KiB`, `900 bytes`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(human_size(900), "900 bytes");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(512 * 1024 * 1024), "512 MiB");
        assert_eq!(human_size(2 << 30), "2 GiB");
    }
}
