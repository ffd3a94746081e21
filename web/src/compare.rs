//! Two versions of a chart compared (`/charts/NAME/compare?from=A&to=B`): values.yaml and
//! each template as a line diff (`similar`'s Myers diff, three lines of context).

use crate::html::Html;
use crate::layout::page;
use crate::limits;
use crate::model::{Site, VersionFiles};
use similar::{ChangeTag, TextDiff};
use std::collections::BTreeMap;

pub fn compare_page(
    site: &Site,
    chart_name: &str,
    from: &VersionFiles,
    to: &VersionFiles,
) -> String {
    let mut body = Html::new();
    body.raw("<h1>")
        .local_link(&site.base_path, &["charts", chart_name], chart_name)
        .raw(": ");
    body.local_link(
        &site.base_path,
        &["charts", chart_name, &from.version],
        &from.version,
    )
    .raw(" → ");
    body.local_link(
        &site.base_path,
        &["charts", chart_name, &to.version],
        &to.version,
    )
    .raw("</h1>");

    let mut budget = Budget {
        left: limits::COMPARE_BYTES,
    };
    body.raw("<h2 id=\"values\">values.yaml</h2>");
    file_diff(&mut body, &mut budget, &from.values_yaml, &to.values_yaml);

    let old: BTreeMap<&str, &str> = from
        .templates
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let new: BTreeMap<&str, &str> = to
        .templates
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let mut paths: Vec<&str> = old.keys().chain(new.keys()).copied().collect();
    paths.sort_unstable();
    paths.dedup();
    body.raw("<h2 id=\"templates\">Templates</h2>");
    let mut unchanged = 0;
    for path in paths {
        let (before, after) = (old.get(path).copied(), new.get(path).copied());
        if before == after {
            unchanged += 1;
            continue;
        }
        body.raw("<h3><code>").text(path).raw("</code>");
        match (before, after) {
            (None, _) => body.raw(" <span class=\"badge\">added</span>"),
            (_, None) => body.raw(" <span class=\"badge\">removed</span>"),
            _ => body.raw(""),
        };
        body.raw("</h3>");
        file_diff(
            &mut body,
            &mut budget,
            before.unwrap_or(""),
            after.unwrap_or(""),
        );
    }
    if unchanged > 0 {
        body.raw("<p class=\"muted\">")
            .display(unchanged)
            .raw(if unchanged == 1 {
                " template unchanged.</p>"
            } else {
                " templates unchanged.</p>"
            });
    }
    let title = format!("{chart_name} {} → {}", from.version, to.version);
    page(site, &title, &body)
}

/// What is left of [`limits::COMPARE_BYTES`] for the files still to diff.
struct Budget {
    left: usize,
}

fn file_diff(body: &mut Html, budget: &mut Budget, before: &str, after: &str) {
    if before == after {
        body.raw("<p class=\"muted\">No change.</p>");
        return;
    }
    let cost = before.len() + after.len();
    if cost > budget.left {
        body.raw("<p class=\"note\">Too large to compare here (")
            .display(limits::COMPARE_BYTES / 1024)
            .raw(" KiB for one comparison); download both packages to compare them.</p>");
        return;
    }
    budget.left -= cost;
    let diff = TextDiff::from_lines(before, after);
    body.raw("<pre class=\"diff\"><code>");
    for (index, group) in diff.grouped_ops(3).iter().enumerate() {
        if index > 0 {
            body.raw("<span class=\"hunk\">⋯</span>");
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let (class, sign) = match change.tag() {
                    ChangeTag::Delete => ("<span class=\"del\">", "-"),
                    ChangeTag::Insert => ("<span class=\"add\">", "+"),
                    ChangeTag::Equal => ("<span class=\"ctx\">", " "),
                };
                let line = change.value();
                body.raw(class)
                    .raw(sign)
                    .text(line.strip_suffix('\n').unwrap_or(line))
                    .raw("</span>");
            }
        }
    }
    body.raw("</code></pre>");
}
