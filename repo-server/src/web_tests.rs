//! The web view through the router: pages beside the package downloads, the provenance
//! of each version, the comparison, and the view turned off.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};

use crate::publish::tests::{Settings, package, server, sign};

async fn page(server: &crate::publish::tests::Server, uri: &str) -> (StatusCode, String) {
    server
        .send(
            Request::get(uri)
                .header(header::ACCEPT, "text/html,application/xhtml+xml,*/*;q=0.8")
                .body(Body::empty())
                .unwrap(),
        )
        .await
}

fn web_settings() -> Settings {
    Settings {
        web: true,
        ..Settings::default()
    }
}

const README: &[u8] = b"# Demo chart\n\nInstalls *demo*.\n\n<script>window.__xss=1</script>\n";

fn demo(version: &str, replicas: u32) -> Vec<u8> {
    let values = format!("# how many\nreplicaCount: {replicas}\n");
    package(
        "demo",
        version,
        &[
            ("README.md", README),
            ("values.yaml", values.as_bytes()),
            ("templates/deployment.yaml", b"kind: Deployment\n"),
        ],
    )
}

#[tokio::test]
async fn a_browser_gets_the_list_and_curl_keeps_the_banner() {
    let server = server(web_settings()).await;
    assert_eq!(
        server.upload(&demo("1.0.0", 1)).await.0,
        StatusCode::CREATED
    );
    assert_eq!(
        server.upload(&package("other", "0.1.0", &[])).await.0,
        StatusCode::CREATED
    );

    let (status, html) = page(&server, "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("<a href=\"/charts/demo\">demo</a>"), "{html}");
    assert!(html.contains("<a href=\"/charts/other\">other</a>"));
    let (_, found) = page(&server, "/?q=dem&fragment=1").await;
    assert!(found.contains("/charts/demo\"") && !found.contains("/charts/other\""));
    assert!(!found.contains("<html"), "a fragment is the results alone");

    let (status, banner) = server.get("/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(banner.starts_with("chartkit chart repository"), "{banner}");

    let (_, json) = server
        .send(
            Request::get("/?q=other")
                .header(header::ACCEPT, "application/json")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    let list: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(list[0]["name"], "other", "{json}");
    assert_eq!(list.as_array().unwrap().len(), 1);

    // The list is made again after a change.
    server.upload(&package("third", "1.0.0", &[])).await;
    assert!(page(&server, "/").await.1.contains("/charts/third\""));
}

#[tokio::test]
async fn a_chart_page_shows_readme_values_templates_and_versions_beside_the_downloads() {
    let server = server(web_settings()).await;
    let old = demo("1.0.0", 1);
    server.upload(&old).await;
    server.upload(&demo("1.1.0", 3)).await;

    let (status, html) = page(&server, "/charts/demo").await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(
        html.contains("<h1>Demo chart</h1>"),
        "README rendered: {html}"
    );
    assert!(!html.contains("<script>window"), "README script removed");
    assert!(html.contains("replicaCount: 3"), "newest version's values");
    assert!(html.contains("templates/deployment.yaml"));
    assert!(html.contains("<a href=\"/charts/demo/1.0.0\">1.0.0</a>"));
    assert!(html.contains("href=\"/charts/demo-1.0.0.tgz\""));

    let (status, html) = page(&server, "/charts/demo/1.0.0").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("replicaCount: 1"));

    // Downloads under /charts/ are as they were.
    let response = server.get("/charts/demo-1.0.0.tgz").await;
    assert_eq!(response.0, StatusCode::OK);
    assert_eq!(response.1.len(), String::from_utf8_lossy(&old).len());

    let (status, html) = page(&server, "/charts/demo/compare?from=1.0.0&to=1.1.0").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("replicaCount: 1") && html.contains("replicaCount: 3"));
    assert!(
        html.contains("class=\"del\"") || html.contains("<del"),
        "{html}"
    );

    assert_eq!(
        page(&server, "/charts/demo/9.9.9").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        page(&server, "/charts/absent").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        page(&server, "/charts/demo/compare?from=1.0.0").await.0,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn signed_versions_show_their_signer_verified_against_the_keyring() {
    let server = server(Settings {
        require_signature: true,
        ..web_settings()
    })
    .await;
    let chart = demo("2.0.0", 2);
    let prov = sign(&chart, "demo", "2.0.0");
    let (status, body) = server
        .upload_parts(&[("chart", &chart), ("prov", &prov)])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, html) = page(&server, "/charts/demo").await;
    assert!(
        html.contains("verified: Test Signer &lt;signer@example.com&gt;"),
        "{html}"
    );
    let (_, list) = page(&server, "/?signed=1").await;
    assert!(list.contains("/charts/demo\""), "{list}");
}

#[tokio::test]
async fn without_a_keyring_a_signed_version_names_its_key() {
    let server = server(web_settings()).await;
    let chart = demo("2.0.0", 2);
    let prov = sign(&chart, "demo", "2.0.0");
    server
        .upload_parts(&[("chart", &chart), ("prov", &prov)])
        .await;
    server.upload(&demo("1.0.0", 1)).await;
    let (_, html) = page(&server, "/charts/demo").await;
    assert!(html.contains("signed by key "), "{html}");
    assert!(html.contains("unsigned"), "1.0.0 has no .prov: {html}");
}

#[tokio::test]
async fn pages_under_a_context_path_link_under_it() {
    let server = server(Settings {
        context_path: "/museum".to_owned(),
        ..web_settings()
    })
    .await;
    server.upload(&demo("1.0.0", 1)).await;
    let (_, list) = page(&server, "/").await;
    assert!(list.contains("href=\"/museum/charts/demo\""), "{list}");
    assert!(list.contains("href=\"/museum/_chartkit/web.css\""));
    let (_, chart) = page(&server, "/charts/demo").await;
    assert!(
        chart.contains("href=\"/museum/charts/demo-1.0.0.tgz\""),
        "{chart}"
    );
}

#[tokio::test]
async fn with_the_web_view_off_nothing_but_the_banner_and_downloads_answer() {
    let server = server(Settings::default()).await;
    server.upload(&demo("1.0.0", 1)).await;
    let (_, root) = page(&server, "/").await;
    assert!(root.starts_with("chartkit chart repository"), "{root}");
    assert_eq!(
        page(&server, "/charts/demo").await.0,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        page(&server, "/charts/demo/1.0.0").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        page(&server, "/_chartkit/web.css").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(server.get("/charts/demo-1.0.0.tgz").await.0, StatusCode::OK);
}

#[tokio::test]
async fn every_page_carries_the_content_security_policy() {
    let server = server(web_settings()).await;
    server.upload(&demo("1.0.0", 1)).await;
    for uri in ["/", "/charts/demo", "/charts/demo/1.0.0"] {
        let response = tower::ServiceExt::oneshot(
            crate::api::router(server.state.clone()),
            Request::get(uri)
                .header(header::ACCEPT, "text/html")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
        assert_eq!(
            response.headers()["content-security-policy"],
            chartkit_web::CONTENT_SECURITY_POLICY,
            "{uri}"
        );
        assert_eq!(response.headers()[header::VARY], "Accept");
    }
}
