//! The metrics ChartMuseum exposes, under its names, labels and types, so dashboards and
//! alerts built on a ChartMuseum keep working: the repository gauges
//! (`chartmuseum_charts_served_total`, `chartmuseum_chart_versions_served_total`, by
//! `repo`) and its request metrics (`chartmuseum_requests_total`,
//! `chartmuseum_request_duration_seconds`, `chartmuseum_request_size_bytes`,
//! `chartmuseum_response_size_bytes`). The process collector is `super::process`; Go's
//! runtime collector (`go_*`) is not imitated.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

/// The handler every ChartMuseum request is counted under: its router sends every request
/// through one gin `NoRoute` handler, whose Go name gin reports.
pub const HANDLER: &str = "helm.sh/chartmuseum/pkg/chartmuseum/router.(*Router).rootHandler-fm";

/// client_golang's default histogram buckets, which ChartMuseum keeps.
const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Series kept per family: the labels carry the client's `Host` and the URL with its
/// query, so without a bound a client could grow the server's memory at will.
const MAX_SERIES: usize = 4096;

/// One request as ChartMuseum's middleware sees it.
pub struct Request<'a> {
    pub code: u16,
    pub method: &'a str,
    pub host: &'a str,
    /// [`url_label`] of the request.
    pub url: &'a str,
    pub seconds: f64,
    pub request_size: u64,
    pub response_size: u64,
}

#[derive(Debug, Default)]
struct Histogram {
    buckets: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

#[derive(Debug, Default)]
struct Summary {
    sum: f64,
    count: u64,
}

#[derive(Debug, Default)]
struct Series {
    /// (code, handler, host, method, url): the labels in the order Prometheus prints them.
    requests: BTreeMap<(String, String, String, String), u64>,
    /// (code, method, url).
    durations: BTreeMap<(String, String, String), Histogram>,
    request_sizes: Summary,
    response_sizes: Summary,
}

/// ChartMuseum's request metrics.
#[derive(Debug, Default)]
pub struct RequestMetrics {
    series: Mutex<Series>,
}

impl RequestMetrics {
    /// Counts a request as ChartMuseum does: not `/metrics` itself, nor a 404 or 405.
    pub fn record(&self, request: &Request<'_>) {
        if matches!(request.code, 404 | 405) {
            return;
        }
        let code = request.code.to_string();
        let mut series = self.series.lock().unwrap_or_else(|e| e.into_inner());
        let key = (
            code.clone(),
            request.host.to_owned(),
            request.method.to_owned(),
            request.url.to_owned(),
        );
        if series.requests.len() < MAX_SERIES || series.requests.contains_key(&key) {
            *series.requests.entry(key).or_default() += 1;
        }
        let key = (code, request.method.to_owned(), request.url.to_owned());
        if series.durations.len() < MAX_SERIES || series.durations.contains_key(&key) {
            let histogram = series.durations.entry(key).or_default();
            for (count, bound) in histogram.buckets.iter_mut().zip(BUCKETS) {
                if request.seconds <= bound {
                    *count += 1;
                }
            }
            histogram.sum += request.seconds;
            histogram.count += 1;
        }
        series.request_sizes.sum += request.request_size as f64;
        series.request_sizes.count += 1;
        series.response_sizes.sum += request.response_size as f64;
        series.response_sizes.count += 1;
    }

    /// Appends the families in Prometheus' text format, with the repository gauges: each
    /// repository's name (empty for the one repository of a server without tenants), its
    /// charts and its chart versions.
    pub fn render(&self, repositories: &[(&str, usize, usize)], out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP chartmuseum_chart_versions_served_total Current number of chart versions served\n\
             # TYPE chartmuseum_chart_versions_served_total gauge"
        );
        for (repo, _, versions) in repositories {
            let _ = writeln!(
                out,
                "chartmuseum_chart_versions_served_total{{repo=\"{}\"}} {}",
                escape(repo),
                count(*versions as u64)
            );
        }
        let _ = writeln!(
            out,
            "# HELP chartmuseum_charts_served_total Current number of charts served\n\
             # TYPE chartmuseum_charts_served_total gauge"
        );
        for (repo, charts, _) in repositories {
            let _ = writeln!(
                out,
                "chartmuseum_charts_served_total{{repo=\"{}\"}} {}",
                escape(repo),
                count(*charts as u64)
            );
        }
        let series = self.series.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(
            out,
            "# HELP chartmuseum_request_duration_seconds The HTTP request latencies in seconds.\n\
             # TYPE chartmuseum_request_duration_seconds histogram"
        );
        for ((code, method, url), histogram) in &series.durations {
            let labels = format!(
                "code=\"{code}\",method=\"{}\",url=\"{}\"",
                escape(method),
                escape(url)
            );
            for (observed, bound) in histogram.buckets.iter().zip(BUCKETS) {
                let _ = writeln!(
                    out,
                    "chartmuseum_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {}",
                    count(*observed)
                );
            }
            let _ = writeln!(
                out,
                "chartmuseum_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}\n\
                 chartmuseum_request_duration_seconds_sum{{{labels}}} {}\n\
                 chartmuseum_request_duration_seconds_count{{{labels}}} {}",
                count(histogram.count),
                super::go_float(histogram.sum),
                count(histogram.count)
            );
        }
        summary(
            out,
            "chartmuseum_request_size_bytes",
            "The HTTP request sizes in bytes.",
            &series.request_sizes,
        );
        let _ = writeln!(
            out,
            "# HELP chartmuseum_requests_total How many HTTP requests processed, partitioned by status code and HTTP method.\n\
             # TYPE chartmuseum_requests_total counter"
        );
        for ((code, host, method, url), requests) in &series.requests {
            let _ = writeln!(
                out,
                "chartmuseum_requests_total{{code=\"{code}\",handler=\"{HANDLER}\",host=\"{}\",method=\"{}\",url=\"{}\"}} {}",
                escape(host),
                escape(method),
                escape(url),
                count(*requests)
            );
        }
        summary(
            out,
            "chartmuseum_response_size_bytes",
            "The HTTP response sizes in bytes.",
            &series.response_sizes,
        );
    }
}

fn summary(out: &mut String, name: &str, help: &str, summary: &Summary) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} summary\n{name}_sum {}\n{name}_count {}",
        super::go_float(summary.sum),
        count(summary.count)
    );
}

/// A count as the Go client writes every sample: as a float.
fn count(n: u64) -> String {
    super::go_float(n as f64)
}

/// A label value escaped as the text format asks: backslash, quote and newline.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The `url` label ChartMuseum gives a request: its path and query with each route
/// parameter's value replaced by `:NAME`, each at its first `/VALUE` standing as a whole
/// word (Go's `(^.*?)/\bVALUE\b(.*$)`), in the order its router lists the parameters, the
/// repository last. The repository of a server without tenants is the empty string, whose
/// `/\b\b` matches the first `/` before a word character: `/index.yaml` is counted as
/// `/:repoindex.yaml`, as ChartMuseum counts it.
pub fn url_label(path_and_query: &str, params: &[(&str, &str)]) -> String {
    let mut url = path_and_query.to_owned();
    for (key, value) in params {
        if let Some(start) = find_word(&url, value) {
            url = format!(
                "{}/:{key}{}",
                &url[..start],
                &url[start + 1 + value.len()..]
            );
        }
    }
    url
}

/// Where `/VALUE` first occurs with a word boundary on both sides of VALUE.
fn find_word(text: &str, value: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let word = |i: usize| {
        bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    };
    let boundary = |i: usize| {
        let before = i > 0 && word(i - 1);
        before != word(i)
    };
    (0..bytes.len()).find(|&slash| {
        let start = slash + 1;
        let end = start + value.len();
        bytes[slash] == b'/'
            && text.get(start..end) == Some(value)
            && boundary(start)
            && boundary(end)
    })
}

/// The route parameters ChartMuseum's router finds in a path of a server without tenants
/// (the repository, `""`, always last), in its order; `None` for paths it routes without
/// parameters or not at all.
pub fn depth0_params(method: &str, path: &str) -> Vec<(&'static str, String)> {
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let repo = ("repo", String::new());
    match (method, segments.as_slice()) {
        ("GET" | "HEAD", ["index.yaml"]) => vec![repo],
        ("GET", ["charts", file]) => vec![("filename", (*file).to_owned()), repo],
        ("GET" | "POST", ["api", "charts"]) | ("POST", ["api", "prov"]) => vec![repo],
        ("GET" | "HEAD", ["api", "charts", name]) => vec![("name", (*name).to_owned()), repo],
        ("GET" | "HEAD" | "DELETE", ["api", "charts", name, version])
        | ("GET", ["api", "charts", name, version, "templates" | "values"]) => vec![
            ("name", (*name).to_owned()),
            ("version", (*version).to_owned()),
            repo,
        ],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(method: &str, path: &str, query: &str) -> String {
        let params = depth0_params(method, path);
        let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        url_label(&format!("{path}{query}"), &params)
    }

    #[test]
    fn url_labels_are_chartmuseums_route_templates() {
        assert_eq!(label("GET", "/index.yaml", ""), "/:repoindex.yaml");
        assert_eq!(
            label("GET", "/charts/mychart-0.1.0.tgz", ""),
            "/:repocharts/:filename"
        );
        assert_eq!(
            label("GET", "/api/charts", "?offset=1&limit=2"),
            "/:repoapi/charts?offset=1&limit=2"
        );
        assert_eq!(
            label("DELETE", "/api/charts/mychart/0.1.0", ""),
            "/:repoapi/charts/:name/:version"
        );
        assert_eq!(label("GET", "/health", ""), "/health");
        assert_eq!(label("GET", "/", ""), "/");
        // The first whole-word occurrence is replaced, wherever it is.
        assert_eq!(
            label("GET", "/api/charts/api", ""),
            "/:name/:repocharts/api"
        );
        // Whole words only: `my` is not one at the start of `mychart`. But Go's `\b`
        // sees one between `1` and `.`, so `0.1` is replaced inside `0.1.0`.
        assert_eq!(url_label("/mychart/my", &[("v", "my")]), "/mychart/:v");
        assert_eq!(url_label("/a/0.1.0/0.1", &[("v", "0.1")]), "/a/:v.0/0.1");
    }

    #[test]
    fn exposition_has_chartmuseums_families() {
        let metrics = RequestMetrics::default();
        for (code, seconds) in [(200, 0.003), (200, 0.2), (404, 0.001)] {
            metrics.record(&Request {
                code,
                method: "GET",
                host: "charts.example:8080",
                url: "/:repoindex.yaml",
                seconds,
                request_size: 100,
                response_size: 50,
            });
        }
        let mut out = String::new();
        metrics.render(&[("", 2, 3)], &mut out);
        for expected in [
            "# TYPE chartmuseum_charts_served_total gauge\nchartmuseum_charts_served_total{repo=\"\"} 2\n",
            "# TYPE chartmuseum_chart_versions_served_total gauge\nchartmuseum_chart_versions_served_total{repo=\"\"} 3\n",
            "# TYPE chartmuseum_requests_total counter\nchartmuseum_requests_total{code=\"200\",handler=\"helm.sh/chartmuseum/pkg/chartmuseum/router.(*Router).rootHandler-fm\",host=\"charts.example:8080\",method=\"GET\",url=\"/:repoindex.yaml\"} 2\n",
            "chartmuseum_request_duration_seconds_bucket{code=\"200\",method=\"GET\",url=\"/:repoindex.yaml\",le=\"0.005\"} 1\n",
            "chartmuseum_request_duration_seconds_bucket{code=\"200\",method=\"GET\",url=\"/:repoindex.yaml\",le=\"0.25\"} 2\n",
            "chartmuseum_request_duration_seconds_count{code=\"200\",method=\"GET\",url=\"/:repoindex.yaml\"} 2\n",
            "# TYPE chartmuseum_request_size_bytes summary\nchartmuseum_request_size_bytes_sum 200\nchartmuseum_request_size_bytes_count 2\n",
            "chartmuseum_response_size_bytes_sum 100\n",
        ] {
            assert!(out.contains(expected), "{expected} not in\n{out}");
        }
        assert!(!out.contains("code=\"404\""), "{out}");
    }
}
