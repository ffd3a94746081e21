//! The chart list's search and filters. A linear scan: at 5,000 charts it is a few hundred
//! microseconds, less than sending the page.

use crate::model::ChartSummary;
use memchr::memmem::Finder;

/// What the list was asked for (`/?q=...&deprecated=...&signed=1`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Words that must each appear in the name, a keyword, the description or a
    /// maintainer's name (case-insensitive).
    pub text: String,
    pub deprecated: DeprecatedFilter,
    /// Only charts whose newest version is signed.
    pub signed_only: bool,
    /// Which page of results, from 0.
    pub page: usize,
}

/// Deprecated charts are hidden unless asked for, as `helm search` hides them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DeprecatedFilter {
    #[default]
    Hide,
    Include,
    Only,
}

impl DeprecatedFilter {
    /// From the `deprecated` query parameter: `include`, `only`, anything else hides.
    pub fn from_param(value: &str) -> Self {
        match value {
            "include" => Self::Include,
            "only" => Self::Only,
            _ => Self::Hide,
        }
    }

    pub fn as_param(self) -> &'static str {
        match self {
            Self::Hide => "hide",
            Self::Include => "include",
            Self::Only => "only",
        }
    }
}

/// The charts matching the query, those whose name matches first, then by name.
pub fn search<'a>(charts: &'a [ChartSummary], query: &ListQuery) -> Vec<&'a ChartSummary> {
    let terms: Vec<String> = query
        .text
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    // Each term's searcher made once for all the charts.
    let terms: Vec<Finder> = terms.iter().map(Finder::new).collect();
    let mut found: Vec<(u8, &ChartSummary)> = charts
        .iter()
        .filter(|chart| match query.deprecated {
            DeprecatedFilter::Hide => !chart.deprecated,
            DeprecatedFilter::Include => true,
            DeprecatedFilter::Only => chart.deprecated,
        })
        .filter(|chart| !query.signed_only || chart.signed)
        .filter_map(|chart| rank(chart, &terms).map(|rank| (rank, chart)))
        .collect();
    found.sort_by(|(rank_a, a), (rank_b, b)| rank_a.cmp(rank_b).then_with(|| a.name.cmp(&b.name)));
    found.into_iter().map(|(_, chart)| chart).collect()
}

/// `None` when a term is missing; lower is better: 0 when every term is in the name.
fn rank(chart: &ChartSummary, terms: &[Finder]) -> Option<u8> {
    if terms.is_empty() {
        return Some(0);
    }
    let (name, rest) = search_text(chart);
    let mut all_in_name = true;
    for term in terms {
        if term.find(name.as_bytes()).is_some() {
            continue;
        }
        all_in_name = false;
        // Found nowhere: the chart does not match.
        term.find(rest.as_bytes())?;
    }
    Some(if all_in_name { 0 } else { 1 })
}

fn search_text(chart: &ChartSummary) -> &(String, String) {
    chart.search_text.0.get_or_init(|| {
        let mut rest = chart.description.to_lowercase();
        let others = chart
            .keywords
            .iter()
            .chain(chart.maintainers.iter().map(|m| &m.name));
        for text in others {
            rest.push('\n');
            rest.push_str(&text.to_lowercase());
        }
        (chart.name.to_lowercase(), rest)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Maintainer;

    fn chart(name: &str, description: &str, keywords: &[&str], maintainer: &str) -> ChartSummary {
        ChartSummary {
            name: name.into(),
            description: description.into(),
            keywords: keywords.iter().map(|k| k.to_string()).collect(),
            maintainers: vec![Maintainer {
                name: maintainer.into(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn names(found: Vec<&ChartSummary>) -> Vec<&str> {
        found.into_iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn every_field_is_searched_and_name_matches_come_first() {
        let charts = vec![
            chart("web", "A web server", &["http"], "Ada"),
            chart("cache", "Redis for the web tier", &["redis"], "Bob"),
            chart("db", "Postgres", &["sql"], "Web Master"),
            chart("queue", "Kafka", &["web"], "Eve"),
            chart("other", "Nothing", &[], "Zed"),
        ];
        let query = ListQuery {
            text: "WEB".into(),
            ..Default::default()
        };
        assert_eq!(
            names(search(&charts, &query)),
            ["web", "cache", "db", "queue"]
        );
        let query = ListQuery {
            text: "redis bob".into(),
            ..Default::default()
        };
        assert_eq!(names(search(&charts, &query)), ["cache"]);
        assert_eq!(search(&charts, &ListQuery::default()).len(), 5);
    }

    #[test]
    fn case_is_ignored_beyond_ascii_and_no_term_spans_two_fields() {
        let charts = vec![
            chart("Über", "", &[], ""),
            chart("street", "Straße", &[], ""),
            chart("kelvin", "\u{212A}afka", &[], ""),
            chart("split", "red", &["is"], "Ada"),
        ];
        let found = |text: &str| {
            let query = ListQuery {
                text: text.into(),
                ..Default::default()
            };
            names(search(&charts, &query))
        };
        assert_eq!(found("üBER"), ["Über"]);
        assert_eq!(found("STRASSE"), Vec::<&str>::new());
        assert_eq!(found("straße"), ["street"]);
        // The Kelvin sign lowercases to an ASCII k.
        assert_eq!(found("kafka"), ["kelvin"]);
        assert_eq!(found("redis"), Vec::<&str>::new());
        assert_eq!(found("red is ada"), ["split"]);
        // Searched again, from the kept text.
        assert_eq!(found("RED"), ["split"]);
    }

    #[test]
    fn deprecated_and_signed_filters() {
        let mut old = chart("old", "", &[], "");
        old.deprecated = true;
        let mut signed = chart("signed", "", &[], "");
        signed.signed = true;
        let charts = vec![old, signed, chart("plain", "", &[], "")];
        assert_eq!(
            names(search(&charts, &ListQuery::default())),
            ["plain", "signed"]
        );
        let only = ListQuery {
            deprecated: DeprecatedFilter::Only,
            ..Default::default()
        };
        assert_eq!(names(search(&charts, &only)), ["old"]);
        let all = ListQuery {
            deprecated: DeprecatedFilter::Include,
            ..Default::default()
        };
        assert_eq!(search(&charts, &all).len(), 3);
        let signed_only = ListQuery {
            signed_only: true,
            ..Default::default()
        };
        assert_eq!(names(search(&charts, &signed_only)), ["signed"]);
    }
}
