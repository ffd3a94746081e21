//! The web view of `chartkit serve`: pages rendered on the server from plain data (the
//! [`model`] structs the server fills in), with no I/O and no HTTP. The server routes,
//! reads packages and sends [`CONTENT_SECURITY_POLICY`] with every page.
//!
//! Every string from a chart is untrusted. Pages are built in [`html::Html`], which takes
//! markup only as `&'static str` literals or as [`html::Sanitized`] README HTML, and escapes
//! everything else; see ARCHITECTURE.md for why this rather than a template engine.

pub mod chart_page;
pub mod compare;
pub mod html;
pub mod layout;
pub mod limits;
pub mod list;
pub mod markdown;
pub mod model;
pub mod schema;
pub mod search;

pub use chart_page::chart_page;
pub use compare::compare_page;
pub use layout::{
    CONTENT_SECURITY_POLICY, PAGE_HEADERS, SCRIPT_PATH, SEARCH_JS, STYLE_CSS, STYLE_PATH,
};
pub use list::{list_page, list_results, repositories_page};
pub use model::{
    ChartDetail, ChartSummary, Dependency, Maintainer, Provenance, Site, VersionFiles,
    VersionSummary,
};
pub use search::{DeprecatedFilter, ListQuery};

#[cfg(test)]
mod tests;
