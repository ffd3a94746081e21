//! What a dependency's `repository` field points at, by Helm's reading of it.

/// The kinds of `repository` a dependency may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repository<'a> {
    /// No repository: the chart must already be in `charts/`.
    Vendored,
    /// `file://PATH`: a chart directory, relative to the parent chart unless absolute.
    Local(&'a str),
    /// `oci://...`: a registry.
    Oci(&'a str),
    /// `@NAME` or `alias:NAME`: a configured repository, by name.
    Named(&'a str),
    /// Anything else, read as a repository URL.
    Url(&'a str),
}

impl<'a> Repository<'a> {
    pub fn of(repository: &'a str) -> Repository<'a> {
        if repository.is_empty() {
            Repository::Vendored
        } else if let Some(path) = repository.strip_prefix("file://") {
            Repository::Local(path)
        } else if repository.starts_with("oci://") {
            Repository::Oci(repository)
        } else if let Some(name) = repository
            .strip_prefix('@')
            .or_else(|| repository.strip_prefix("alias:"))
        {
            Repository::Named(name)
        } else {
            Repository::Url(repository)
        }
    }
}

/// Whether two repository URLs name the same repository, as Helm's `urlutil.Equal`
/// decides: equal once parsed with a trailing `/` added to the path and dot segments
/// cleaned, or equal as text when either does not parse.
pub fn same_url(a: &str, b: &str) -> bool {
    match (normalize_url(a), normalize_url(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

/// `scheme://host` plus the cleaned path ending in `/`, with query and fragment kept.
fn normalize_url(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let (rest, suffix) = match rest.find(['?', '#']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (host, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let mut out = format!("{}://{}/", scheme.to_ascii_lowercase(), host);
    for part in parts {
        out.push_str(part);
        out.push('/');
    }
    out.push_str(suffix);
    Some(out)
}

/// Whether Go's `url.ParseRequestURI` accepts the text: an absolute URL or an absolute
/// path. Helm treats a dependency repository that passes as a URL of a repository that is
/// not configured; anything else (a bare name such as `stable`) is an error.
pub fn is_request_uri(text: &str) -> bool {
    if text.starts_with('/') {
        return true;
    }
    let Some((scheme, _)) = text.split_once(':') else {
        return false;
    };
    !scheme.is_empty()
        && scheme.as_bytes()[0].is_ascii_alphabetic()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(Repository::of(""), Repository::Vendored);
        assert_eq!(Repository::of("file://../x"), Repository::Local("../x"));
        assert_eq!(Repository::of("@stable"), Repository::Named("stable"));
        assert_eq!(Repository::of("alias:stable"), Repository::Named("stable"));
        assert_eq!(Repository::of("oci://r/x"), Repository::Oci("oci://r/x"));
        assert_eq!(
            Repository::of("https://charts.example.com"),
            Repository::Url("https://charts.example.com")
        );
    }

    #[test]
    fn urls_compare_as_helm_compares_them() {
        assert!(same_url("http://127.0.0.1:1/", "http://127.0.0.1:1"));
        assert!(same_url("https://h/a/b/../c", "https://h/a/c/"));
        assert!(!same_url("https://h/a", "https://h/b"));
        assert!(!same_url("https://h/a?x=1", "https://h/a"));
    }

    #[test]
    fn request_uris() {
        assert!(is_request_uri("https://x"));
        assert!(is_request_uri("/abs"));
        assert!(!is_request_uri("stable"));
        assert!(!is_request_uri("1http:x"));
    }
}
