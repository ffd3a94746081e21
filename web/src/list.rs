//! The chart list at `/`: the search form (an ordinary GET, so it works without script) and
//! the charts that match, a page of [`limits::LIST_PAGE_SIZE`] at a time.

use crate::html::{Html, percent_encode_segment};
use crate::layout::page;
use crate::limits;
use crate::model::{ChartSummary, Site};
use crate::search::{DeprecatedFilter, ListQuery, search};

pub fn list_page(site: &Site, charts: &[ChartSummary], query: &ListQuery) -> String {
    let mut body = Html::new();
    body.raw("<h1>Charts</h1><form class=\"search\" method=\"get\" action=\"")
        .text(&site.base_path)
        .raw("/\" role=\"search\">")
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
    body.raw("<div id=\"results\">")
        .append(&list_results(site, charts, query))
        .raw("</div>");
    page(site, "Charts", &body)
}

/// The results alone: what the search script asks for (`?fragment=1` on the list's
/// address) and puts in place of the page's, so there is one renderer for both.
pub fn list_results(site: &Site, charts: &[ChartSummary], query: &ListQuery) -> Html {
    let found = search(charts, query);
    let pages = found.len().div_ceil(limits::LIST_PAGE_SIZE).max(1);
    let page = query.page.min(pages - 1);
    let mut body = Html::new();
    body.raw("<p class=\"muted\">")
        .display(found.len())
        .raw(if found.len() == 1 {
            " chart"
        } else {
            " charts"
        })
        .raw("</p>");
    if found.is_empty() {
        body.raw("<p>No chart matches.</p>");
        return body;
    }
    body.raw("<ul class=\"charts\">");
    for chart in found
        .iter()
        .skip(page * limits::LIST_PAGE_SIZE)
        .take(limits::LIST_PAGE_SIZE)
    {
        chart_row(&mut body, site, chart);
    }
    body.raw("</ul>");
    if pages > 1 {
        body.raw("<nav class=\"pager\">");
        if page > 0 {
            page_link(&mut body, site, query, page - 1, "← Previous");
        }
        body.raw(" <span class=\"muted\">Page ")
            .display(page + 1)
            .raw(" of ")
            .display(pages)
            .raw("</span> ");
        if page + 1 < pages {
            page_link(&mut body, site, query, page + 1, "Next →");
        }
        body.raw("</nav>");
    }
    body
}

fn page_link(body: &mut Html, site: &Site, query: &ListQuery, page: usize, label: &'static str) {
    let mut address = format!(
        "{}/?q={}&deprecated={}",
        site.base_path,
        percent_encode_segment(&query.text),
        query.deprecated.as_param()
    );
    if query.signed_only {
        address.push_str("&signed=1");
    }
    address.push_str(&format!("&page={page}"));
    body.raw("<a href=\"")
        .text(&address)
        .raw("\">")
        .raw(label)
        .raw("</a>");
}

fn chart_row(body: &mut Html, site: &Site, chart: &ChartSummary) {
    body.raw("<li><span class=\"chart-name\">");
    body.local_link(&site.base_path, &["charts", &chart.name], &chart.name)
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
    let (description, cut) = limits::truncate(&chart.description, limits::LIST_DESCRIPTION_BYTES);
    body.raw("<div>").text(description);
    if cut {
        body.raw("…");
    }
    body.raw("</div>");
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

/// A server of several repositories (`--depth`): each with its chart count, linked to its
/// own list at `BASE/PATH/`.
pub fn repositories_page(site: &Site, repositories: &[(String, usize)]) -> String {
    let mut body = Html::new();
    body.raw("<h1>Repositories</h1>");
    if repositories.is_empty() {
        body.raw("<p>No repository holds a chart yet.</p>");
    } else {
        body.raw("<ul class=\"charts\">");
        for (path, charts) in repositories {
            let segments: Vec<&str> = path.split('/').chain([""]).collect();
            body.raw("<li><span class=\"chart-name\">")
                .local_link(&site.base_path, &segments, path)
                .raw("</span> <span class=\"muted\">")
                .display(charts)
                .raw(if *charts == 1 { " chart" } else { " charts" })
                .raw("</span></li>");
        }
        body.raw("</ul>");
    }
    page(site, "Repositories", &body)
}
