use std::process::ExitCode;

use crate::output::{errln, outln};

use crate::error::Context;
use chartkit_index::{ChartVersion, select};
use chartkit_repo::IndexCache;

use crate::cli::{OutputFormat, RepoQueryArgs};
use crate::env;
use chartkit_yaml::Value;

pub fn run(args: RepoQueryArgs) -> crate::error::Result<ExitCode> {
    let cache_home = env::cache_home();
    let index = IndexCache::load_or_build(&args.index, cache_home.as_deref())
        .with_context(|| format!("cannot load the index `{}`", args.index.display()))?;
    for warning in &index.warnings {
        errln!("warning: {warning}");
    }
    if let Some(why) = &index.not_cached {
        errln!(
            "warning: not caching the parsed index: {why}\nhint: set {} to a writable directory",
            env::CACHE_HOME
        );
    }
    if args.pull {
        let request = select::pull_request(args.version.as_deref(), args.devel);
        let chosen = index
            .get(&args.chart, &request)
            .with_context(|| format!("cannot choose a version of `{}`", args.chart))?;
        outln!("{}", chartkit_index::entry_to_json(&chosen))?;
        return Ok(ExitCode::SUCCESS);
    }
    let found = index
        .search(
            &args.chart,
            args.version.as_deref(),
            args.devel,
            args.versions,
        )
        .map_err(|e| crate::error::err!("an invalid version/constraint format: {e}"))?;
    let text = match args.output {
        OutputFormat::Json => format!("{}\n", search_json(&found)),
        OutputFormat::Yaml => chartkit_yaml::to_yaml(&search_yaml(&found)),
        OutputFormat::Table => search_table(&found, args.max_col_width),
    };
    crate::output::stdout_bytes(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The JSON `helm search repo -o json` prints, without the repository prefix.
fn search_json(found: &[ChartVersion]) -> String {
    let rows: Vec<serde_json::Value> = found
        .iter()
        .map(|v| {
            serde_json::json!({
                "name": v.metadata.name,
                "version": v.metadata.version,
                "app_version": v.metadata.app_version,
                "description": v.metadata.description,
            })
        })
        .collect();
    serde_json::Value::Array(rows).to_string()
}

/// The rows `helm search repo -o yaml` prints (go-yaml sorts their keys).
fn search_yaml(found: &[ChartVersion]) -> Value {
    Value::Seq(
        found
            .iter()
            .map(|v| {
                let text = |s: &str| Value::String(s.to_owned());
                Value::Map(
                    [
                        ("name", text(&v.metadata.name)),
                        ("version", text(&v.metadata.version)),
                        ("app_version", text(&v.metadata.app_version)),
                        ("description", text(&v.metadata.description)),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
                )
            })
            .collect(),
    )
}

/// The table `helm search repo` prints, laid out as gosuri/uitable lays it out: a header
/// and a row per version; each column as wide as its widest cell but at most `max_width`
/// (0: no limit); each cell padded or cut to its column's width (a cut one ends in `...`)
/// and the cells separated by tabs. `No results found` when there are no rows.
fn search_table(found: &[ChartVersion], max_width: usize) -> String {
    if found.is_empty() {
        return "No results found\n".to_owned();
    }
    let mut rows = vec![[
        "NAME".to_owned(),
        "CHART VERSION".to_owned(),
        "APP VERSION".to_owned(),
        "DESCRIPTION".to_owned(),
    ]];
    for v in found {
        rows.push([
            v.metadata.name.clone(),
            v.metadata.version.clone(),
            v.metadata.app_version.clone(),
            v.metadata.description.clone(),
        ]);
    }
    let widths: Vec<usize> = (0..4)
        .map(|column| {
            let widest = rows
                .iter()
                .map(|row| width(&row[column]))
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
