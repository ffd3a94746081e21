//! Whole pages: what they show, and that chart data never becomes markup.

use crate::*;
use serde_json::json;

fn site() -> Site {
    Site {
        repo_name: "team".into(),
        repo_url: "https://charts.example.com".into(),
        oci_base: Some("oci://charts.example.com/team".into()),
        base_path: String::new(),
    }
}

fn maintainer(name: &str) -> Maintainer {
    Maintainer {
        name: name.into(),
        email: Some("ada@example.com".into()),
        url: Some("https://ada.example.com".into()),
    }
}

fn summary(name: &str, description: &str) -> ChartSummary {
    ChartSummary {
        name: name.into(),
        latest_version: "1.2.0".into(),
        app_version: Some("2.0".into()),
        description: description.into(),
        keywords: vec!["http".into()],
        maintainers: vec![maintainer("Ada")],
        version_count: 2,
        ..Default::default()
    }
}

fn detail() -> ChartDetail {
    ChartDetail {
        name: "web".into(),
        version: "1.2.0".into(),
        app_version: Some("2.0".into()),
        description: "A web server".into(),
        home: Some("https://web.example.com".into()),
        sources: vec!["https://github.com/example/web".into()],
        keywords: vec!["http".into()],
        maintainers: vec![maintainer("Ada")],
        deprecated: false,
        dependencies: vec![
            Dependency {
                name: "common".into(),
                version: "^2".into(),
                repository: "https://charts.example.com".into(),
                on_this_server: true,
            },
            Dependency {
                name: "redis".into(),
                version: "18.x".into(),
                repository: "oci://elsewhere/redis".into(),
                on_this_server: false,
            },
        ],
        readme: Some("# Web chart\n\nInstall it with **care**.\n".into()),
        values_yaml: Some("replicas: 1\nimage:\n  tag: \"1.0\" # <b>not bold</b>\n".into()),
        values_schema: Some(
            json!({"properties": {"replicas": {"type": "integer", "default": 1, "description": "How many pods"}}}),
        ),
        templates: vec![
            "templates/deployment.yaml".into(),
            "templates/service.yaml".into(),
        ],
        versions: vec![
            VersionSummary {
                version: "1.2.0".into(),
                app_version: Some("2.0".into()),
                created: Some("2026-11-20T10:00:00Z".into()),
                provenance: Provenance::Verified {
                    signer: "Ada <ada@example.com>".into(),
                },
                package_url: "/charts/web-1.2.0.tgz".into(),
            },
            VersionSummary {
                version: "1.1.0".into(),
                app_version: Some("1.9".into()),
                created: Some("2026-10-01T09:00:00Z".into()),
                provenance: Provenance::Unsigned,
                package_url: "/charts/web-1.1.0.tgz".into(),
            },
        ],
    }
}

#[test]
fn list_page_shows_matching_charts_with_links() {
    let mut old = summary("legacy", "Old and gone");
    old.deprecated = true;
    let mut signed = summary("api", "An API gateway");
    signed.signed = true;
    let charts = vec![summary("web", "A web server"), old, signed];
    let html = list_page(&site(), &charts, &ListQuery::default());
    assert!(html.contains("<a href=\"/charts/web\">web</a>"), "{html}");
    assert!(html.contains("<a href=\"/charts/api\">api</a>"), "{html}");
    assert!(
        !html.contains("legacy"),
        "deprecated charts are hidden by default"
    );
    assert!(html.contains("<span class=\"badge signed\">signed</span>"));
    assert!(html.contains(">2 charts</p>"), "{html}");
    assert!(html.contains("Maintained by Ada"));

    let query = ListQuery {
        text: "gateway".into(),
        deprecated: DeprecatedFilter::Include,
        ..Default::default()
    };
    let html = list_page(&site(), &charts, &query);
    assert!(
        html.contains("/charts/api") && !html.contains("/charts/web\""),
        "{html}"
    );
    assert!(
        html.contains("value=\"gateway\""),
        "the search box keeps the query"
    );
    assert!(html.contains("<option value=\"include\" selected>"));
}

#[test]
fn chart_page_shows_everything_a_reader_looks_for() {
    let html = chart_page(&site(), &detail());
    for expected in [
        "<title>web 1.2.0 · team</title>",
        "<h1>Web chart</h1>",
        "<strong>care</strong>",
        // values.yaml is shown as text, its markup escaped.
        "replicas: 1\nimage:\n  tag: &quot;1.0&quot; # &lt;b&gt;not bold&lt;/b&gt;",
        "<code>replicas</code></td><td>integer</td><td><code>1</code></td><td>How many pods</td>",
        "<code>templates/deployment.yaml</code>",
        "<code>templates/service.yaml</code>",
        "<a href=\"/charts/common\">common</a>",
        "<td>redis</td>",
        "<a href=\"https://ada.example.com\" rel=\"nofollow noopener noreferrer\">Ada</a>",
        "href=\"mailto:ada@example.com\"",
        "href=\"https://github.com/example/web\"",
        "helm repo add team https://charts.example.com",
        "helm install web team/web --version 1.2.0",
        "chartkit install web team/web --version 1.2.0",
        "helm install web oci://charts.example.com/team/web --version 1.2.0",
        "<time datetime=\"2026-11-20T10:00:00Z\">2026-11-20</time>",
        "<td>1.9</td>",
        "<a href=\"/charts/web/1.1.0\">1.1.0</a>",
        "verified: Ada &lt;ada@example.com&gt;",
        "href=\"/charts/web-1.2.0.tgz\"",
        "action=\"/charts/web/compare\"",
        "<option value=\"1.1.0\" selected>",
    ] {
        assert!(html.contains(expected), "missing {expected:?} in\n{html}");
    }
}

#[test]
fn long_values_are_cut_with_a_note() {
    let mut chart = detail();
    chart.values_yaml = Some("key: value\n".repeat(limits::VALUES_BYTES));
    let html = chart_page(&site(), &chart);
    assert!(
        html.len() < limits::VALUES_BYTES + 64 * 1024,
        "page of {} bytes",
        html.len()
    );
    assert!(html.contains("values.yaml is longer than 256 KiB and was cut here"));
}

#[test]
fn comparison_shows_a_changed_default_and_template_changes() {
    let from = VersionFiles {
        version: "1.1.0".into(),
        values_yaml: "replicas: 1\nimage:\n  tag: \"1.0\"\n".into(),
        templates: vec![
            ("templates/a.yaml".into(), "kind: A\n".into()),
            ("templates/old.yaml".into(), "kind: Old\n".into()),
        ],
    };
    let to = VersionFiles {
        version: "1.2.0".into(),
        values_yaml: "replicas: 3\nimage:\n  tag: \"1.0\"\n".into(),
        templates: vec![
            ("templates/a.yaml".into(), "kind: A\n".into()),
            ("templates/new.yaml".into(), "kind: <New>\n".into()),
        ],
    };
    let html = compare_page(&site(), "web", &from, &to);
    assert!(
        html.contains(
            "<span class=\"del\">-replicas: 1</span><span class=\"add\">+replicas: 3</span>"
        ),
        "{html}"
    );
    assert!(
        html.contains("<span class=\"ctx\"> image:</span>"),
        "{html}"
    );
    assert!(html.contains("<code>templates/new.yaml</code> <span class=\"badge\">added</span>"));
    assert!(html.contains("<code>templates/old.yaml</code> <span class=\"badge\">removed</span>"));
    assert!(html.contains("+kind: &lt;New&gt;"));
    assert!(
        !html.contains("templates/a.yaml"),
        "unchanged templates are only counted"
    );
    assert!(html.contains("1 template unchanged."));
}

/// Payloads as a chart author could write them in each field.
const PAYLOADS: &[&str] = &[
    "<script>alert('x')</script>",
    "\"><script>alert(1)</script>",
    "'><img src=x onerror=alert(1)>",
    "<img src=x onerror=\"alert(1)\">",
    "<svg onload=alert(1)><script>alert(2)</script></svg>",
    "<svg><a xlink:href=\"javascript:alert(3)\"><text>t</text></a></svg>",
    "<a href=\"javascript:alert(4)\">x</a>",
    "[md link](javascript:alert(5))",
    "[md link](JAVASCRIPT:alert(6))",
    "<a href=\"java&#x09;script:alert(7)\">tab</a>",
    "</textarea><script>alert(8)</script>",
    "</title><script>alert(9)</script>",
    "</code></pre><script>alert(10)</script>",
    "<iframe src=\"javascript:alert(11)\"></iframe>",
    "<body onload=alert(12)>",
    "<div style=\"background:url(javascript:alert(13))\">s</div>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(14)>",
    "<form action=\"javascript:alert(15)\"><button>b</button></form>",
    "<object data=\"data:text/html,<script>alert(16)</script>\"></object>",
];

fn hostile_detail() -> ChartDetail {
    let all = PAYLOADS.join("\n\n");
    let mut chart = detail();
    chart.description = all.clone();
    chart.readme = Some(all.clone());
    chart.values_yaml = Some(all.clone());
    chart.app_version = Some(PAYLOADS[1].into());
    chart.home = Some("javascript:alert(20)".into());
    chart.sources = vec![
        "javascript:alert(21)".into(),
        " jAvAsCrIpT:alert(22)".into(),
    ];
    chart.keywords = PAYLOADS.iter().map(|p| p.to_string()).collect();
    chart.maintainers = PAYLOADS
        .iter()
        .map(|p| Maintainer {
            name: p.to_string(),
            email: Some(p.to_string()),
            url: Some("javascript:alert(23)".into()),
        })
        .collect();
    chart.templates = PAYLOADS
        .iter()
        .map(|p| format!("templates/{p}.yaml"))
        .collect();
    chart.dependencies = vec![Dependency {
        name: PAYLOADS[0].into(),
        version: PAYLOADS[2].into(),
        repository: PAYLOADS[6].into(),
        on_this_server: true,
    }];
    chart.values_schema = Some(
        json!({"properties": {PAYLOADS[0]: {"type": PAYLOADS[4], "default": PAYLOADS[2], "description": PAYLOADS[10]}}}),
    );
    for version in &mut chart.versions {
        version.package_url = "javascript:alert(24)".into();
        version.provenance = Provenance::Signed {
            signer: Some(PAYLOADS[3].into()),
        };
    }
    chart
}

#[test]
fn hostile_chart_data_produces_no_executable_markup() {
    let chart = hostile_detail();
    let summaries: Vec<ChartSummary> = PAYLOADS
        .iter()
        .map(|p| ChartSummary {
            name: p.to_string(),
            latest_version: p.to_string(),
            app_version: Some(p.to_string()),
            description: p.to_string(),
            keywords: vec![p.to_string()],
            maintainers: vec![Maintainer {
                name: p.to_string(),
                ..Default::default()
            }],
            signed: true,
            ..Default::default()
        })
        .collect();
    let hostile_files = VersionFiles {
        version: PAYLOADS[0].into(),
        values_yaml: PAYLOADS.join("\n"),
        templates: PAYLOADS
            .iter()
            .map(|p| (p.to_string(), p.to_string()))
            .collect(),
    };
    let plain_files = VersionFiles {
        version: "1.0.0".into(),
        ..Default::default()
    };
    let query = ListQuery {
        text: "\"><script>alert(30)</script>".into(),
        deprecated: DeprecatedFilter::Include,
        ..Default::default()
    };
    let pages = [
        (
            "list",
            list_page(
                &site(),
                &summaries,
                &ListQuery {
                    deprecated: DeprecatedFilter::Include,
                    ..Default::default()
                },
            ),
        ),
        (
            "list with hostile query",
            list_page(&site(), &summaries, &query),
        ),
        ("chart", chart_page(&site(), &chart)),
        (
            "compare",
            compare_page(&site(), PAYLOADS[0], &plain_files, &hostile_files),
        ),
    ];
    for (what, html) in &pages {
        assert_no_executable_markup(what, html);
    }
    // The payloads are still there, as text.
    assert!(
        pages[2]
            .1
            .contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;")
    );
}

/// The markup of a page, tag by tag, as a browser would tokenise it (enough of it for
/// these checks: names, attributes, quoted values).
fn tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    let bytes = html.as_bytes();
    let mut tags = Vec::new();
    let mut at = 0;
    while let Some(offset) = html[at..].find('<') {
        let mut i = at + offset + 1;
        let name_start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'>' {
            i += 1;
        }
        let name = html[name_start..i].to_ascii_lowercase();
        let mut attributes = Vec::new();
        loop {
            while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b'/') {
                i += 1;
            }
            if i >= bytes.len() || bytes[i] == b'>' {
                break;
            }
            let attribute_start = i;
            while i < bytes.len()
                && !bytes[i].is_ascii_whitespace()
                && !matches!(bytes[i], b'=' | b'>')
            {
                i += 1;
            }
            let attribute = html[attribute_start..i].to_ascii_lowercase();
            let mut value = String::new();
            if i < bytes.len() && bytes[i] == b'=' {
                i += 1;
                if i < bytes.len() && matches!(bytes[i], b'"' | b'\'') {
                    let quote = bytes[i];
                    let value_start = i + 1;
                    i = value_start;
                    while i < bytes.len() && bytes[i] != quote {
                        i += 1;
                    }
                    value = html[value_start..i.min(bytes.len())].to_string();
                    i += 1;
                } else {
                    let value_start = i;
                    while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'>' {
                        i += 1;
                    }
                    value = html[value_start..i].to_string();
                }
            }
            attributes.push((attribute, value));
        }
        tags.push((name, attributes));
        at = i.min(bytes.len());
    }
    tags
}

fn assert_no_executable_markup(what: &str, html: &str) {
    let lower = html.to_ascii_lowercase();
    assert_eq!(
        lower.matches("<script").count(),
        1,
        "{what}: a script tag besides the static one:\n{html}"
    );
    assert!(
        lower.contains(&format!(
            "<script src=\"{SCRIPT_PATH}\" defer></script></body></html>"
        )),
        "{what}"
    );
    assert_eq!(
        lower.matches("</main>").count(),
        1,
        "{what}: the page's frame was broken"
    );
    assert_eq!(lower.matches("<title>").count(), 1, "{what}");
    for (name, attributes) in tags(html) {
        for forbidden in [
            "svg",
            "math",
            "iframe",
            "object",
            "embed",
            "style",
            "form action=\"javascript",
            "textarea",
            "base",
            "meta http-equiv",
            "body onload",
        ] {
            assert_ne!(name, forbidden, "{what}: <{name}> from chart data");
        }
        if name == "script" {
            assert_eq!(
                attributes,
                [
                    ("src".to_string(), SCRIPT_PATH.to_string()),
                    ("defer".to_string(), String::new())
                ],
                "{what}"
            );
        }
        for (attribute, value) in &attributes {
            assert!(
                !attribute.starts_with("on"),
                "{what}: handler {attribute}={value} on <{name}>"
            );
            assert_ne!(attribute, "style", "{what}: inline style on <{name}>");
            // Addresses are where a scheme runs; other attribute values are only text.
            let is_address = matches!(
                attribute.as_str(),
                "href"
                    | "src"
                    | "action"
                    | "formaction"
                    | "data"
                    | "poster"
                    | "srcset"
                    | "xlink:href"
                    | "background"
                    | "cite"
            );
            let value = value
                .to_ascii_lowercase()
                .replace(['\t', '\n', '\r', ' '], "");
            assert!(
                !is_address || !value.contains("javascript:") && !value.contains("data:"),
                "{what}: {attribute}={value} on <{name}>"
            );
        }
    }
}

#[test]
fn the_policy_forbids_inline_script_and_style() {
    assert!(CONTENT_SECURITY_POLICY.contains("script-src 'self'"));
    assert!(CONTENT_SECURITY_POLICY.contains("style-src 'self'"));
    assert!(!CONTENT_SECURITY_POLICY.contains("unsafe"));
    assert!(CONTENT_SECURITY_POLICY.starts_with("default-src 'none'"));
    let html = chart_page(&site(), &detail());
    assert!(!html.contains("<style") && !html.contains(" style="));
    assert!(html.contains(&format!("<link rel=\"stylesheet\" href=\"{STYLE_PATH}\">")));
    assert!(STYLE_CSS.contains("ul.charts") && SEARCH_JS.contains("fragment=1"));
}

#[test]
fn the_page_data_serialise_as_json_for_scripts() {
    let json = serde_json::to_value(detail()).unwrap();
    assert_eq!(json["name"], "web");
    assert_eq!(
        json["versions"][0]["provenance"],
        json!({"status": "verified", "signer": "Ada <ada@example.com>"})
    );
    assert_eq!(
        json["versions"][1]["provenance"],
        json!({"status": "unsigned"})
    );
    assert_eq!(
        json["values_schema"]["properties"]["replicas"]["default"],
        1
    );
}

#[test]
fn the_list_is_paged_and_the_pager_keeps_the_query() {
    let charts: Vec<ChartSummary> = (0..250)
        .map(|i| summary(&format!("chart-{i:03}"), "x"))
        .collect();
    let query = ListQuery {
        text: "chart".into(),
        signed_only: false,
        page: 1,
        ..Default::default()
    };
    let html = list_page(&site(), &charts, &query);
    assert!(html.contains(">250 charts</p>"), "{html}");
    assert!(html.contains("/charts/chart-100\"") && html.contains("/charts/chart-199\""));
    assert!(!html.contains("/charts/chart-099\"") && !html.contains("/charts/chart-200\""));
    assert!(
        html.contains("<a href=\"/?q=chart&amp;deprecated=hide&amp;page=0\">← Previous</a>"),
        "{html}"
    );
    assert!(html.contains("Page 2 of 3"));
    assert!(html.contains("&amp;page=2\">Next →</a>"));
    // A page past the end shows the last one.
    let past = ListQuery { page: 99, ..query };
    let fragment = list_results(&site(), &charts, &past);
    assert!(
        fragment.as_str().contains("/charts/chart-249\"")
            && fragment.as_str().contains("Page 3 of 3")
    );
    assert!(
        !fragment.as_str().contains("<html"),
        "the fragment is the results alone"
    );
}

#[test]
fn a_comparison_too_large_says_so_instead_of_diffing() {
    let big = "line\n".repeat(limits::COMPARE_BYTES / 4);
    let from = VersionFiles {
        version: "1".into(),
        values_yaml: big.clone(),
        ..Default::default()
    };
    let to = VersionFiles {
        version: "2".into(),
        values_yaml: format!("{big}more\n"),
        ..Default::default()
    };
    let html = compare_page(&site(), "web", &from, &to);
    assert!(
        html.contains("Too large to compare here (1024 KiB"),
        "{}",
        &html[..2000]
    );
    assert!(!html.contains("<pre class=\"diff\">"));
}

#[test]
fn long_descriptions_are_cut_in_the_list() {
    let long = "d".repeat(limits::LIST_DESCRIPTION_BYTES * 10);
    let html = list_page(&site(), &[summary("web", &long)], &ListQuery::default());
    assert!(html.contains(&format!(
        "<div>{}…</div>",
        "d".repeat(limits::LIST_DESCRIPTION_BYTES)
    )));
    assert!(!html.contains(&"d".repeat(limits::LIST_DESCRIPTION_BYTES + 1)));
}

#[test]
fn every_link_to_this_server_starts_with_the_base_path() {
    let site = Site {
        base_path: "/museum/org1/repo1".into(),
        ..site()
    };
    let mut chart = detail();
    // Download addresses are the server's to give, with its base path.
    for version in &mut chart.versions {
        version.package_url = format!("{}{}", site.base_path, version.package_url);
    }
    let pages = [
        list_page(
            &site,
            &[summary("web", "A web server")],
            &ListQuery::default(),
        ),
        chart_page(&site, &chart),
    ];
    for html in &pages {
        for attribute in ["href=\"/", "src=\"/", "action=\"/"] {
            for (at, _) in html.match_indices(attribute) {
                let rest = &html[at + attribute.len() - 1..];
                assert!(
                    rest.starts_with("/museum/org1/repo1/"),
                    "a local address outside the base path: {}",
                    &rest[..rest.len().min(60)]
                );
            }
        }
    }
    assert!(pages[0].contains("href=\"/museum/org1/repo1/charts/web\""));
    assert!(pages[0].contains("action=\"/museum/org1/repo1/\""));
    assert!(pages[1].contains("src=\"/museum/org1/repo1/_chartkit/search.js\""));
}

#[test]
fn the_repositories_of_a_server_link_to_their_lists() {
    let html = repositories_page(&site(), &[("org/a\"b".into(), 1), ("org/team".into(), 12)]);
    assert!(
        html.contains("<a href=\"/org/a%22b/\">org/a&quot;b</a>"),
        "{html}"
    );
    assert!(html.contains("<a href=\"/org/team/\">org/team</a>"));
    assert!(html.contains("12 charts") && html.contains("1 chart<"));
}
