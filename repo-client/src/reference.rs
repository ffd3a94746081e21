//! How a chart is asked for: `REPO/NAME`, a package URL, or a name in a repository given
//! by URL (helm's `--repo`, a dependency's `repository: https://...`).

use crate::error::{ClientError, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChartRef {
    /// `REPO/NAME`: a chart in a configured repository.
    Named { repo: String, chart: String },
    /// A chart in the repository at `url`, configured or not.
    InRepo { url: String, chart: String },
    /// A package URL.
    Direct { url: String },
}

impl ChartRef {
    /// Reads a reference as `helm pull` does: with `repo_url` (`--repo`), `reference` is
    /// a chart name in it; otherwise a URL is a package to download and `REPO/NAME` a
    /// chart in a configured repository.
    pub fn parse(reference: &str, repo_url: Option<&str>) -> Result<ChartRef> {
        if let Some(url) = repo_url.filter(|u| !u.is_empty()) {
            return Ok(ChartRef::InRepo {
                url: url.to_owned(),
                chart: reference.to_owned(),
            });
        }
        if reference.contains("://") {
            return Ok(ChartRef::Direct {
                url: reference.to_owned(),
            });
        }
        match reference.split_once('/') {
            Some((repo, chart)) if !repo.is_empty() && !chart.is_empty() => Ok(ChartRef::Named {
                repo: repo.to_owned(),
                chart: chart.to_owned(),
            }),
            _ => Err(ClientError::BadReference(format!(
                "non-absolute URLs should be in form of repo_name/path_to_chart, got: {reference}"
            ))),
        }
    }

    /// The chart's name (empty for a direct URL).
    pub fn chart_name(&self) -> &str {
        match self {
            ChartRef::Named { chart, .. } | ChartRef::InRepo { chart, .. } => chart,
            ChartRef::Direct { .. } => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_as_helm_reads_them() {
        assert_eq!(
            ChartRef::parse("stable/web", None).unwrap(),
            ChartRef::Named {
                repo: "stable".into(),
                chart: "web".into()
            }
        );
        assert_eq!(
            ChartRef::parse("web", Some("http://h")).unwrap(),
            ChartRef::InRepo {
                url: "http://h".into(),
                chart: "web".into()
            }
        );
        assert!(matches!(
            ChartRef::parse("http://h/web-1.0.0.tgz", None).unwrap(),
            ChartRef::Direct { .. }
        ));
        assert!(
            ChartRef::parse("web", None)
                .unwrap_err()
                .to_string()
                .contains("repo_name/path_to_chart")
        );
    }
}
