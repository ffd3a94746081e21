//! What `helm template` prints: CRDs (with `--include-crds`), the ordinary documents and
//! then the hooks, each as `---\n# Source: PATH\nDOCUMENT\n`, optionally filtered by
//! `--show-only`, or written to `--output-dir`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use chartkit_template::Output;

use crate::manifests::split_manifests;
use crate::{Rendered, crd_files};

/// The switches of `helm template` that shape its output.
#[derive(Debug, Clone, Default)]
pub struct OutputOptions {
    pub include_crds: bool,
    pub skip_tests: bool,
    pub no_hooks: bool,
    /// `--show-only` patterns (`templates/x.yaml`, globs as Go's `filepath.Match`).
    pub show_only: Vec<String>,
}

/// A `--show-only` pattern that matched nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not find template {0} in chart")]
pub struct ShowOnlyError(pub String);

/// The text `helm template` writes to stdout.
pub fn template_output(
    rendered: &Rendered,
    options: &OutputOptions,
) -> Result<String, ShowOnlyError> {
    let mut manifest = String::new();
    if options.include_crds {
        for (name, data) in crd_files(&rendered.chart) {
            write_document(&mut manifest, &name, &data);
        }
    }
    for m in &rendered.manifests {
        write_document(&mut manifest, &m.name, &m.content);
    }
    let mut out = trimmed(&manifest);
    if !options.no_hooks {
        for hook in &rendered.hooks {
            if options.skip_tests && hook.is_test() {
                continue;
            }
            write_document(&mut out, &hook.path, &hook.manifest);
        }
    }
    if options.show_only.is_empty() {
        return Ok(out);
    }
    let documents = split_manifests(&out);
    let mut shown = String::new();
    for pattern in &options.show_only {
        let pattern = pattern.replace('\\', "/");
        let mut found = false;
        for document in &documents {
            let Some(path) = source_path(document) else {
                continue;
            };
            if glob_match(&pattern, path) {
                let _ = write!(shown, "---\n{document}\n");
                found = true;
            }
        }
        if !found {
            return Err(ShowOnlyError(pattern));
        }
    }
    Ok(shown)
}

/// One document as helm prints it: `---`, its `# Source:` line, then the text.
fn write_document(out: &mut String, source: &str, text: &str) {
    let _ = write!(out, "---\n# Source: {source}\n{text}\n");
}

/// Helm prints its manifest buffer with surrounding white space trimmed and one newline.
fn trimmed(buffer: &str) -> String {
    format!("{}\n", buffer.trim())
}

/// What `helm template --debug` prints when the output is not valid YAML: every
/// non-empty template output (NOTES.txt already removed), by name.
pub(crate) fn invalid_output(files: &BTreeMap<String, Output>) -> Vec<u8> {
    let mut raw = Vec::new();
    for (name, content) in files {
        let content = content.as_bytes();
        if !go_trim_space(content).is_empty() {
            raw.extend_from_slice(format!("---\n# Source: {name}\n").as_bytes());
            raw.extend_from_slice(content);
            raw.push(b'\n');
        }
    }
    let mut out = go_trim_space(&raw).to_vec();
    out.push(b'\n');
    out
}

/// Go's `bytes.TrimSpace`: Unicode white space (what `str::trim` trims) removed from both
/// ends; a byte that is not part of a character is not space.
fn go_trim_space(mut bytes: &[u8]) -> &[u8] {
    let space_len = |b: &[u8]| {
        let text = b.utf8_chunks().next().map_or("", |chunk| chunk.valid());
        text.chars()
            .next()
            .filter(|c| c.is_whitespace())
            .map(char::len_utf8)
    };
    while let Some(len) = space_len(bytes) {
        bytes = &bytes[len..];
    }
    loop {
        // The last character starts at most three continuation bytes before the end.
        let start = (bytes.len().saturating_sub(4)..bytes.len())
            .find(|&i| std::str::from_utf8(&bytes[i..]).is_ok_and(|t| t.chars().count() == 1));
        match start {
            Some(i) if space_len(&bytes[i..]).is_some() => bytes = &bytes[..i],
            _ => return bytes,
        }
    }
}

/// The template path of a document without the chart name: what Helm's
/// `# Source: [^/]+/(.+)` captures.
fn source_path(document: &str) -> Option<&str> {
    let start = document.find("# Source: ")? + "# Source: ".len();
    let line = document[start..].lines().next()?;
    let slash = line.find('/')?;
    (slash > 0 && slash + 1 < line.len()).then(|| &line[slash + 1..])
}

/// `--output-dir`: each document appended to OUTPUT/PATH (OUTPUT/RELEASE/PATH with
/// `--release-name`, CRDs always under OUTPUT), printing `wrote FILE` as Helm does.
/// Returns what goes to stdout.
pub fn write_output_dir(
    rendered: &Rendered,
    options: &OutputOptions,
    dir: &Path,
    release_dir: Option<&str>,
) -> std::io::Result<String> {
    let mut stdout = String::new();
    let mut written: Vec<PathBuf> = Vec::new();
    let mut write =
        |base: &Path, name: &str, data: &str, stdout: &mut String| -> std::io::Result<()> {
            stays_inside(name)?;
            let path = PathBuf::from(format!("{}/{name}", base.display()));
            let append = written.contains(&path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let mut text = if append {
                std::fs::read_to_string(&path).unwrap_or_default()
            } else {
                String::new()
            };
            write_document(&mut text, name, data);
            chartkit_durable_write(&path, text.as_bytes())?;
            if !append {
                written.push(path.clone());
            }
            let _ = writeln!(stdout, "wrote {}", path.display());
            Ok(())
        };
    let release_base = match release_dir {
        Some(name) => {
            stays_inside(name)?;
            dir.join(name)
        }
        None => dir.to_path_buf(),
    };
    if options.include_crds {
        for (name, data) in crd_files(&rendered.chart) {
            write(dir, &name, &data, &mut stdout)?;
        }
    }
    for m in &rendered.manifests {
        write(&release_base, &m.name, &m.content, &mut stdout)?;
    }
    if !options.no_hooks {
        for hook in &rendered.hooks {
            if options.skip_tests && hook.is_test() {
                continue;
            }
            write(&release_base, &hook.path, &hook.manifest, &mut stdout)?;
        }
    }
    // Helm prints the (empty) manifest buffer and a newline after every file is written.
    stdout.push('\n');
    Ok(stdout)
}

/// Refuses a path built from chart data or flags that could leave the output directory.
/// Loading already refuses chart names and archive paths that could, so this is the last
/// line, not the first.
fn stays_inside(name: &str) -> std::io::Result<()> {
    let escapes = name.starts_with('/')
        || name.starts_with('\\')
        || name.split(['/', '\\']).any(|part| part == "..");
    if escapes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("refusing to write `{name}`: it would land outside the output directory"),
        ));
    }
    Ok(())
}

fn chartkit_durable_write(path: &Path, data: &[u8]) -> std::io::Result<()> {
    chartkit_durable::write(path, data).map_err(std::io::Error::other)
}

/// Go's `filepath.Match` with `/` as the separator: `*` and `?` never match `/`,
/// `[...]` classes with ranges and `^` negation, `\` escapes.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
}

fn match_from(p: &[char], n: &[char]) -> bool {
    let Some((&first, rest)) = p.split_first() else {
        return n.is_empty();
    };
    match first {
        '*' => {
            for i in 0..=n.len() {
                if i > 0 && n[i - 1] == '/' {
                    break;
                }
                if match_from(rest, &n[i..]) {
                    return true;
                }
            }
            false
        }
        '?' => !n.is_empty() && n[0] != '/' && match_from(rest, &n[1..]),
        '[' => {
            let Some((&c, tail)) = n.split_first() else {
                return false;
            };
            if c == '/' {
                return false;
            }
            let Some((matched, after)) = class(rest, c) else {
                return false;
            };
            matched && match_from(after, tail)
        }
        '\\' => match rest.split_first() {
            Some((&e, after)) => n.first() == Some(&e) && match_from(after, &n[1..]),
            None => false,
        },
        c => n.first() == Some(&c) && match_from(rest, &n[1..]),
    }
}

/// A `[...]` class (after the `[`): whether `c` is in it, and the rest of the pattern.
fn class(p: &[char], c: char) -> Option<(bool, &[char])> {
    let mut i = 0;
    let negate = p.first() == Some(&'^');
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let &lo = p.get(i)?;
        if lo == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        let lo = if lo == '\\' {
            i += 1;
            *p.get(i)?
        } else {
            lo
        };
        i += 1;
        let mut hi = lo;
        if p.get(i) == Some(&'-') && p.get(i + 1).is_some_and(|&h| h != ']') {
            hi = if p[i + 1] == '\\' {
                i += 1;
                *p.get(i + 1)?
            } else {
                p[i + 1]
            };
            i += 2;
        }
        if lo <= c && c <= hi {
            matched = true;
        }
    }
    Some((matched != negate, &p[i..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_go_filepath() {
        assert!(glob_match("templates/*.yaml", "templates/a.yaml"));
        assert!(!glob_match("templates/*", "templates/sub/a.yaml"));
        assert!(glob_match(
            "charts/*/templates/*",
            "charts/x/templates/y.yaml"
        ));
        assert!(glob_match("templates/[a-c]?.yaml", "templates/b1.yaml"));
        assert!(!glob_match("templates/[^a-c]?.yaml", "templates/b1.yaml"));
        assert!(glob_match("templates/a\\*.yaml", "templates/a*.yaml"));
    }

    #[test]
    fn source_paths_drop_the_chart_name() {
        assert_eq!(
            source_path("# Source: web/templates/a.yaml\nkind: A"),
            Some("templates/a.yaml")
        );
        assert_eq!(source_path("kind: A"), None);
    }

    #[test]
    fn trims_unicode_space_and_keeps_stray_bytes() {
        let text = [
            " \u{a0}\u{85}ab".as_bytes(),
            b"\xff",
            " \n\u{3000}".as_bytes(),
        ]
        .concat();
        assert_eq!(super::go_trim_space(&text), b"ab\xff");
        assert_eq!(super::go_trim_space("\u{2028} ".as_bytes()), b"");
        assert_eq!(super::go_trim_space(b"\xe2\x80 x \xa8"), b"\xe2\x80 x \xa8");
    }
}
