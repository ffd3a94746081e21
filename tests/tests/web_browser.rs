//! `chartkit serve`'s web view in headless Chromium: what a person finds on the pages (the
//! search, a chart's README, values and versions, the signer, a comparison) and that a
//! chart whose every field is an XSS payload runs no script of its own on any page.
//! Screenshots of each page go to `target/web-screenshots/` for review (README.md shows
//! copies from `docs/screenshots/`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use chartkit_tests::TestContext;
use chartkit_tests::browser::Browser;
use chartkit_tests::server::ServeProcess;
use serde_json::Value;

/// Corpus charts the list shows beside the test's own: real READMEs, schemas, many values.
const CORPUS_CHARTS: &[&str] = &[
    "podinfo-6.14.1.tgz",
    "grafana-12.11.1.tgz",
    "traefik-41.3.0.tgz",
    "metrics-server-3.13.1.tgz",
    "external-dns-1.21.1.tgz",
    "sealed-secrets-2.18.5.tgz",
];

/// Payloads a chart author could write into any field. Each one that ran would set
/// `window.__xss` (or open a dialog), which the tests look for after every page.
const PAYLOADS: &[&str] = &[
    "<script>window.__xss=1</script>",
    "\"><script>window.__xss=1</script>",
    "'><img src=x onerror=window.__xss=1>",
    "<img src=x onerror=\"window.__xss=1\">",
    "<img src=x onerror=\"alert('xss')\">",
    "<svg onload=\"window.__xss=1\"><script>window.__xss=1</script></svg>",
    "<svg><a xlink:href=\"javascript:window.__xss=1\"><text>t</text></a></svg>",
    "<a href=\"javascript:window.__xss=1\">html link</a>",
    "<a href=\"JaVaScRiPt:alert('xss')\">cased link</a>",
    "[md link](javascript:window.__xss=1)",
    "[md link upper](JAVASCRIPT:window.__xss=1)",
    "<a href=\"java&#x09;script:window.__xss=1\">tab link</a>",
    "</textarea><script>window.__xss=1</script>",
    "</title><script>window.__xss=1</script>",
    "</code></pre><script>window.__xss=1</script>",
    "<iframe src=\"javascript:window.__xss=1\"></iframe>",
    "<body onload=\"window.__xss=1\">",
    "<details open ontoggle=\"window.__xss=1\">d</details>",
    "<input autofocus onfocus=\"window.__xss=1\">",
    "<div style=\"background:url(javascript:window.__xss=1)\">s</div>",
    "<math><mtext><table><mglyph><style><img src=x onerror=\"window.__xss=1\">",
    "<form action=\"javascript:window.__xss=1\"><button>b</button></form>",
    "<object data=\"data:text/html,<script>parent.__xss=1</script>\"></object>",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:window.__xss=1\">",
];

/// A repository served by `chartkit serve` with the web view, and a browser to look at it.
struct Site {
    // Dropped in this order: the browser, the server, then the server's files.
    browser: Browser,
    server: ServeProcess,
    _ctx: TestContext,
}

impl Site {
    async fn start(test: &str) -> Option<Site> {
        Site::start_with(test, |_| Vec::new()).await
    }

    /// [`Site::start`] with more arguments for `chartkit serve`, made once the test's
    /// directory exists (for files they name).
    async fn start_with(
        test: &str,
        serve_args: impl FnOnce(&TestContext) -> Vec<String>,
    ) -> Option<Site> {
        let corpus = chartkit_tests::corpus::corpus_or_skip(test)?;
        let browser = Browser::start_or_skip(test).await?;
        let ctx = TestContext::new();
        let repo = ctx.path("repo");
        std::fs::create_dir(&repo).unwrap();
        for name in CORPUS_CHARTS {
            let package = chartkit_tests::corpus::packages(&corpus)
                .into_iter()
                .find(|p| p.file_name().is_some_and(|f| f == *name))
                .unwrap_or_else(|| panic!("{name} is not in the corpus"));
            std::fs::copy(&package, repo.join(name)).unwrap();
        }
        let keyring = webapp_versions(&ctx, &repo);
        hostile_versions(&ctx, &repo);
        let mut args = vec![
            repo.to_str().unwrap(),
            "--keyring",
            keyring.to_str().unwrap(),
        ];
        let extra = serve_args(&ctx);
        args.extend(extra.iter().map(String::as_str));
        let server = ServeProcess::start(ctx.chartkit(), &args, ctx.dir());
        Some(Site {
            browser,
            server,
            _ctx: ctx,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.url)
    }
}

fn run_ok(command: &mut Command) {
    let output = command.output().expect("run command");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}{}",
        chartkit_tests::stdout(&output),
        chartkit_tests::stderr(&output)
    );
}

/// Writes a chart directory: Chart.yaml from `chart_yaml` plus the given files.
fn write_chart(dir: &Path, chart_yaml: &str, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir.join("templates")).unwrap();
    std::fs::write(dir.join("Chart.yaml"), chart_yaml).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

const WEBAPP_README: &str = "# Webapp chart\n\nA small web server for the browser tests.\n\n\
    ## Parameters\n\n| name | default |\n| --- | --- |\n| `replicaCount` | 3 |\n";

const WEBAPP_TEMPLATE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicaCount }}\n";

/// `webapp` 1.0.0 (unsigned, `replicaCount: 1`) and 1.1.0 (`replicaCount: 3`, signed by
/// "Web Signer"); returns the public keyring that verifies the signature.
fn webapp_versions(ctx: &TestContext, repo: &Path) -> PathBuf {
    let keys = ctx.path("keys");
    run_ok(
        ctx.chartkit()
            .args(["key", "generate", "--name", "Web Signer"])
            .args(["--email", "web@example.com", "-o"])
            .arg(&keys),
    );
    for (version, replicas, signed) in [("1.0.0", 1, false), ("1.1.0", 3, true)] {
        let dir = ctx.path(&format!("webapp-{version}/webapp"));
        write_chart(
            &dir,
            &format!(
                "apiVersion: v2\nname: webapp\nversion: {version}\nappVersion: \"2.{replicas}\"\n\
                 description: A small web server for the browser tests\nkeywords:\n- http\n- demo\n\
                 maintainers:\n- name: Ada Lovelace\n  email: ada@example.com\n"
            ),
            &[
                ("README.md", WEBAPP_README),
                (
                    "values.yaml",
                    &format!(
                        "# How many pods serve requests.\nreplicaCount: {replicas}\nimage:\n  repository: nginx\n  tag: \"1.27\"\n"
                    ),
                ),
                ("templates/deployment.yaml", WEBAPP_TEMPLATE),
            ],
        );
        let mut package = ctx.chartkit();
        package.arg("package").arg(&dir).arg("-d").arg(repo);
        if signed {
            package
                .args(["--sign", "--key", "web@example.com", "--keyring"])
                .arg(keys.join("secret.asc"));
        }
        run_ok(&mut package);
    }
    keys.join("public.gpg")
}

/// `hostile` 6.6.5 and 6.6.6: every field a chart author controls carries the payloads.
/// Deprecated, so the list shows it only when asked to (and its screenshot stays readable).
fn hostile_versions(ctx: &TestContext, repo: &Path) {
    let all = PAYLOADS.join("\n\n");
    let quoted = |text: &str| serde_json::to_string(text).unwrap();
    let mut chart_yaml =
        String::from("apiVersion: v2\nname: hostile\nversion: VERSION\ndeprecated: true\n");
    chart_yaml.push_str(&format!("description: {}\n", quoted(&all)));
    chart_yaml.push_str(&format!("appVersion: {}\n", quoted(PAYLOADS[1])));
    chart_yaml.push_str("home: \"javascript:window.__xss=1\"\n");
    chart_yaml
        .push_str("sources:\n- \"javascript:window.__xss=1\"\n- \"JAVASCRIPT:alert('xss')\"\n");
    chart_yaml.push_str("keywords:\n");
    for payload in PAYLOADS {
        chart_yaml.push_str(&format!("- {}\n", quoted(payload)));
    }
    chart_yaml.push_str("maintainers:\n");
    for (index, payload) in PAYLOADS.iter().enumerate() {
        chart_yaml.push_str(&format!(
            "- name: {}\n  email: {}\n  url: {}\n",
            quoted(payload),
            quoted(&format!(
                "x\"onmouseover=\"window.__xss={index}@example.com"
            )),
            quoted("javascript:window.__xss=1"),
        ));
    }
    let mut readme = String::from("# Hostile chart\n\n");
    readme.push_str(&all);
    readme.push_str("\n\n<a href=\"#\" onclick=\"window.__xss=1\">click me</a>\n");
    let values: String = PAYLOADS
        .iter()
        .enumerate()
        .map(|(index, payload)| format!("payload{index}: {}\n", quoted(payload)))
        .collect();
    for (version, extra) in [
        ("6.6.5", ""),
        (
            "6.6.6",
            "added: \"</code></pre><img src=x onerror=window.__xss=1>\"\n",
        ),
    ] {
        let dir = ctx.path(&format!("hostile-{version}/hostile"));
        write_chart(
            &dir,
            &chart_yaml.replace("VERSION", version),
            &[
                ("README.md", &readme),
                ("values.yaml", &format!("{values}{extra}")),
                (
                    "templates/configmap.yaml",
                    &format!(
                        "# {}\napiVersion: v1\nkind: ConfigMap\n# {version} {}\n",
                        PAYLOADS[0], PAYLOADS[3]
                    ),
                ),
            ],
        );
        run_ok(ctx.chartkit().arg("package").arg(&dir).arg("-d").arg(repo));
    }
}

/// Polls `script` (a function body returning a boolean) until it is true.
async fn wait_for(browser: &Browser, what: &str, script: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if browser.eval(script).await == Value::Bool(true) {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The page shown now ran no script but the server's own and holds nothing that could.
async fn assert_no_script_ran(browser: &Browser, page: &str) {
    if let Some(text) = browser.open_dialog().await {
        panic!("{page}: a dialog is open: {text:?}");
    }
    let report = browser
        .eval(
            r#"
            const attributes = [];
            for (const element of document.querySelectorAll("*")) {
                for (const attribute of element.attributes) {
                    const name = attribute.name.toLowerCase();
                    const value = attribute.value.replace(/[\s\u0000-\u001f]/g, "").toLowerCase();
                    if (name.startsWith("on")) {
                        attributes.push(element.tagName + " " + name);
                    }
                    if (["href", "src", "action", "formaction", "data", "xlink:href"].includes(name)
                        && (value.startsWith("javascript:") || value.startsWith("data:"))) {
                        attributes.push(element.tagName + " " + name + "=" + attribute.value);
                    }
                }
            }
            return {
                scripts: Array.from(document.scripts).map(s => s.getAttribute("src")),
                xss: window.__xss === undefined ? null : String(window.__xss),
                attributes: attributes,
                frames: document.querySelectorAll("iframe, object, embed, frame").length,
                svg: document.querySelectorAll("svg, math").length,
                title: document.title,
            };
            "#,
        )
        .await;
    let scripts = report["scripts"].as_array().unwrap();
    assert!(
        scripts.len() == 1
            && scripts[0]
                .as_str()
                .is_some_and(|src| src.ends_with("/_chartkit/search.js")),
        "{page}: the only script is the server's: {report}"
    );
    assert_eq!(
        report["xss"],
        Value::Null,
        "{page}: a payload ran: {report}"
    );
    assert_eq!(
        report["attributes"],
        serde_json::json!([]),
        "{page}: an event handler or script address is in the page: {report}"
    );
    assert_eq!(report["frames"], 0, "{page}: {report}");
    assert_eq!(report["svg"], 0, "{page}: {report}");
}

/// The page's Content-Security-Policy is in force: markup with an inline handler put into
/// the page after it loaded (as a sanitiser's miss would be) does not run it.
async fn assert_policy_blocks_inline_script(browser: &Browser, page: &str) {
    browser
        .eval(
            "document.body.insertAdjacentHTML('beforeend', \
             '<img src=\"data:,\" onerror=\"window.__policy=1\"><img src=\"/nothing-here.png\" onerror=\"window.__policy=2\">'); \
             return true;",
        )
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        browser.eval("return window.__policy === undefined;").await,
        true,
        "{page}: an inline handler ran, so the page was sent without its script-src policy"
    );
}

async fn text_of(browser: &Browser, selector: &str) -> String {
    let script = format!(
        "const e = document.querySelector({}); return e ? e.textContent : null;",
        serde_json::to_string(selector).unwrap()
    );
    match browser.eval(&script).await {
        Value::String(text) => text,
        other => panic!("no `{selector}` on the page ({other})"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_finds_charts_by_typing_and_by_submitting_the_form() {
    let Some(site) = Site::start("web_search").await else {
        return;
    };
    let browser = &site.browser;
    browser.goto(&site.url("/")).await;
    let names = text_of(browser, "#results").await;
    for name in ["podinfo", "grafana", "webapp"] {
        assert!(names.contains(name), "the list shows {name}: {names}");
    }
    assert!(
        !names.contains("hostile"),
        "a deprecated chart is hidden by default: {names}"
    );
    browser.screenshot("web-list").await;

    // With the script: typing changes the results in place, no page is loaded.
    search_in_place(browser, "webapp", "webapp", "grafana").await;
    let link = browser
        .eval("return Array.from(document.querySelectorAll('#results a')).map(a => a.getAttribute('href'));")
        .await;
    assert!(
        link.as_array()
            .unwrap()
            .iter()
            .any(|a| a == "/charts/webapp"),
        "the result links to the chart: {link}"
    );
    assert_no_script_ran(browser, "list after typing").await;
    browser.screenshot("web-search").await;

    // Submitting the form: an ordinary GET with the query in the address.
    input_search(browser, "visualizing").await;
    let form = browser
        .client
        .form(fantoccini::Locator::Css("form.search"))
        .await
        .unwrap();
    form.submit().await.unwrap();
    wait_for(
        browser,
        "the submitted search's page",
        "return window.__samePage === undefined && document.readyState === 'complete';",
    )
    .await;
    let address = browser.client.current_url().await.unwrap();
    assert_eq!(
        address
            .query_pairs()
            .find(|(k, _)| k == "q")
            .map(|(_, v)| v.into_owned()),
        Some("visualizing".to_owned()),
        "{address}"
    );
    let results = text_of(browser, "#results").await;
    assert!(
        results.contains("grafana") && !results.contains("webapp"),
        "{results}"
    );
    assert_eq!(
        browser
            .eval("return document.querySelector('form.search input[name=q]').value;")
            .await,
        "visualizing",
        "the search box keeps the query"
    );

    // A word only the hostile chart has, with deprecated charts included, brings its
    // payloads into the results the script puts in place.
    input_search(browser, "xss").await;
    // Chosen as a person does, so the select's change event reaches the script.
    browser
        .client
        .find(fantoccini::Locator::Css(
            "form.search select[name=deprecated]",
        ))
        .await
        .expect("the deprecated filter")
        .select_by_value("include")
        .await
        .unwrap();
    wait_for(
        browser,
        "the hostile chart in the results",
        "return document.getElementById('results').textContent.includes('hostile');",
    )
    .await;
    assert_no_script_ran(browser, "hostile chart in the search results").await;
}

/// Types `query` into the search box and waits until the search script has put results
/// showing `shown` and not `hidden` in place, on the same page (no page was loaded).
async fn search_in_place(browser: &Browser, query: &str, shown: &str, hidden: &str) {
    browser.eval("window.__samePage = 42; return true;").await;
    input_search(browser, query).await;
    let script = format!(
        "const r = document.getElementById('results'); \
         return !!r && r.textContent.includes({shown:?}) && !r.textContent.includes({hidden:?});"
    );
    wait_for(
        browser,
        &format!("the search for {query} to show {shown} without {hidden}"),
        &script,
    )
    .await;
    assert_eq!(
        browser.eval("return window.__samePage;").await,
        42,
        "the results of {query} changed without loading a page"
    );
}

/// Follows the link reading `text` and waits until the page at `path` has loaded.
async fn follow(browser: &Browser, text: &str, path: &str) {
    browser
        .client
        .find(fantoccini::Locator::LinkText(text))
        .await
        .unwrap_or_else(|_| panic!("no link reads {text}"))
        .click()
        .await
        .unwrap();
    let script =
        format!("return location.pathname === {path:?} && document.readyState === 'complete';");
    wait_for(browser, &format!("{path} to load"), &script).await;
}

async fn input_search(browser: &Browser, text: &str) {
    let input = browser
        .client
        .find(fantoccini::Locator::Css("form.search input[name=q]"))
        .await
        .expect("the search box");
    input.clear().await.unwrap();
    input.send_keys(text).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chart_page_shows_readme_values_versions_and_signer_and_the_comparison_the_changed_default()
{
    let Some(site) = Site::start("web_chart_page").await else {
        return;
    };
    let browser = &site.browser;
    browser.goto(&site.url("/charts/webapp")).await;
    assert_eq!(text_of(browser, ".readme h1").await, "Webapp chart");
    assert_eq!(
        browser
            .eval("return document.querySelectorAll('.readme table td').length;")
            .await,
        2,
        "the README's table is rendered"
    );
    let values = text_of(browser, "pre.values").await;
    assert!(values.contains("replicaCount: 3"), "{values}");
    let versions = browser
        .eval(
            "return Array.from(document.querySelectorAll('table.versions tbody tr'))\
             .map(row => row.cells[0].textContent.trim());",
        )
        .await;
    assert_eq!(versions, serde_json::json!(["1.1.0", "1.0.0"]));
    let badge = text_of(browser, "h1 .badge").await;
    assert!(
        badge.contains("verified") && badge.contains("Web Signer <web@example.com>"),
        "the signed version shows its verified signer: {badge}"
    );
    assert_no_script_ran(browser, "webapp's page").await;
    browser.screenshot("web-chart").await;

    // The older version's page: unsigned, its own values.
    follow(browser, "1.0.0", "/charts/webapp/1.0.0").await;
    assert!(
        text_of(browser, "pre.values")
            .await
            .contains("replicaCount: 1")
    );
    assert_eq!(
        browser
            .eval("return document.querySelector('h1 .badge');")
            .await,
        Value::Null,
        "1.0.0 is not signed"
    );

    // The comparison form, as a person would use it: 1.0.0 → 1.1.0.
    let form = browser
        .client
        .form(fantoccini::Locator::Css("form.compare"))
        .await
        .expect("the compare form");
    form.set_by_name("from", "1.0.0").await.unwrap();
    form.set_by_name("to", "1.1.0").await.unwrap();
    form.submit().await.unwrap();
    wait_for(
        browser,
        "the comparison page",
        "return location.pathname === '/charts/webapp/compare' && document.readyState === 'complete';",
    )
    .await;
    let removed = text_of(browser, "pre.diff .del").await;
    let added = text_of(browser, "pre.diff .add").await;
    assert_eq!(removed, "-replicaCount: 1");
    assert_eq!(added, "+replicaCount: 3");
    assert_no_script_ran(browser, "webapp's comparison").await;
    browser.screenshot("web-compare").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_chart_runs_no_script_on_any_page() {
    let Some(site) = Site::start("web_hostile").await else {
        return;
    };
    let browser = &site.browser;
    for (page, path) in [
        ("the list", "/?deprecated=include"),
        ("the search results", "/?q=window&deprecated=include"),
        ("the hostile chart", "/charts/hostile"),
        ("the hostile chart's older version", "/charts/hostile/6.6.5"),
        (
            "the hostile chart's comparison",
            "/charts/hostile/compare?from=6.6.5&to=6.6.6",
        ),
    ] {
        browser.goto(&site.url(path)).await;
        // Give any payload that slipped through (an image's error, a focus) time to fire.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_no_script_ran(browser, page).await;
        let text = browser.eval("return document.body.innerText;").await;
        assert!(
            text.as_str().unwrap().contains("window.__xss=1"),
            "{page}: the payloads are shown as text: {text}"
        );
    }
    browser.goto(&site.url("/charts/hostile")).await;
    assert_eq!(text_of(browser, ".readme h1").await, "Hostile chart");
    // The README, where the sanitiser (rather than escaping) does the work.
    browser
        .eval("document.getElementById('readme').scrollIntoView(); return true;")
        .await;
    browser.screenshot("web-hostile").await;
    assert_policy_blocks_inline_script(browser, "the hostile chart").await;
}

// The address the server prints, the pages' home link and the search form's action are
// `/team/` (the prefix with its slash), which the nested router alone would not answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_a_context_path_the_pages_find_their_style_script_and_links() {
    let Some(site) = Site::start_with("web_context_path", |_| {
        vec!["--context-path".into(), "/team".into()]
    })
    .await
    else {
        return;
    };
    let browser = &site.browser;
    assert!(site.server.url.ends_with("/team"), "{}", site.server.url);
    // Where a person starts: the address the server prints (`Browse it at: .../team/`).
    let printed = site.url("/");
    browser.goto(&printed).await;
    assert_eq!(
        browser
            .eval("return document.querySelectorAll('header.site, form.search').length;")
            .await,
        2,
        "{printed} shows the chart list: {}",
        browser
            .eval("return document.documentElement.outerHTML;")
            .await
    );
    let styled = browser
        .eval(
            "return Array.from(document.styleSheets).some(sheet => sheet.cssRules.length > 0) \
             && getComputedStyle(document.querySelector('header.site')).borderBottomStyle === 'solid';",
        )
        .await;
    assert_eq!(styled, true, "the style sheet loaded under /team");
    let addresses = browser
        .eval(
            "return Array.from(document.querySelectorAll('a[href], link[href], script[src], form[action]'))\
             .map(e => e.getAttribute('href') || e.getAttribute('src') || e.getAttribute('action'))\
             .filter(a => a.startsWith('/'));",
        )
        .await;
    for address in addresses.as_array().unwrap() {
        assert!(
            address.as_str().unwrap().starts_with("/team/"),
            "every address on the list is under the context path: {addresses}"
        );
    }

    search_in_place(browser, "webapp", "webapp", "grafana").await;
    follow(browser, "webapp", "/team/charts/webapp").await;
    assert_eq!(text_of(browser, ".readme h1").await, "Webapp chart");
    let form = browser
        .client
        .form(fantoccini::Locator::Css("form.compare"))
        .await
        .expect("the compare form");
    form.submit().await.unwrap();
    wait_for(
        browser,
        "the comparison under /team",
        "return location.pathname === '/team/charts/webapp/compare' && document.readyState === 'complete';",
    )
    .await;
    assert_eq!(text_of(browser, "pre.diff .add").await, "+replicaCount: 3");
    let heading_link = browser
        .eval("return fetch(document.querySelector('h1 a').getAttribute('href')).then(r => r.status);")
        .await;
    assert_eq!(
        heading_link, 200,
        "the comparison's heading links to the chart's page"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_auth_reads_a_signed_in_browser_reads_pages_and_searches() {
    let Some(site) = Site::start_with("web_auth_reads", |ctx| {
        let htpasswd = ctx.path("htpasswd");
        chartkit_tests::server::write_htpasswd(&htpasswd, &[("reader", "s3cret")]);
        vec![
            "--basic-auth-file".into(),
            htpasswd.display().to_string(),
            "--auth-reads".into(),
        ]
    })
    .await
    else {
        return;
    };
    let browser = &site.browser;
    // Without credentials: the browser is asked for them, nothing of the list is shown.
    browser.goto(&site.url("/")).await;
    assert_eq!(
        browser
            .eval("return document.querySelectorAll('#results').length;")
            .await,
        0,
        "the list is not shown without credentials"
    );
    // Signed in: credentials given once in an address, which the browser then keeps for
    // the origin as it keeps what a person types into its prompt. The pages are then
    // opened without them (a script cannot fetch from a page whose address holds
    // credentials): the page, its style sheet and the search script's requests all pass.
    let signed_in = site
        .url("/")
        .replacen("http://", "http://reader:s3cret@", 1);
    browser.goto(&signed_in).await;
    browser.goto(&site.url("/")).await;
    let names = text_of(browser, "#results").await;
    assert!(names.contains("webapp"), "{names}");
    assert_eq!(
        browser
            .eval(
                "return Array.from(document.styleSheets).some(sheet => sheet.cssRules.length > 0);"
            )
            .await,
        true,
        "the style sheet loaded with the page's credentials"
    );
    search_in_place(browser, "podinfo", "podinfo", "webapp").await;
    follow(browser, "podinfo", "/charts/podinfo").await;
    assert!(
        text_of(browser, ".readme").await.contains("Podinfo"),
        "podinfo's README is on its page"
    );
    assert_no_script_ran(browser, "podinfo's page behind --auth-reads").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_repository_of_a_depth_server_has_its_own_pages() {
    let Some(corpus) = chartkit_tests::corpus::corpus_or_skip("web_depth") else {
        return;
    };
    let Some(browser) = Browser::start_or_skip("web_depth").await else {
        return;
    };
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    let packages = chartkit_tests::corpus::packages(&corpus);
    for (tenant, names) in [
        (
            "org/one",
            &["podinfo-6.14.1.tgz", "grafana-12.11.1.tgz"][..],
        ),
        ("org/two", &["traefik-41.3.0.tgz"][..]),
    ] {
        let dir = storage.join(tenant);
        std::fs::create_dir_all(&dir).unwrap();
        for name in names {
            let package = packages
                .iter()
                .find(|p| p.file_name().is_some_and(|f| f == *name))
                .unwrap_or_else(|| panic!("{name} is not in the corpus"));
            std::fs::copy(package, dir.join(name)).unwrap();
        }
    }
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[storage.to_str().unwrap(), "--depth", "2"],
        ctx.dir(),
    );

    // The root lists the repositories; a person follows one.
    browser.goto(&format!("{}/", server.url)).await;
    browser
        .client
        .find(fantoccini::Locator::LinkText("org/one"))
        .await
        .expect("a link to org/one")
        .click()
        .await
        .unwrap();
    wait_for(
        &browser,
        "org/one's chart list",
        "return location.pathname === '/org/one/' && !!document.getElementById('results');",
    )
    .await;
    let names = text_of(&browser, "#results").await;
    assert!(
        names.contains("podinfo") && names.contains("grafana") && !names.contains("traefik"),
        "org/one lists its own charts: {names}"
    );
    assert_eq!(
        browser
            .eval(
                "return Array.from(document.styleSheets).some(sheet => sheet.cssRules.length > 0);"
            )
            .await,
        true,
        "the style sheet loaded under /org/one/"
    );

    search_in_place(&browser, "visualizing", "grafana", "podinfo").await;
    follow(&browser, "grafana", "/org/one/charts/grafana").await;
    let package = browser
        .eval(
            "const a = Array.from(document.querySelectorAll('table.versions a')).find(a => a.textContent === 'package'); \
             return fetch(a.getAttribute('href')).then(r => [a.getAttribute('href'), r.status]);",
        )
        .await;
    assert_eq!(
        package,
        serde_json::json!(["/org/one/charts/grafana-12.11.1.tgz", 200]),
        "the download link is the tenant's"
    );
    assert_no_script_ran(&browser, "grafana's page in org/one").await;
}
