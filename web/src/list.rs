//! The chart list at `/`: the search form (an ordinary GET, so it works without script) and
//! the charts that match.

use crate::html::Html;
use crate::layout::page;
use crate::model::{ChartSummary, Site};
use crate::search::{DeprecatedFilter, ListQuery, search};

pub fn list_page(site: &Site, charts: &[ChartSummary], query: &ListQuery) -> String {
    let found = search(charts, query);
    let mut body = Html::new();
    body.raw("<h1>Charts</h1><form class=\"search\" method=\"get\" action=\"/\" role=\"search\">")
        .raw("<input type=\"search\" name=\"q\" placeholder=\"Search name, keywords, description, maintainers\" aria-label=\"Search charts\" value=\"")
        .text(&query.text)
        .raw("\"><label>Deprecated <select name=\"deprecated\">");
    for (filter, label) in [
        (DeprecatedFilter::Hide, "hidden"),
        (DeprecatedFilter::Include, "included"),
        (DeprecatedFilter::Only, "only"),
    ] {
        body.raw("<option value=\"")
            .raw(filter.as_param())
            .raw("\"");
        if filter == query.deprecated {
            body.raw(" selected");
        }
        body.raw(">").raw(label).raw("</option>");
    }
    body.raw("</select></label><label><input type=\"checkbox\" name=\"signed\" value=\"1\"");
    if query.signed_only {
        body.raw(" checked");
    }
    body.raw("> Signed only</label><button type=\"submit\">Search</button></form>");
    body.raw("<p class=\"muted\" data-count>")
        .display(found.len())
        .raw(if found.len() == 1 {
            " chart"
        } else {
            " charts"
        })
        .raw("</p>");
    if found.is_empty() {
        body.raw("<p>No chart matches.</p>");
    } else {
        body.raw("<ul class=\"charts\">");
        for chart in found {
            chart_row(&mut body, chart);
        }
        body.raw("</ul>");
    }
    page(site, "Charts", &body)
}

fn chart_row(body: &mut Html, chart: &ChartSummary) {
    body.raw("<li data-search=\"")
        .text(&search_text(chart))
        .raw("\"><span class=\"chart-name\">");
    body.local_link(&["charts", &chart.name], &chart.name)
        .raw("</span> ");
    body.element("<span class=\"version\">", &chart.latest_version, "</span>");
    if let Some(app_version) = &chart.app_version {
        body.raw(" <span class=\"muted\">app ")
            .text(app_version)
            .raw("</span>");
    }
    if chart.deprecated {
        body.raw("<span class=\"badge deprecated\">deprecated</span>");
    }
    if chart.signed {
        body.raw("<span class=\"badge signed\">signed</span>");
    }
    body.raw("<div>").text(&chart.description).raw("</div>");
    if !chart.keywords.is_empty() {
        body.raw("<div class=\"keywords\">");
        for keyword in &chart.keywords {
            body.element("<span>", keyword, "</span>");
        }
        body.raw("</div>");
    }
    if !chart.maintainers.is_empty() {
        let names: Vec<&str> = chart.maintainers.iter().map(|m| m.name.as_str()).collect();
        body.raw("<div class=\"muted\">Maintained by ")
            .text(&names.join(", "))
            .raw("</div>");
    }
    body.raw("</li>");
}

/// What the search script looks in: the same fields as the server's search, lowercase.
fn search_text(chart: &ChartSummary) -> String {
    let mut text = chart.name.to_lowercase();
    for part in std::iter::once(chart.description.as_str())
        .chain(chart.keywords.iter().map(String::as_str))
        .chain(chart.maintainers.iter().map(|m| m.name.as_str()))
    {
        text.push(' ');
        text.push_str(&part.to_lowercase());
    }
    text
}
