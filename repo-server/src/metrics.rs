//! Counters for `/metrics`, in Prometheus' text exposition format. A handful of atomics is
//! all the server needs; a registry library would add more than it saves. ChartMuseum's
//! metrics are kept too, under its names ([`chartmuseum`]).

pub mod chartmuseum;
mod process;

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The routes requests are counted under.
pub const ROUTES: [&str; 9] = [
    "/",
    "/index.yaml",
    "/charts",
    "/api/charts",
    "/api/prov",
    "/health",
    "/metrics",
    "auth",
    "other",
];
const STATUSES: [u16; 15] = [
    200, 201, 204, 304, 400, 401, 403, 404, 405, 409, 413, 500, 503, 507, 0,
];
const METHODS: [&str; 5] = ["GET", "HEAD", "POST", "DELETE", "other"];

/// Counters for every (route, method, status): lock-free, since every request bumps one.
#[derive(Debug)]
pub struct Metrics {
    requests: Vec<AtomicU64>,
    uploads: AtomicU64,
    uploads_rejected: AtomicU64,
    charts: AtomicU64,
    chart_names: AtomicU64,
    /// ChartMuseum's request metrics.
    pub museum: chartmuseum::RequestMetrics,
    index_renders: AtomicU64,
    index_render_micros_total: AtomicU64,
    index_render_micros_last: AtomicU64,
    /// Chart versions of each repository of a multi-tenant server, by its path.
    repositories: Mutex<BTreeMap<String, u64>>,
    /// Each repository's chart names, for ChartMuseum's `chartmuseum_charts_served_total`.
    repository_names: Mutex<BTreeMap<String, u64>>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            requests: (0..ROUTES.len() * METHODS.len() * STATUSES.len())
                .map(|_| AtomicU64::new(0))
                .collect(),
            uploads: AtomicU64::new(0),
            uploads_rejected: AtomicU64::new(0),
            charts: AtomicU64::new(0),
            chart_names: AtomicU64::new(0),
            museum: chartmuseum::RequestMetrics::default(),
            index_renders: AtomicU64::new(0),
            index_render_micros_total: AtomicU64::new(0),
            index_render_micros_last: AtomicU64::new(0),
            repositories: Mutex::new(BTreeMap::new()),
            repository_names: Mutex::new(BTreeMap::new()),
        }
    }
}

impl Metrics {
    pub fn request(&self, route: &str, method: &str, status: u16) {
        let r = ROUTES
            .iter()
            .position(|x| *x == route)
            .unwrap_or(ROUTES.len() - 1);
        let m = METHODS
            .iter()
            .position(|x| *x == method)
            .unwrap_or(METHODS.len() - 1);
        let s = STATUSES
            .iter()
            .position(|x| *x == status)
            .unwrap_or(STATUSES.len() - 1);
        self.requests[(r * METHODS.len() + m) * STATUSES.len() + s].fetch_add(1, Ordering::Relaxed);
    }

    pub fn upload(&self, accepted: bool) {
        let counter = if accepted {
            &self.uploads
        } else {
            &self.uploads_rejected
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn set_charts(&self, count: usize) {
        self.charts.store(count as u64, Ordering::Relaxed);
    }

    /// One repository's chart versions on a multi-tenant server (`name` is its path).
    pub fn set_repository_charts(&self, name: &str, count: usize) {
        self.repositories
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_owned(), count as u64);
    }

    /// One repository's chart names on a multi-tenant server.
    pub fn set_repository_chart_names(&self, name: &str, count: usize) {
        self.repository_names
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_owned(), count as u64);
    }

    pub fn set_chart_names(&self, count: usize) {
        self.chart_names.store(count as u64, Ordering::Relaxed);
    }

    pub fn index_rendered(&self, took: Duration) {
        let micros = took.as_micros() as u64;
        self.index_renders.fetch_add(1, Ordering::Relaxed);
        self.index_render_micros_total
            .fetch_add(micros, Ordering::Relaxed);
        self.index_render_micros_last
            .store(micros, Ordering::Relaxed);
    }

    /// The last index render time, for benchmarks.
    pub fn last_render(&self) -> Duration {
        Duration::from_micros(self.index_render_micros_last.load(Ordering::Relaxed))
    }

    pub fn render(&self) -> String {
        let repositories = self
            .repositories
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let mut out = String::new();
        let mut counter = |name: &str, help: &str, kind: &str, value: String| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        };
        counter(
            "chartkit_uploads_total",
            "Chart packages accepted.",
            "counter",
            self.uploads.load(Ordering::Relaxed).to_string(),
        );
        counter(
            "chartkit_uploads_rejected_total",
            "Uploads refused (invalid, conflicting, unauthorised or too large).",
            "counter",
            self.uploads_rejected.load(Ordering::Relaxed).to_string(),
        );
        counter(
            "chartkit_chart_versions",
            "Chart versions in the index.",
            "gauge",
            (self.charts.load(Ordering::Relaxed) + repositories.values().sum::<u64>()).to_string(),
        );
        counter(
            "chartkit_index_renders_total",
            "Times index.yaml was rendered after a change.",
            "counter",
            self.index_renders.load(Ordering::Relaxed).to_string(),
        );
        counter(
            "chartkit_index_render_seconds_total",
            "Time spent rendering index.yaml.",
            "counter",
            format!(
                "{:.6}",
                self.index_render_micros_total.load(Ordering::Relaxed) as f64 / 1e6
            ),
        );
        if !repositories.is_empty() {
            let _ = writeln!(
                out,
                "# HELP chartkit_repository_chart_versions Chart versions in each repository's index.\n\
                 # TYPE chartkit_repository_chart_versions gauge"
            );
            // Repository paths are checked names (letters, digits, `._+-` and `/`), which
            // need no escaping in a label.
            for (name, count) in &repositories {
                let _ = writeln!(
                    out,
                    "chartkit_repository_chart_versions{{repository=\"{name}\"}} {count}"
                );
            }
        }
        let _ = writeln!(
            out,
            "# HELP chartkit_http_requests_total HTTP requests by route, method and status.\n\
             # TYPE chartkit_http_requests_total counter"
        );
        for (i, count) in self.requests.iter().enumerate() {
            let count = count.load(Ordering::Relaxed);
            if count == 0 {
                continue;
            }
            let route = ROUTES[i / (METHODS.len() * STATUSES.len())];
            let method = METHODS[i / STATUSES.len() % METHODS.len()];
            let status = match STATUSES[i % STATUSES.len()] {
                0 => "other".to_owned(),
                code => code.to_string(),
            };
            let _ = writeln!(
                out,
                "chartkit_http_requests_total{{route=\"{route}\",method=\"{method}\",status=\"{status}\"}} {count}"
            );
        }
        let charts = self.chart_names.load(Ordering::Relaxed) as usize;
        let versions = self.charts.load(Ordering::Relaxed) as usize;
        if repositories.is_empty() {
            self.museum.render(&[("", charts, versions)], &mut out);
        } else {
            // At depth ChartMuseum's gauges are by repository, as its cache holds them.
            let names = self
                .repository_names
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            let each: Vec<(&str, usize, usize)> = repositories
                .iter()
                .map(|(name, versions)| {
                    let charts = names.get(name).copied().unwrap_or(0);
                    (name.as_str(), charts as usize, *versions as usize)
                })
                .collect();
            self.museum.render(&each, &mut out);
        }
        process::render(&mut out);
        out
    }
}

/// A value as Prometheus' Go client writes it (`strconv.FormatFloat(v, 'g', -1, 64)`):
/// the shortest digits, in exponent form from 1e+06 up and below 1e-04.
pub fn go_float(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        return format!("{value}");
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_written_as_gos_client_writes_them() {
        for (value, text) in [
            (0.0, "0"),
            (3.0, "3"),
            (100000.0, "100000"),
            (1e6, "1e+06"),
            (2097152.0, "2.097152e+06"),
            (0.25, "0.25"),
            (0.000110882, "0.000110882"),
            (0.000012, "1.2e-05"),
            (1.8446744073709552e19, "1.8446744073709552e+19"),
        ] {
            assert_eq!(go_float(value), text);
        }
    }

    #[test]
    fn exposition_has_help_type_and_labelled_requests() {
        let metrics = Metrics::default();
        metrics.request("/index.yaml", "GET", 200);
        metrics.request("/index.yaml", "GET", 200);
        metrics.upload(true);
        let text = metrics.render();
        assert!(text.contains("# TYPE chartkit_uploads_total counter\nchartkit_uploads_total 1\n"));
        assert!(text.contains(
            "chartkit_http_requests_total{route=\"/index.yaml\",method=\"GET\",status=\"200\"} 2"
        ));
        assert!(!text.contains("chartkit_repository_chart_versions"));
    }

    #[test]
    fn repositories_are_counted_apart_and_in_the_total() {
        let metrics = Metrics::default();
        metrics.set_charts(1);
        metrics.set_repository_charts("org/a", 2);
        metrics.set_repository_charts("org/b", 3);
        let text = metrics.render();
        assert!(text.contains("\nchartkit_chart_versions 6\n"), "{text}");
        assert!(text.contains("chartkit_repository_chart_versions{repository=\"org/a\"} 2\n"));
        assert!(text.contains("chartkit_repository_chart_versions{repository=\"org/b\"} 3\n"));
        metrics.set_repository_chart_names("org/a", 1);
        let text = metrics.render();
        assert!(text.contains("chartmuseum_chart_versions_served_total{repo=\"org/a\"} 2\n"));
        assert!(text.contains("chartmuseum_charts_served_total{repo=\"org/a\"} 1\n"));
        assert!(text.contains("chartmuseum_charts_served_total{repo=\"org/b\"} 0\n"));
    }
}
