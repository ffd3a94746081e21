//! Chart metadata as an index entry carries it: the fields of Helm's `chart/v2` `Metadata`
//! with their JSON names, and Helm's validation and sanitising of them.
//!
//! This mirrors the chart crate's `Metadata` until that lands on main; the index only needs
//! the fields, their JSON names and `Validate`.

use chartkit_version::Version;
use chartkit_yaml::Value;

/// A chart maintainer (`maintainers[]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Maintainer {
    pub name: String,
    pub email: String,
    pub url: String,
}

/// A dependency as listed in Chart.yaml (`dependencies[]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dependency {
    pub name: String,
    pub version: String,
    pub repository: String,
    pub condition: String,
    pub tags: Vec<String>,
    pub enabled: bool,
    /// Free-form: strings or `{child, parent}` maps.
    pub import_values: Vec<Value>,
    pub alias: String,
}

/// Chart metadata. Every field is written only when non-empty, as Helm 4 does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChartMetadata {
    pub name: String,
    pub home: String,
    pub sources: Vec<String>,
    pub version: String,
    pub description: String,
    pub keywords: Vec<String>,
    /// `None` items are YAML nulls in the list, which validation rejects.
    pub maintainers: Vec<Option<Maintainer>>,
    pub icon: String,
    pub api_version: String,
    pub condition: String,
    pub tags: String,
    pub app_version: String,
    pub deprecated: bool,
    /// In file order; written sorted by key, and only when non-empty.
    pub annotations: Vec<(String, String)>,
    pub kube_version: String,
    pub dependencies: Vec<Option<Dependency>>,
    pub chart_type: String,
}

/// Why metadata fails Helm's `Metadata.Validate`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    #[error("validation: chart.metadata.apiVersion is required")]
    NoApiVersion,
    #[error("validation: chart.metadata.name is required")]
    NoName,
    #[error("validation: chart.metadata.name {0:?} is invalid")]
    BadName(String),
    #[error("validation: chart.metadata.version is required")]
    NoVersion,
    #[error("validation: chart.metadata.version {0:?} is invalid")]
    BadVersion(String),
    #[error("validation: chart.metadata.type must be application or library")]
    BadType,
    #[error("validation: maintainers must not contain empty or null nodes")]
    NullMaintainer,
    #[error("validation: dependencies must not contain empty or null nodes")]
    NullDependency,
    #[error("validation: dependency {0:?} has disallowed characters in the alias")]
    BadAlias(String),
    /// Helm tolerates this one in repository indexes (JFrog strips aliases).
    #[error("validation: more than one dependency with name or alias {0:?}")]
    DuplicateDependency(String),
}

impl MetadataError {
    /// Errors Helm ignores when loading an index (`ignoreSkippableChartValidationError`).
    pub fn skippable_in_index(&self) -> bool {
        matches!(self, MetadataError::DuplicateDependency(_))
    }
}

impl ChartMetadata {
    /// Helm's `Metadata.Validate`: sanitises text fields in place, then checks them.
    pub fn validate(&mut self) -> Result<(), MetadataError> {
        for field in [
            &mut self.name,
            &mut self.description,
            &mut self.home,
            &mut self.icon,
            &mut self.condition,
            &mut self.tags,
            &mut self.app_version,
            &mut self.kube_version,
        ] {
            sanitize(field);
        }
        self.sources.iter_mut().for_each(sanitize);
        self.keywords.iter_mut().for_each(sanitize);
        if self.api_version.is_empty() {
            return Err(MetadataError::NoApiVersion);
        }
        if self.name.is_empty() {
            return Err(MetadataError::NoName);
        }
        if go_path_base(&self.name) != self.name {
            return Err(MetadataError::BadName(self.name.clone()));
        }
        if self.version.is_empty() {
            return Err(MetadataError::NoVersion);
        }
        if Version::parse(&self.version).is_err() {
            return Err(MetadataError::BadVersion(self.version.clone()));
        }
        if !matches!(self.chart_type.as_str(), "" | "application" | "library") {
            return Err(MetadataError::BadType);
        }
        for maintainer in &mut self.maintainers {
            let Some(m) = maintainer else {
                return Err(MetadataError::NullMaintainer);
            };
            sanitize(&mut m.name);
            sanitize(&mut m.email);
            sanitize(&mut m.url);
        }
        let mut seen: Vec<String> = Vec::new();
        for dependency in &mut self.dependencies {
            let Some(d) = dependency else {
                return Err(MetadataError::NullDependency);
            };
            sanitize(&mut d.name);
            sanitize(&mut d.version);
            sanitize(&mut d.repository);
            sanitize(&mut d.condition);
            d.tags.iter_mut().for_each(sanitize);
            if !d.alias.is_empty()
                && !d
                    .alias
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            {
                return Err(MetadataError::BadAlias(d.name.clone()));
            }
            let key = if d.alias.is_empty() {
                &d.name
            } else {
                &d.alias
            };
            if seen.contains(key) {
                return Err(MetadataError::DuplicateDependency(key.clone()));
            }
            seen.push(key.clone());
        }
        Ok(())
    }
}

/// Go's `filepath.Base` on Unix.
fn go_path_base(path: &str) -> &str {
    if path.is_empty() {
        return ".";
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/";
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// Helm's `sanitizeString`: any Unicode space becomes a plain space and characters Go does
/// not consider printable are dropped.
pub fn sanitize(text: &mut String) {
    if text
        .chars()
        .all(|c| c == ' ' || (!c.is_whitespace() && is_go_printable(c)))
    {
        return;
    }
    *text = text
        .chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if is_go_printable(c) {
                Some(c)
            } else {
                None
            }
        })
        .collect();
}

/// Go's `unicode.IsPrint` for non-space characters: not a control, format, private-use or
/// surrogate character. Unassigned code points are treated as printable, a known
/// approximation (std has no general-category table).
fn is_go_printable(c: char) -> bool {
    let u = c as u32;
    !(c.is_control()
        || matches!(u, 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E)
        || matches!(u, 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F)
        || matches!(u, 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x1BCA0..=0x1BCA3)
        || matches!(u, 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F)
        || matches!(u, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
        || matches!(u, 0xFFFE | 0xFFFF))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> ChartMetadata {
        ChartMetadata {
            name: "web".into(),
            version: "1.2.3".into(),
            api_version: "v2".into(),
            ..ChartMetadata::default()
        }
    }

    #[test]
    fn validation_follows_helm() {
        assert!(valid().validate().is_ok());
        let mut m = valid();
        m.version = "1.2.3.4".into();
        assert_eq!(
            m.validate(),
            Err(MetadataError::BadVersion("1.2.3.4".into()))
        );
        let mut m = valid();
        m.name = "a/b".into();
        assert!(matches!(m.validate(), Err(MetadataError::BadName(_))));
        let mut m = valid();
        m.chart_type = "app".into();
        assert_eq!(m.validate(), Err(MetadataError::BadType));
        let mut m = valid();
        m.dependencies = vec![
            Some(Dependency {
                name: "a".into(),
                ..Dependency::default()
            }),
            Some(Dependency {
                name: "a".into(),
                ..Dependency::default()
            }),
        ];
        assert!(m.validate().unwrap_err().skippable_in_index());
    }

    #[test]
    fn sanitising_replaces_spaces_and_drops_controls() {
        let mut m = valid();
        m.description = "a\tb\u{7}c\u{200b}d".into();
        m.validate().unwrap();
        assert_eq!(m.description, "a bcd");
    }
}
