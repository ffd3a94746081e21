//! `helm search repo` over cached compact indexes, with Helm's matching, scores, order
//! and version filter.
//!
//! Helm builds one line per chart version, `NAME\vREPO/NAME\vDESCRIPTION\vKEYWORDS`,
//! finds the term in it (lower-cased, or as a Go regexp on the line as it is) and scores
//! a hit by the field it starts in (0 for the name ... 3 for the keywords). Results are
//! sorted by score, then name, then newest version first; then the version range (by
//! default `>0.0.0`, or `>0.0.0-0` with `--devel`) keeps, per name, the first matching
//! version, or all of them with `--versions`.
//!
//! Parsing every entry of a large index would be most of the time, so entries are kept
//! or dropped by their version text first, and for a plain term by looking for the term
//! in the entry's stored JSON: an entry whose JSON does not contain the term cannot
//! match. Only candidates are parsed.

use chartkit_index::ChartVersion;
use chartkit_index::compact::CompactVersion;
use chartkit_version::{Version, VersionRange};

use crate::client::RepoIndex;
use crate::error::{ClientError, Result};

/// What to search for.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// The keyword (words joined by spaces, as helm joins its arguments); `None` lists
    /// everything.
    pub query: Option<String>,
    /// The query is a Go regular expression.
    pub regexp: bool,
    /// Every matching version, not only the newest.
    pub versions: bool,
    /// A version range.
    pub version: Option<String>,
    /// Include pre-releases (when no range is given).
    pub devel: bool,
}

/// One result: `REPO/NAME` and the chart version.
#[derive(Debug, Clone)]
pub struct Hit {
    pub name: String,
    pub chart: ChartVersion,
}

enum Matcher {
    All,
    Literal {
        term: String,
        /// The term can be looked for in an entry's raw JSON (see [`Matcher::may_match`]).
        prefilter: bool,
    },
    Regexp(chartkit_regexp::Regexp),
}

impl Matcher {
    /// False only when the entry certainly does not match: the term is plain ASCII
    /// without separators, the JSON holds nothing a lower-casing could turn into ASCII
    /// (non-ASCII bytes or `\u` escapes), and the term is in no field. A match lies in
    /// one field (the term has no `\v`, and no space to span two keywords), and every
    /// field but `REPO/NAME` is text in the JSON; a match there is the end of the
    /// repository's name, `/`, and part of the chart's name, which is in the JSON.
    fn may_match(&self, json: &[u8], repo_lower: &str) -> bool {
        match self {
            Matcher::Literal {
                term,
                prefilter: true,
            } => {
                if !json.is_ascii() || memchr::memmem::find(json, b"\\u").is_some() {
                    return true;
                }
                let lower = json.to_ascii_lowercase();
                let contains =
                    |needle: &str| memchr::memmem::find(&lower, needle.as_bytes()).is_some();
                if contains(term) {
                    return true;
                }
                match term.split_once('/') {
                    Some((repo_end, name_start)) => {
                        repo_lower.ends_with(repo_end)
                            && (name_start.is_empty() || contains(name_start))
                    }
                    None => false,
                }
            }
            _ => true,
        }
    }

    /// The score of `line` (Helm's field index of the match), or `None`.
    fn score(&self, line: &str) -> Option<usize> {
        match self {
            Matcher::All => Some(0),
            Matcher::Literal { term, .. } => {
                let lower = go_lower(line);
                let at = lower.find(term.as_str())?;
                Some(field_of(&lower, at))
            }
            Matcher::Regexp(re) => {
                let (at, _) = *re.find_all_index(line, 1).first()?;
                Some(field_of(line, at))
            }
        }
    }
}

/// Helm's `calcScore`: how many separators come before the match.
fn field_of(line: &str, at: usize) -> usize {
    line.bytes()
        .enumerate()
        .filter(|&(i, b)| b == 0x0b && i < at)
        .count()
}

/// Go's `strings.ToLower`: each character mapped on its own (no final-sigma rule).
fn go_lower(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let mut lower = c.to_lowercase();
        // Go maps a character to one character; where Unicode's full mapping gives
        // several (İ), Go keeps the simple mapping, the first.
        match (lower.next(), lower.next()) {
            (Some(l), None) => out.push(l),
            (Some(l), Some(_)) if c == '\u{130}' => out.push(l),
            (Some(l), Some(m)) => {
                out.push(l);
                out.push(m);
                out.extend(lower);
            }
            (None, _) => out.push(c),
        }
    }
    out
}

struct Pending<'a> {
    name: String,
    score: usize,
    version: Version,
    repo: &'a RepoIndex,
    row: CompactVersion,
    parsed: Option<ChartVersion>,
}

/// Searches `repos` (in their configured order) as `helm search repo` does.
pub fn search(repos: &[RepoIndex], options: &SearchOptions) -> Result<Vec<Hit>> {
    let range_text = match options.version.as_deref() {
        Some(v) if !v.is_empty() => v,
        _ if options.devel => chartkit_index::select::DEVEL_RANGE,
        _ => chartkit_index::select::STABLE_SEARCH_RANGE,
    };
    let range = VersionRange::parse(range_text)?;
    let matcher = match &options.query {
        None => Matcher::All,
        Some(q) if options.regexp => Matcher::Regexp(
            chartkit_regexp::Regexp::new(q).map_err(|e| ClientError::Regexp(e.to_string()))?,
        ),
        Some(q) => {
            let term = go_lower(q);
            let prefilter = !term.is_empty()
                && term
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b));
            Matcher::Literal { term, prefilter }
        }
    };
    let mut pending: Vec<Pending<'_>> = Vec::new();
    for repo in repos {
        let repo_name = &repo.entry.name;
        // A term inside the repository's name matches every chart's second field.
        let repo_lower = go_lower(repo_name);
        let repo_matches_all =
            matches!(&matcher, Matcher::Literal { term, .. } if repo_lower.contains(term.as_str()));
        for chart in repo.index.chart_names() {
            let rows = repo
                .index
                .versions(chart)
                .map_err(chartkit_index::compact::QueryError::from)?;
            // Helm keys its lines by REPO/NAME$$VERSION: of two entries with one version
            // text, the later one in sorted order is the one kept.
            let mut kept: Vec<(CompactVersion, Version)> = Vec::new();
            let mut slots = std::collections::HashMap::new();
            for row in rows {
                let Ok(parsed) =
                    Version::parse(chartkit_index::select::Candidate::version_text(&row))
                else {
                    continue;
                };
                let text = chartkit_index::select::Candidate::version_text(&row).to_owned();
                match slots.get(&text) {
                    Some(&slot) => kept[slot] = (row, parsed),
                    None => {
                        slots.insert(text, kept.len());
                        kept.push((row, parsed));
                    }
                }
            }
            for (row, version) in kept {
                if !range.matches(&version) {
                    continue;
                }
                let name = join_name(repo_name, chart);
                let (score, parsed) = match &matcher {
                    Matcher::All => (0, None),
                    _ => {
                        let json = repo
                            .index
                            .entry_json(&row)
                            .map_err(chartkit_index::compact::QueryError::from)?;
                        if !repo_matches_all && !matcher.may_match(&json, &repo_lower) {
                            continue;
                        }
                        let entry = chartkit_index::parse_entry_json(&json).map_err(|e| {
                            chartkit_index::compact::QueryError::from(
                                chartkit_index::compact::CompactError::Entry(e.to_string()),
                            )
                        })?;
                        let line = format!(
                            "{n}\x0b{repo_name}/{n}\x0b{}\x0b{}",
                            entry.metadata.description,
                            entry.metadata.keywords.join(" "),
                            n = entry.metadata.name,
                        );
                        let Some(score) = matcher.score(&line) else {
                            continue;
                        };
                        (score, Some(entry))
                    }
                };
                pending.push(Pending {
                    name,
                    score,
                    version,
                    repo,
                    row,
                    parsed,
                });
            }
        }
    }
    pending.sort_by(|a, b| {
        a.score
            .cmp(&b.score)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| b.version.cmp(&a.version))
    });
    let mut seen = std::collections::HashSet::new();
    let mut hits = Vec::new();
    for p in pending {
        if !options.versions && !seen.insert(p.name.clone()) {
            continue;
        }
        let chart = match p.parsed {
            Some(chart) => chart,
            None => p
                .repo
                .index
                .entry(&p.row)
                .map_err(chartkit_index::compact::QueryError::from)?,
        };
        hits.push(Hit {
            name: p.name,
            chart,
        });
    }
    Ok(hits)
}

/// Go's `path.Join(repo, chart)` for the names that occur.
fn join_name(repo: &str, chart: &str) -> String {
    match (repo.is_empty(), chart.is_empty()) {
        (true, _) => chart.to_owned(),
        (_, true) => repo.to_owned(),
        _ => format!(
            "{}/{}",
            repo.trim_end_matches('/'),
            chart.trim_start_matches('/')
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_count_the_fields_before_the_match() {
        let line = "web\x0bstable/web\x0ba web server\x0bhttp nginx";
        let m = Matcher::Literal {
            term: "nginx".into(),
            prefilter: true,
        };
        assert_eq!(m.score(line), Some(3));
        let m = Matcher::Literal {
            term: "web".into(),
            prefilter: true,
        };
        assert_eq!(m.score(line), Some(0));
        let m = Matcher::Literal {
            term: "server".into(),
            prefilter: true,
        };
        assert_eq!(m.score(line), Some(2));
    }

    #[test]
    fn the_prefilter_never_drops_what_could_match() {
        let m = Matcher::Literal {
            term: "kube".into(),
            prefilter: true,
        };
        assert!(!m.may_match(br#"{"name":"web","description":"a web server"}"#, "st"));
        assert!(m.may_match(br#"{"name":"web","description":"for KUBE"}"#, "st"));
        // The Kelvin sign lower-cases to an ASCII k.
        assert!(m.may_match(r#"{"description":"\u212aube"}"#.as_bytes(), "st"));
        assert!(m.may_match("{\"description\":\"\u{212a}ube\"}".as_bytes(), "st"));
        // `REPO/NAME` is not in the JSON, but its parts are.
        let m = Matcher::Literal {
            term: "able/we".into(),
            prefilter: true,
        };
        assert!(m.may_match(br#"{"name":"web"}"#, "stable"));
        assert!(!m.may_match(br#"{"name":"web"}"#, "other"));
        assert!(!m.may_match(br#"{"name":"db"}"#, "stable"));
    }
}
