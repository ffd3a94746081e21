//! The frame every page shares, the static files it links and the headers the server sends
//! with it. Pages carry no inline script or style, so the policy can forbid both.

use crate::html::Html;
use crate::model::Site;

/// The value of the `Content-Security-Policy` header for every page: scripts and styles
/// only from this server's static files, images from this server or https (README badges),
/// no frames, no plugins, forms only to this server.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Every header a page is sent with, the policy included.
pub const PAGE_HEADERS: &[(&str, &str)] = &[
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
];

/// Where the pages expect the style sheet (under the site's base path); a prefix no chart name can take (names are
/// lowercase letters, digits and dashes).
pub const STYLE_PATH: &str = "/_chartkit/web.css";
/// Where the pages expect the search script.
pub const SCRIPT_PATH: &str = "/_chartkit/search.js";
/// The style sheet, served at [`STYLE_PATH`] as `text/css`.
pub const STYLE_CSS: &str = include_str!("../assets/web.css");
/// The search script, served at [`SCRIPT_PATH`] as `text/javascript`.
pub const SEARCH_JS: &str = include_str!("../assets/search.js");

/// A whole page around `body`.
pub fn page(site: &Site, title: &str, body: &Html) -> String {
    let mut html = Html::new();
    html.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        .raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        .raw("<title>")
        .text(title)
        .raw(" · ")
        .text(display_name(site))
        .raw("</title><link rel=\"stylesheet\" href=\"")
        .text(&site.base_path)
        .raw(STYLE_PATH)
        .raw("\"></head><body><header class=\"site\"><a href=\"")
        .text(&site.base_path)
        .raw("/\">")
        .text(display_name(site))
        .raw("</a></header><main>")
        .append(body)
        .raw("</main><script src=\"")
        .text(&site.base_path)
        .raw(SCRIPT_PATH)
        .raw("\" defer></script></body></html>\n");
    html.into_string()
}

fn display_name(site: &Site) -> &str {
    if site.repo_name.is_empty() {
        "Charts"
    } else {
        &site.repo_name
    }
}
