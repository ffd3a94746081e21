//! What helm's read-only actions select from the records they read: `list`'s states,
//! name filter, label selector, latest-revision rule, order and paging; `history`'s
//! newest revisions; release-name checks. All pure: the records come from [`crate::Storage`].

use std::collections::BTreeMap;

use crate::model::Release;
use crate::status::Status;

/// Release names Helm accepts: a DNS-1123 subdomain of at most 53 characters.
pub fn valid_release_name(name: &str) -> bool {
    if name.is_empty() || name.len() > 53 {
        return false;
    }
    name.split('.').all(|label| {
        let bytes = label.as_bytes();
        !bytes.is_empty()
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
            && bytes[0] != b'-'
            && bytes[bytes.len() - 1] != b'-'
    })
}

/// The states `helm list` shows, as a bit set (Helm's `ListStates`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct States(u16);

impl States {
    pub const DEPLOYED: States = States(1);
    pub const UNINSTALLED: States = States(1 << 1);
    pub const UNINSTALLING: States = States(1 << 2);
    pub const PENDING_INSTALL: States = States(1 << 3);
    pub const PENDING_UPGRADE: States = States(1 << 4);
    pub const PENDING_ROLLBACK: States = States(1 << 5);
    pub const SUPERSEDED: States = States(1 << 6);
    pub const FAILED: States = States(1 << 7);
    /// A status helm does not know; no flag selects it, so such records never list.
    const UNKNOWN: States = States(1 << 8);
    pub const ALL: States = States(0xff);
    pub const PENDING: States =
        States(Self::PENDING_INSTALL.0 | Self::PENDING_UPGRADE.0 | Self::PENDING_ROLLBACK.0);
    pub const NONE: States = States(0);

    pub fn union(self, other: States) -> States {
        States(self.0 | other.0)
    }

    fn of(status: &Status) -> States {
        match status {
            Status::Deployed => States::DEPLOYED,
            Status::Uninstalled => States::UNINSTALLED,
            Status::Superseded => States::SUPERSEDED,
            Status::Failed => States::FAILED,
            Status::Uninstalling => States::UNINSTALLING,
            Status::PendingInstall => States::PENDING_INSTALL,
            Status::PendingUpgrade => States::PENDING_UPGRADE,
            Status::PendingRollback => States::PENDING_ROLLBACK,
            _ => States::UNKNOWN,
        }
    }

    fn contains(self, status: &Status) -> bool {
        self.0 & States::of(status).0 != 0
    }
}

/// `helm list`'s order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    #[default]
    ByName,
    ByNameDesc,
    ByDateDesc,
    ByDateAsc,
}

impl Order {
    /// The order of `--date` and `--reverse`.
    pub fn from_flags(by_date: bool, reverse: bool) -> Order {
        match (by_date, reverse) {
            (true, false) => Order::ByDateDesc,
            (true, true) => Order::ByDateAsc,
            (false, true) => Order::ByNameDesc,
            (false, false) => Order::ByName,
        }
    }
}

/// What `helm list` selects.
#[derive(Debug, Clone)]
pub struct ListOptions {
    /// Selected states; [`States::NONE`] means all (as no state flag does).
    pub states: States,
    /// `--filter`: Go's RE2 syntax, matched anywhere in the name.
    pub filter: Option<String>,
    /// `--selector`: a label selector over the record's labels (system labels included).
    pub selector: Option<String>,
    pub order: Order,
    /// `--max`: at most this many (0: no limit of its own).
    pub limit: usize,
    pub offset: usize,
}

impl Default for ListOptions {
    fn default() -> ListOptions {
        ListOptions {
            states: States::NONE,
            filter: None,
            selector: None,
            order: Order::ByName,
            limit: 256,
            offset: 0,
        }
    }
}

/// A `--filter` or `--selector` that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("{0}")]
    Filter(String),
    #[error("{0}")]
    Selector(String),
}

/// The name filter of [`ListOptions::filter`], compiled.
pub struct NameFilter(Option<chartkit_regexp::Regexp>);

impl NameFilter {
    pub fn new(pattern: Option<&str>) -> Result<NameFilter, QueryError> {
        match pattern.filter(|p| !p.is_empty()) {
            None => Ok(NameFilter(None)),
            Some(p) => chartkit_regexp::Regexp::new(p)
                .map(|r| NameFilter(Some(r)))
                .map_err(|e| QueryError::Filter(e.to_string())),
        }
    }

    pub fn matches(&self, name: &str) -> bool {
        self.0.as_ref().is_none_or(|r| r.is_match(name))
    }
}

/// Helm's list selection over every record read (`records`, already passed through the
/// name filter): the latest revision of each release in each namespace (unless only
/// superseded revisions are asked for), of the selected states, matching the selector,
/// sorted, then the page.
pub fn select(records: Vec<Release>, options: &ListOptions) -> Result<Vec<Release>, QueryError> {
    let selector = Selector::parse(options.selector.as_deref().unwrap_or(""))?;
    let states = if options.states == States::NONE {
        States::ALL
    } else {
        options.states
    };
    let read = records.len();
    let mut releases = if states == States::SUPERSEDED {
        records
    } else {
        latest(records)
    };
    releases.retain(|r| states.contains(&r.status()) && selector.matches(&r.labels));
    sort(&mut releases, options.order);

    if options.offset >= releases.len() {
        return Ok(Vec::new());
    }
    // Helm bounds the page by the number of records read, not of releases kept.
    let limit = if options.limit > 0 && options.limit < read {
        options.limit
    } else {
        read
    };
    let last = (options.offset + limit).min(releases.len());
    Ok(releases.drain(options.offset..last).collect())
}

/// The newest revision of each release in each namespace.
fn latest(records: Vec<Release>) -> Vec<Release> {
    let mut newest: BTreeMap<(String, String), Release> = BTreeMap::new();
    for record in records {
        let key = (record.namespace.clone(), record.name.clone());
        match newest.get(&key) {
            Some(kept) if kept.version > record.version => {}
            _ => {
                newest.insert(key, record);
            }
        }
    }
    newest.into_values().collect()
}

/// Sorts as helm does. Helm's sort is not stable and its input comes from a Go map, so
/// helm's order of two releases that compare equal (one name in two namespaces) varies
/// from run to run; here they stay in namespace order.
fn sort(releases: &mut [Release], order: Order) {
    let date = |r: &Release| r.last_deployed().map(|t| t.unix()).unwrap_or(ZERO_UNIX);
    match order {
        Order::ByName => releases.sort_by(|a, b| a.name.cmp(&b.name)),
        Order::ByNameDesc => {
            releases.sort_by(|a, b| a.name.cmp(&b.name));
            releases.reverse();
        }
        Order::ByDateDesc | Order::ByDateAsc => {
            releases.sort_by(|a, b| date(a).cmp(&date(b)).then_with(|| a.name.cmp(&b.name)));
            if order == Order::ByDateAsc {
                releases.reverse();
            }
        }
    }
}

/// `Time.Unix()` of Go's zero time.
const ZERO_UNIX: i64 = -62_135_596_800;

/// The newest `max` revisions of a history, oldest first (as `helm history` prints them).
pub fn newest_revisions(mut history: Vec<Release>, max: usize) -> Vec<Release> {
    history.sort_by_key(|r| std::cmp::Reverse(r.version));
    history.truncate(max);
    history.reverse();
    history
}

/// The newest revision of a history.
pub fn last_revision(history: Vec<Release>) -> Option<Release> {
    history.into_iter().max_by_key(|r| r.version)
}

/// A Kubernetes label selector (`a=b,c!=d,e,!f,g in (h,i),j notin (k)`), as
/// `labels.Parse` reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector(Vec<Requirement>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

impl Selector {
    pub fn parse(text: &str) -> Result<Selector, QueryError> {
        let mut requirements = Vec::new();
        for term in split_terms(text) {
            let term = term.trim();
            if term.is_empty() {
                if text.trim().is_empty() {
                    continue;
                }
                return Err(QueryError::Selector(format!(
                    "found '', expected: identifier in selector {text:?}"
                )));
            }
            requirements.push(parse_requirement(term, text)?);
        }
        Ok(Selector(requirements))
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::In(k, values) => labels.get(k).is_some_and(|v| values.contains(v)),
            Requirement::NotIn(k, values) => labels.get(k).is_none_or(|v| !values.contains(v)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::NotExists(k) => !labels.contains_key(k),
        })
    }
}

/// Splits at commas outside parentheses.
fn split_terms(text: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    terms
}

fn parse_requirement(term: &str, whole: &str) -> Result<Requirement, QueryError> {
    let bad = || {
        QueryError::Selector(format!(
            "unable to parse requirement: {term:?} in selector {whole:?}"
        ))
    };
    if let Some(key) = term.strip_prefix('!') {
        return Ok(Requirement::NotExists(key.trim().to_owned()));
    }
    for (op, negate) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((k, v)) = term.split_once(op) {
            let (k, v) = (k.trim().to_owned(), v.trim().to_owned());
            if k.is_empty() {
                return Err(bad());
            }
            return Ok(if negate {
                Requirement::NotIn(k, vec![v])
            } else {
                Requirement::In(k, vec![v])
            });
        }
    }
    let words: Vec<&str> = term.splitn(2, char::is_whitespace).collect();
    if words.len() == 2 {
        let rest = words[1].trim();
        for (op, negate) in [("notin", true), ("in", false)] {
            if let Some(list) = rest.strip_prefix(op) {
                let list = list.trim();
                let inner = list
                    .strip_prefix('(')
                    .and_then(|l| l.strip_suffix(')'))
                    .ok_or_else(bad)?;
                let values = inner.split(',').map(|v| v.trim().to_owned()).collect();
                let key = words[0].to_owned();
                return Ok(if negate {
                    Requirement::NotIn(key, values)
                } else {
                    Requirement::In(key, values)
                });
            }
        }
        return Err(bad());
    }
    Ok(Requirement::Exists(term.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Info;
    use crate::time::GoTime;

    fn rel(name: &str, ns: &str, version: i64, status: &str, at: &str) -> Release {
        Release {
            name: name.into(),
            namespace: ns.into(),
            version,
            info: Some(Info {
                status: Status::parse(status),
                last_deployed: GoTime::parse(at).unwrap(),
                ..Info::default()
            }),
            labels: BTreeMap::from([
                ("name".into(), name.into()),
                ("status".into(), status.into()),
            ]),
            ..Release::default()
        }
    }

    fn names(list: &[Release]) -> Vec<String> {
        list.iter()
            .map(|r| format!("{}/{}.v{}", r.namespace, r.name, r.version))
            .collect()
    }

    fn records() -> Vec<Release> {
        vec![
            rel("web", "a", 1, "superseded", "2026-01-01T00:00:00Z"),
            rel("web", "a", 2, "deployed", "2026-01-03T00:00:00Z"),
            rel("db", "a", 1, "failed", "2026-01-02T00:00:00Z"),
            rel("old", "b", 1, "uninstalled", "2026-01-04T00:00:00Z"),
            rel("odd", "b", 1, "mystery", "2026-01-04T00:00:00Z"),
        ]
    }

    #[test]
    fn latest_of_each_release_in_every_state_by_default() {
        let list = select(records(), &ListOptions::default()).unwrap();
        assert_eq!(names(&list), ["a/db.v1", "b/old.v1", "a/web.v2"]);
    }

    #[test]
    fn state_flags_and_superseded_alone() {
        let options = ListOptions {
            states: States::DEPLOYED.union(States::FAILED),
            ..ListOptions::default()
        };
        assert_eq!(
            names(&select(records(), &options).unwrap()),
            ["a/db.v1", "a/web.v2"]
        );
        // Only --superseded looks at every revision, not just the latest.
        let options = ListOptions {
            states: States::SUPERSEDED,
            ..ListOptions::default()
        };
        assert_eq!(names(&select(records(), &options).unwrap()), ["a/web.v1"]);
    }

    #[test]
    fn order_and_paging() {
        let by_date = ListOptions {
            order: Order::from_flags(true, false),
            ..ListOptions::default()
        };
        assert_eq!(
            names(&select(records(), &by_date).unwrap()),
            ["a/db.v1", "a/web.v2", "b/old.v1"]
        );
        let reversed = ListOptions {
            order: Order::from_flags(false, true),
            offset: 1,
            limit: 1,
            ..ListOptions::default()
        };
        assert_eq!(names(&select(records(), &reversed).unwrap()), ["b/old.v1"]);
        let past_end = ListOptions {
            offset: 3,
            ..ListOptions::default()
        };
        assert!(select(records(), &past_end).unwrap().is_empty());
    }

    #[test]
    fn selectors() {
        let options = ListOptions {
            selector: Some("status!=deployed,name in (db, web)".into()),
            ..ListOptions::default()
        };
        assert_eq!(names(&select(records(), &options).unwrap()), ["a/db.v1"]);
        let labels = BTreeMap::from([("a".to_owned(), "1".to_owned())]);
        assert!(Selector::parse("a").unwrap().matches(&labels));
        assert!(!Selector::parse("!a").unwrap().matches(&labels));
        assert!(
            Selector::parse("a==1,b notin (2)")
                .unwrap()
                .matches(&labels)
        );
        assert!(Selector::parse("a,,b").is_err());
    }

    #[test]
    fn name_filter_is_go_regexp() {
        let filter = NameFilter::new(Some("^w.b$")).unwrap();
        assert!(filter.matches("web"));
        assert!(!filter.matches("webs"));
        assert!(NameFilter::new(Some("(")).is_err());
        assert!(NameFilter::new(None).unwrap().matches("x"));
    }

    #[test]
    fn history_and_names() {
        let history = vec![
            rel("w", "a", 2, "superseded", "2026-01-01T00:00:00Z"),
            rel("w", "a", 3, "deployed", "2026-01-01T00:00:00Z"),
            rel("w", "a", 1, "superseded", "2026-01-01T00:00:00Z"),
        ];
        let kept: Vec<i64> = newest_revisions(history.clone(), 2)
            .iter()
            .map(|r| r.version)
            .collect();
        assert_eq!(kept, [2, 3]);
        assert_eq!(last_revision(history).unwrap().version, 3);
        assert!(valid_release_name("my-app.v2"));
        for bad in ["", "My", "-a", "a-", "a..b", &"x".repeat(54)] {
            assert!(!valid_release_name(bad), "{bad}");
        }
    }
}
