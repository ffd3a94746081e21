//! `.helmignore`, evaluated exactly as Helm evaluates it — including its surprising
//! negation rule: a `!pattern` line ignores every path that does *not* match it.
//!
//! Patterns use Go's `filepath.Match` syntax (`*`, `?`, `[a-z]`, `[^x]`, `\` escapes);
//! a pattern without `/` matches the base name, one with `/` the whole relative path, a
//! leading `/` anchors at the chart root, a trailing `/` matches directories only, and
//! `**` is refused.

/// The name of the ignore file at the chart root.
pub const HELMIGNORE: &str = ".helmignore";

/// A line of a `.helmignore` that Helm refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(".helmignore line {line}: {message}: `{pattern}`")]
pub struct RuleError {
    pub line: usize,
    pub pattern: String,
    pub message: &'static str,
}

#[derive(Debug, Clone)]
struct Rule {
    pattern: String,
    negate: bool,
    dir_only: bool,
    scope: Scope,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// No slash in the pattern: match the base name only.
    BaseName,
    /// Match the whole relative path.
    Path,
}

/// An ordered set of ignore rules.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    rules: Vec<Rule>,
}

impl Rules {
    /// Parses `.helmignore` text. Blank lines and `#` comments are skipped.
    pub fn parse(text: &str) -> Result<Rules, RuleError> {
        let mut rules = Rules::default();
        for (index, line) in text.lines().enumerate() {
            rules.add(line).map_err(|message| RuleError {
                line: index + 1,
                pattern: line.trim().to_owned(),
                message,
            })?;
        }
        Ok(rules)
    }

    /// The rules Helm always applies after the file's own: dotfiles in `templates/`.
    pub fn with_defaults(mut self) -> Rules {
        self.add("templates/.?*")
            .expect("the default rule is valid");
        self
    }

    fn add(&mut self, line: &str) -> Result<(), &'static str> {
        let mut pattern = line.trim();
        if pattern.is_empty() || pattern.starts_with('#') {
            return Ok(());
        }
        if pattern.contains("**") {
            return Err("double-star (**) syntax is not supported");
        }
        if !valid_pattern(pattern) {
            return Err("syntax error in pattern");
        }
        let negate = pattern.starts_with('!');
        if negate {
            pattern = &pattern[1..];
        }
        let dir_only = pattern.ends_with('/');
        if dir_only {
            pattern = &pattern[..pattern.len() - 1];
        }
        let scope = if pattern.contains('/') {
            Scope::Path
        } else {
            Scope::BaseName
        };
        let pattern = pattern.strip_prefix('/').unwrap_or(pattern).to_owned();
        self.rules.push(Rule {
            pattern,
            negate,
            dir_only,
            scope,
        });
        Ok(())
    }

    /// Whether `path` (relative to the chart root, `/`-separated) is ignored. Rules are
    /// tried in order and the first decision wins.
    pub fn ignores(&self, path: &str, is_dir: bool) -> bool {
        if path.is_empty() || path == "." || path == "./" {
            return false;
        }
        for rule in &self.rules {
            let subject = match rule.scope {
                Scope::BaseName => path.rsplit('/').next().unwrap_or(path),
                Scope::Path => path,
            };
            if rule.negate {
                if rule.dir_only && !is_dir {
                    return true;
                }
                if !glob_match(&rule.pattern, subject) {
                    return true;
                }
                continue;
            }
            if rule.dir_only && !is_dir {
                continue;
            }
            if glob_match(&rule.pattern, subject) {
                return true;
            }
        }
        false
    }
}

/// Whether Go's `filepath.Match` would accept the pattern (Helm checks this up front).
fn valid_pattern(pattern: &str) -> bool {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                if i + 1 >= chars.len() {
                    return false;
                }
                i += 2;
            }
            '[' => match parse_class(&chars, i + 1) {
                Some((_, end)) => i = end,
                None => return false,
            },
            _ => i += 1,
        }
    }
    true
}

/// A parsed character class: (negated, ranges), ending after the `]`.
type Class = (bool, Vec<(char, char)>);

fn parse_class(chars: &[char], mut i: usize) -> Option<(Class, usize)> {
    let mut negated = false;
    if chars.get(i) == Some(&'^') {
        negated = true;
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            return Some(((negated, ranges), i + 1));
        }
        first = false;
        let (lo, next) = class_char(chars, i)?;
        i = next;
        let mut hi = lo;
        if chars.get(i) == Some(&'-') {
            let (h, next) = class_char(chars, i + 1)?;
            hi = h;
            i = next;
        }
        ranges.push((lo, hi));
    }
}

fn class_char(chars: &[char], i: usize) -> Option<(char, usize)> {
    match *chars.get(i)? {
        '\\' => Some((*chars.get(i + 1)?, i + 2)),
        '-' | ']' => None,
        c => Some((c, i + 1)),
    }
}

/// Go's `filepath.Match` on `/`-separated paths: `*` and `?` never match `/`.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, 0, &n, 0)
}

fn match_from(p: &[char], mut pi: usize, n: &[char], mut ni: usize) -> bool {
    while pi < p.len() {
        match p[pi] {
            '*' => {
                while pi < p.len() && p[pi] == '*' {
                    pi += 1;
                }
                let mut end = ni;
                loop {
                    if match_from(p, pi, n, end) {
                        return true;
                    }
                    if end >= n.len() || n[end] == '/' {
                        return false;
                    }
                    end += 1;
                }
            }
            '?' => {
                if ni >= n.len() || n[ni] == '/' {
                    return false;
                }
                pi += 1;
                ni += 1;
            }
            '[' => {
                let Some(((negated, ranges), end)) = parse_class(p, pi + 1) else {
                    return false;
                };
                let Some(&c) = n.get(ni) else { return false };
                if c == '/' {
                    return false;
                }
                let inside = ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
                if inside == negated {
                    return false;
                }
                pi = end;
                ni += 1;
            }
            '\\' => {
                let Some(&literal) = p.get(pi + 1) else {
                    return false;
                };
                if n.get(ni) != Some(&literal) {
                    return false;
                }
                pi += 2;
                ni += 1;
            }
            literal => {
                if n.get(ni) != Some(&literal) {
                    return false;
                }
                pi += 1;
                ni += 1;
            }
        }
    }
    ni == n.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Rules {
        Rules::parse(text).unwrap().with_defaults()
    }

    #[test]
    fn go_glob_semantics() {
        assert!(glob_match("*.txt", "a.txt"));
        assert!(!glob_match("*.txt", "dir/a.txt"));
        assert!(glob_match("dir/*.txt", "dir/a.txt"));
        assert!(glob_match("?.md", "a.md"));
        assert!(glob_match("[a-c]x", "bx"));
        assert!(!glob_match("[^a-c]x", "bx"));
        assert!(glob_match("\\*", "*"));
        assert!(!glob_match("a*", "a/b"));
        assert!(glob_match("a*b*c", "axxbyyc"));
    }

    #[test]
    fn scopes_and_directories() {
        let r = rules("docs/\n/a.txt\n*.swp\nsecret/*.key\n");
        assert!(r.ignores("docs", true));
        assert!(
            !r.ignores("docs", false),
            "a trailing slash matches directories only"
        );
        assert!(r.ignores("a.txt", false));
        assert!(
            r.ignores("templates/x.swp", false),
            "no slash: the base name is matched"
        );
        assert!(r.ignores("secret/a.key", false));
        assert!(!r.ignores("other/secret/a.key", false));
        assert!(r.ignores("templates/.hidden", false), "default rule");
        assert!(!r.ignores("templates/x.yaml", false));
        assert!(!r.ignores(".", true));
    }

    #[test]
    fn negation_ignores_everything_else_as_helm_does() {
        // Helm returns "ignored" for any path that does not match a negated pattern.
        let r = rules("!important.txt\n");
        assert!(r.ignores("Chart.yaml", false));
        assert!(!r.ignores("important.txt", false));
        assert!(r.ignores("templates", true));
        // The first rule that decides wins, so an earlier match is not undone.
        let r = rules("*.txt\n!important.txt\n");
        assert!(r.ignores("important.txt", false));
        assert!(r.ignores("Chart.yaml", false));
    }

    #[test]
    fn bad_patterns_are_refused_with_their_line() {
        let err = Rules::parse("ok\nfoo/**/bar\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.to_string().contains("double-star"));
        assert!(Rules::parse("[a-\n").is_err());
        assert!(Rules::parse("abc\\\n").is_err());
    }
}
