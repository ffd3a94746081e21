//! `oci://HOST[:PORT]/PATH/NAME[:TAG][@sha256:DIGEST]` as helm reads it (its
//! `newReference` over oras-go's `ParseReference`): the digest is whatever follows the
//! last `@`, the tag whatever follows the last `:` when no `/` comes after it, and a `+`
//! in a tag (a semver build) is sent as `_`, since OCI tags cannot hold `+`.

use crate::error::OciError;

/// What helm says after pushing or pulling a reference with `_` in it.
pub const UNDERSCORE_MESSAGE: &str = "
OCI artifact references (e.g. tags) do not support the plus sign (+). To support
storing semantic versions, Helm adopts the convention of changing plus (+) to
an underscore (_) in chart version tags when pushing to a registry and back to
a plus (+) when pulling from a registry.";

/// The scheme of registry references.
pub const SCHEME: &str = "oci://";

/// A parsed registry reference.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    /// `HOST[:PORT]`.
    pub registry: String,
    /// The repository path inside the registry (`charts/web`).
    pub repository: String,
    /// The tag as sent to the registry (`+` already turned into `_`).
    pub tag: Option<String>,
    /// `sha256:<64 hex>`.
    pub digest: Option<String>,
}

/// True when `text` is a registry reference.
pub fn is_oci(text: &str) -> bool {
    text.len() >= SCHEME.len() && text[..SCHEME.len()].eq_ignore_ascii_case(SCHEME)
}

impl Reference {
    /// Reads `oci://...` (the scheme may be left out).
    pub fn parse(text: &str) -> Result<Reference, OciError> {
        let bad = |reason: &str| OciError::BadReference {
            reference: text.to_owned(),
            reason: reason.to_owned(),
        };
        let mut raw = if is_oci(text) {
            &text[SCHEME.len()..]
        } else {
            text
        };
        let mut digest = None;
        if let Some(at) = raw.rfind('@') {
            digest = Some(raw[at + 1..].to_owned());
            raw = &raw[..at];
        }
        let mut tag = None;
        if let Some(colon) = raw.rfind(':')
            && !raw[colon + 1..].contains('/')
            && raw[..colon].contains('/')
        {
            tag = Some(raw[colon + 1..].replace('+', "_"));
            raw = &raw[..colon];
        }
        let Some((registry, repository)) = raw.split_once('/') else {
            return Err(bad("it names a registry but no repository in it"));
        };
        if registry.is_empty() || registry.contains(['?', '#', ' ']) {
            return Err(bad("the registry host is missing or malformed"));
        }
        if !valid_repository(repository) {
            return Err(bad(
                "a repository path is lower-case letters, digits and separators (`.`, `_`, `__`, `-`) in `/`-separated parts",
            ));
        }
        if let Some(t) = &tag
            && !valid_tag(t)
        {
            return Err(bad(
                "a tag is at most 128 letters, digits, `_`, `.` and `-`, not starting with `.` or `-`",
            ));
        }
        if let Some(d) = &digest
            && !valid_digest(d)
        {
            return Err(bad(
                "a digest is `sha256:` and 64 lower-case hexadecimal digits",
            ));
        }
        Ok(Reference {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag,
            digest,
        })
    }

    /// The chart name: the repository path's last part.
    pub fn name(&self) -> &str {
        self.repository
            .rsplit('/')
            .next()
            .unwrap_or(&self.repository)
    }

    /// `HOST/REPOSITORY`.
    pub fn locator(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// The same repository with `tag` (a version: `+` becomes `_`) and no digest.
    pub fn with_tag(&self, tag: &str) -> Reference {
        Reference {
            tag: Some(tag.replace('+', "_")),
            digest: None,
            ..self.clone()
        }
    }

    /// The tag as a chart version (`_` back to `+`).
    pub fn version(&self) -> Option<String> {
        self.tag.as_ref().map(|t| t.replace('_', "+"))
    }
}

/// `HOST/REPO:TAG`, `HOST/REPO@DIGEST` or `HOST/REPO:TAG@DIGEST`, as helm prints them
/// (`Pulled: ...`, `Pushed: ...`), without the scheme.
impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// distribution's repository grammar: path components of `[a-z0-9]+` joined by `.`, `_`,
/// `__` or any number of `-`.
fn valid_repository(repository: &str) -> bool {
    !repository.is_empty()
        && repository.len() <= 255
        && repository.split('/').all(|part| {
            let bytes = part.as_bytes();
            let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
            if bytes.is_empty() || !alnum(&bytes[0]) || !alnum(&bytes[bytes.len() - 1]) {
                return false;
            }
            let mut i = 0;
            while i < bytes.len() {
                if alnum(&bytes[i]) {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < bytes.len() && !alnum(&bytes[i]) {
                    i += 1;
                }
                let sep = &part[start..i];
                if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|b| b == b'-')) {
                    return false;
                }
            }
            true
        })
}

fn valid_tag(tag: &str) -> bool {
    let bytes = tag.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && (bytes[0].is_ascii_alphanumeric() || bytes[0] == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// A `sha256:` digest in lower-case hex.
pub fn valid_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Reference {
        Reference::parse(text).unwrap()
    }

    #[test]
    fn references_are_read_as_helm_reads_them() {
        let r = parse("oci://localhost:5000/charts/web");
        assert_eq!(r.registry, "localhost:5000");
        assert_eq!(r.repository, "charts/web");
        assert_eq!((r.tag.as_deref(), r.digest.as_deref()), (None, None));
        assert_eq!(r.name(), "web");

        let r = parse("oci://localhost:5000/charts/web:1.2.3+build.1");
        assert_eq!(r.tag.as_deref(), Some("1.2.3_build.1"));
        assert_eq!(r.version().as_deref(), Some("1.2.3+build.1"));
        assert_eq!(r.to_string(), "localhost:5000/charts/web:1.2.3_build.1");

        let digest = format!("sha256:{}", "a".repeat(64));
        let r = parse(&format!("oci://r.example/web@{digest}"));
        assert_eq!((r.tag, r.digest.as_deref()), (None, Some(digest.as_str())));
        let r = parse(&format!("oci://r.example:443/a/b/web:1.0.0@{digest}"));
        assert_eq!(r.tag.as_deref(), Some("1.0.0"));
        assert_eq!(r.digest.as_deref(), Some(digest.as_str()));
        assert_eq!(r.repository, "a/b/web");
    }

    #[test]
    fn malformed_references_say_which_part_is_wrong() {
        let error = |text: &str| Reference::parse(text).unwrap_err().to_string();
        assert!(error("oci://localhost:5000").contains("no repository"));
        assert!(error("oci://r/Charts/Web").contains("repository path"));
        assert!(error("oci://r/web:-x").contains("tag"));
        assert!(error("oci://r/web@sha256:xyz").contains("digest"));
        assert!(error("oci://r/web@md5:abc").contains("digest"));
    }

    #[test]
    fn repository_grammar_is_distributions() {
        for good in ["web", "a/b", "a.b", "a_b", "a__b", "a---b", "0x/9"] {
            assert!(valid_repository(good), "{good}");
        }
        for bad in ["", "A", "a/", "/a", "a..b", "a___b", "-a", "a-", "a b"] {
            assert!(!valid_repository(bad), "{bad}");
        }
    }
}
