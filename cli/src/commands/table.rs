//! Tables as helm prints them (gosuri/uitable).

/// The header of `helm search repo`'s table.
pub fn search_header() -> Vec<String> {
    ["NAME", "CHART VERSION", "APP VERSION", "DESCRIPTION"]
        .map(str::to_owned)
        .to_vec()
}

/// Rows laid out as gosuri/uitable lays them out: each column as wide as its widest cell
/// but at most `max_width` (0: no limit); each cell padded or cut to its column's width
/// (a cut one ends in `...`) and the cells separated by tabs.
pub fn layout(rows: &[Vec<String>], max_width: usize) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|column| {
            let widest = rows
                .iter()
                .filter_map(|row| row.get(column))
                .map(|cell| width(cell))
                .max()
                .unwrap_or(0);
            if max_width == 0 {
                widest
            } else {
                widest.min(max_width)
            }
        })
        .collect();
    let lines: Vec<String> = rows
        .iter()
        .map(|row| {
            row.iter()
                .zip(&widths)
                .map(|(cell, &column_width)| resize(cell, column_width))
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect();
    format!("{}\n", lines.join("\n"))
}

/// A cell made `columns` wide as uitable does it: padded with spaces, or cut and ended
/// with `...`. The cut keeps characters while the width before each stays under
/// `columns - 3`, so a line of wide characters may end one column past the others.
fn resize(text: &str, columns: usize) -> String {
    let text_width = width(text);
    if text_width <= columns {
        return format!("{text}{}", " ".repeat(columns - text_width));
    }
    let limit = columns as isize - 3;
    let mut used = 0isize;
    let mut cut = String::new();
    for c in text.chars() {
        cut.push(c);
        let w = char_width(c) as isize;
        if used + w >= limit {
            break;
        }
        used += w;
    }
    cut.push_str("...");
    cut
}

/// Columns `text` takes on a terminal.
fn width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

/// Columns a character takes, as go-runewidth counts them outside East Asian locales:
/// wide and full-width characters two, combining marks and zero-width characters none,
/// everything else one.
fn char_width(c: char) -> usize {
    match u32::from(c) {
        0x0300..=0x036F | 0x200B..=0x200F | 0xFE00..=0xFE0F => 0,
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x3FFFD => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_padded_or_cut_as_uitable_does() {
        assert_eq!(resize("abcdef", 5), "ab...");
        assert_eq!(resize("abcde", 5), "abcde");
        assert_eq!(resize("abc", 5), "abc  ");
        assert_eq!(resize("日本語の説明", 7), "日本...");
        assert_eq!(resize("日本語の説明", 8), "日本語...");
        assert_eq!(width("日本"), 4);
    }
}
