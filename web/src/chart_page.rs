//! A chart's page (`/charts/NAME` for the newest version, `/charts/NAME/VERSION`).

use crate::html::Html;
use crate::layout::page;
use crate::limits;
use crate::markdown::render_readme;
use crate::model::{ChartDetail, Provenance, Site, VersionSummary};
use crate::schema::schema_fields;

pub fn chart_page(site: &Site, chart: &ChartDetail) -> String {
    let mut body = Html::new();
    heading(&mut body, chart);
    install(&mut body, site, chart);
    versions(&mut body, site, chart);
    readme(&mut body, chart);
    values(&mut body, chart);
    schema(&mut body, chart);
    templates(&mut body, chart);
    dependencies(&mut body, site, chart);
    people_and_sources(&mut body, chart);
    let title = format!("{} {}", chart.name, chart.version);
    page(site, &title, &body)
}

fn heading(body: &mut Html, chart: &ChartDetail) {
    body.raw("<h1>")
        .text(&chart.name)
        .raw(" <span class=\"version\">")
        .text(&chart.version)
        .raw("</span>");
    if chart.deprecated {
        body.raw("<span class=\"badge deprecated\">deprecated</span>");
    }
    provenance_badge(body, &chart.provenance());
    body.raw("</h1>");
    if let Some(app_version) = &chart.app_version {
        body.raw("<p class=\"muted\">App version ")
            .text(app_version)
            .raw("</p>");
    }
    body.raw("<p class=\"description\">")
        .text(&chart.description)
        .raw("</p>");
    if let Some(home) = &chart.home {
        body.raw("<p>Home: ").link(home, home).raw("</p>");
    }
}

fn provenance_badge(body: &mut Html, provenance: &Provenance) {
    match provenance {
        Provenance::Unsigned => {}
        Provenance::Signed { signer } => {
            body.raw("<span class=\"badge signed\">signed");
            if let Some(signer) = signer {
                body.raw(" by ").text(signer);
            }
            body.raw("</span>");
        }
        Provenance::Verified { signer } => {
            body.raw("<span class=\"badge verified\">verified: ")
                .text(signer)
                .raw("</span>");
        }
        Provenance::Invalid { reason } => {
            body.raw("<span class=\"badge invalid\">signature invalid: ")
                .text(reason)
                .raw("</span>");
        }
    }
}

fn install(body: &mut Html, site: &Site, chart: &ChartDetail) {
    let reference = format!("{}/{}", site.repo_name, chart.name);
    body.raw("<h2 id=\"install\">Install</h2><pre><code>");
    body.text(&format!(
        "helm repo add {} {}\n",
        site.repo_name, site.repo_url
    ));
    body.text(&format!(
        "helm install {} {reference} --version {}",
        chart.name, chart.version
    ));
    body.raw("</code></pre><pre><code>");
    body.text(&format!(
        "chartkit repo add {} {}\n",
        site.repo_name, site.repo_url
    ));
    body.text(&format!(
        "chartkit install {} {reference} --version {}",
        chart.name, chart.version
    ));
    body.raw("</code></pre>");
    if let Some(oci_base) = &site.oci_base {
        body.raw("<pre><code>");
        body.text(&format!(
            "helm install {} {}/{} --version {}",
            chart.name,
            oci_base.trim_end_matches('/'),
            chart.name,
            chart.version
        ));
        body.raw("</code></pre>");
    }
}

fn versions(body: &mut Html, site: &Site, chart: &ChartDetail) {
    body.raw("<h2 id=\"versions\">Versions</h2><table class=\"versions\"><thead><tr><th>Version</th><th>App version</th><th>Created</th><th>Provenance</th><th>Download</th></tr></thead><tbody>");
    for version in &chart.versions {
        version_row(body, site, chart, version);
    }
    body.raw("</tbody></table>");
    if chart.versions.len() > 1 {
        compare_form(body, site, chart);
    }
}

fn version_row(body: &mut Html, site: &Site, chart: &ChartDetail, version: &VersionSummary) {
    body.raw("<tr><td>");
    if version.version == chart.version {
        body.raw("<strong>").text(&version.version).raw("</strong>");
    } else {
        body.local_link(
            &site.base_path,
            &["charts", &chart.name, &version.version],
            &version.version,
        );
    }
    body.raw("</td><td>")
        .text(version.app_version.as_deref().unwrap_or(""))
        .raw("</td><td>");
    if let Some(created) = &version.created {
        let date = created.get(..10).unwrap_or(created);
        body.raw("<time datetime=\"")
            .text(created)
            .raw("\">")
            .text(date)
            .raw("</time>");
    }
    body.raw("</td><td>");
    match &version.provenance {
        Provenance::Unsigned => {
            body.raw("<span class=\"muted\">unsigned</span>");
        }
        other => provenance_badge(body, other),
    }
    body.raw("</td><td>")
        .link(&version.package_url, "package")
        .raw("</td></tr>");
}

fn compare_form(body: &mut Html, site: &Site, chart: &ChartDetail) {
    body.raw("<form class=\"compare\" method=\"get\" action=\"")
        .text(&site.base_path)
        .raw("/charts/")
        .text(&crate::html::percent_encode_segment(&chart.name))
        .raw("/compare\"><label>Compare <select name=\"from\">");
    let older = chart
        .versions
        .iter()
        .find(|v| v.version != chart.version)
        .map(|v| v.version.as_str());
    version_options(body, chart, older);
    body.raw("</select></label> <label>with <select name=\"to\">");
    version_options(body, chart, Some(&chart.version));
    body.raw("</select></label> <button type=\"submit\">Compare</button></form>");
}

fn version_options(body: &mut Html, chart: &ChartDetail, selected: Option<&str>) {
    for version in &chart.versions {
        body.raw("<option value=\"")
            .text(&version.version)
            .raw("\"");
        if Some(version.version.as_str()) == selected {
            body.raw(" selected");
        }
        body.raw(">").text(&version.version).raw("</option>");
    }
}

fn readme(body: &mut Html, chart: &ChartDetail) {
    let Some(markdown) = &chart.readme else {
        return;
    };
    let (html, truncated) = render_readme(markdown);
    body.raw("<h2 id=\"readme\">README</h2><div class=\"readme\">")
        .sanitized(&html)
        .raw("</div>");
    if truncated {
        truncated_note(body, "README", limits::README_BYTES);
    }
}

fn values(body: &mut Html, chart: &ChartDetail) {
    let Some(values) = &chart.values_yaml else {
        return;
    };
    let (shown, truncated) = limits::truncate(values, limits::VALUES_BYTES);
    body.raw("<h2 id=\"values\">Default values</h2><pre class=\"values\"><code>")
        .text(shown)
        .raw("</code></pre>");
    if truncated {
        truncated_note(body, "values.yaml", limits::VALUES_BYTES);
    }
}

fn schema(body: &mut Html, chart: &ChartDetail) {
    let Some(schema) = &chart.values_schema else {
        return;
    };
    let (fields, truncated) = schema_fields(schema);
    if fields.is_empty() {
        return;
    }
    body.raw("<h2 id=\"schema\">Values schema</h2><table class=\"schema\"><thead><tr><th>Field</th><th>Type</th><th>Default</th><th>Description</th></tr></thead><tbody>");
    for field in &fields {
        body.raw("<tr><td><code>").text(&field.path).raw("</code>");
        if field.required {
            body.raw(" <span class=\"badge\">required</span>");
        }
        body.raw("</td><td>").text(&field.kind).raw("</td><td>");
        if let Some(default) = &field.default {
            body.raw("<code>").text(default).raw("</code>");
        }
        body.raw("</td><td>")
            .text(field.description.as_deref().unwrap_or(""))
            .raw("</td></tr>");
    }
    body.raw("</tbody></table>");
    if truncated {
        body.raw("<p class=\"note\">The schema has more fields than the ")
            .display(limits::SCHEMA_ROWS)
            .raw(" shown; the package holds it whole.</p>");
    }
}

fn templates(body: &mut Html, chart: &ChartDetail) {
    if chart.templates.is_empty() {
        return;
    }
    body.raw("<h2 id=\"templates\">Templates</h2><ul class=\"templates\">");
    for path in chart.templates.iter().take(limits::TEMPLATE_FILES) {
        body.raw("<li><code>").text(path).raw("</code></li>");
    }
    body.raw("</ul>");
    if chart.templates.len() > limits::TEMPLATE_FILES {
        body.raw("<p class=\"note\">")
            .display(chart.templates.len() - limits::TEMPLATE_FILES)
            .raw(" more templates are in the package.</p>");
    }
}

fn dependencies(body: &mut Html, site: &Site, chart: &ChartDetail) {
    if chart.dependencies.is_empty() {
        return;
    }
    body.raw("<h2 id=\"dependencies\">Dependencies</h2><table><thead><tr><th>Chart</th><th>Version</th><th>Repository</th></tr></thead><tbody>");
    for dependency in &chart.dependencies {
        body.raw("<tr><td>");
        if dependency.on_this_server {
            body.local_link(
                &site.base_path,
                &["charts", &dependency.name],
                &dependency.name,
            );
        } else {
            body.text(&dependency.name);
        }
        body.raw("</td><td>")
            .text(&dependency.version)
            .raw("</td><td>");
        body.text(&dependency.repository).raw("</td></tr>");
    }
    body.raw("</tbody></table>");
}

fn people_and_sources(body: &mut Html, chart: &ChartDetail) {
    if !chart.maintainers.is_empty() {
        body.raw("<h2 id=\"maintainers\">Maintainers</h2><ul class=\"maintainers\">");
        for maintainer in &chart.maintainers {
            body.raw("<li>");
            match &maintainer.url {
                Some(url) => body.link(url, &maintainer.name),
                None => body.text(&maintainer.name),
            };
            if let Some(email) = &maintainer.email {
                body.raw(" ");
                if looks_like_address(email) {
                    body.link(&format!("mailto:{email}"), email);
                } else {
                    body.text(email);
                }
            }
            body.raw("</li>");
        }
        body.raw("</ul>");
    }
    if !chart.sources.is_empty() {
        body.raw("<h2 id=\"sources\">Sources</h2><ul class=\"sources\">");
        for source in &chart.sources {
            body.raw("<li>").link(source, source).raw("</li>");
        }
        body.raw("</ul>");
    }
}

fn truncated_note(body: &mut Html, what: &str, limit: usize) {
    body.raw("<p class=\"note\">")
        .text(what)
        .raw(" is longer than ")
        .display(limit / 1024)
        .raw(" KiB and was cut here; the package holds it whole.</p>");
}

/// Whether an email is worth a `mailto:` link: one `@`, nothing a header or a URL would
/// read as something else.
fn looks_like_address(email: &str) -> bool {
    email.matches('@').count() == 1
        && !email.starts_with('@')
        && !email.ends_with('@')
        && !email
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "<>\"'()[]\\,;:?&#%".contains(c))
}
