//! Helm's `urlutil.URLJoin`: parse the base URL, `path.Join` its path with the extra parts,
//! and print it back with Go's path escaping.

/// Joins `parts` onto the path of `base` as Helm does for chart URLs in an index.
pub fn url_join(base: &str, parts: &[&str]) -> String {
    let (head, rest) = match base.find("://") {
        Some(i) => {
            let after = &base[i + 3..];
            let host_end = after.find(['/', '?', '#']).unwrap_or(after.len());
            base.split_at(i + 3 + host_end)
        }
        None => ("", base),
    };
    let (rest, fragment) = match rest.find('#') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (path, query) = match rest.find('?') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let mut all = vec![unescape(path)];
    all.extend(parts.iter().map(|p| (*p).to_owned()));
    let mut joined = go_path_join(&all);
    if !head.is_empty() && !joined.is_empty() && !joined.starts_with('/') {
        joined.insert(0, '/');
    }
    format!("{head}{}{query}{fragment}", escape_path(&joined))
}

/// Go's `path.Join`: join non-empty parts with `/` and clean the result.
fn go_path_join(parts: &[String]) -> String {
    let nonempty: Vec<&str> = parts
        .iter()
        .map(String::as_str)
        .filter(|p| !p.is_empty())
        .collect();
    if nonempty.is_empty() {
        return String::new();
    }
    clean(&nonempty.join("/"))
}

/// Go's `path.Clean`.
fn clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|p| *p != "..") {
                    out.pop();
                } else if !rooted {
                    out.push("..");
                }
            }
            p => out.push(p),
        }
    }
    let body = out.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".to_owned(),
        (false, false) => body,
    }
}

fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
            && let Ok(b) = u8::from_str_radix(&text[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Go's `url.PathEscape` rules for a path (`/` and sub-delimiters kept).
fn escape_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::url_join;

    #[test]
    fn joins_like_helm() {
        assert_eq!(
            url_join("https://charts.example.com", &["", "x-1.0.0.tgz"]),
            "https://charts.example.com/x-1.0.0.tgz"
        );
        assert_eq!(
            url_join("https://e.com/charts/", &["sub", "x.tgz"]),
            "https://e.com/charts/sub/x.tgz"
        );
        assert_eq!(url_join("", &["sub", "x.tgz"]), "sub/x.tgz");
        assert_eq!(
            url_join("https://e.com/c?token=1", &["a b.tgz"]),
            "https://e.com/c/a%20b.tgz?token=1"
        );
    }
}
