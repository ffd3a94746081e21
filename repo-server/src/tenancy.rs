//! Which repository a request is for on a multi-tenant server (`--depth N`,
//! `--depth-dynamic`), matched as ChartMuseum's router matches its `:repo` parameter: a
//! pure function from the path to the repository's path and the route as a single
//! repository serves it, so the handlers stay those of one repository.
//!
//! At depth N the repository is the first N segments (`/ORG/REPO/index.yaml`), after
//! `/api/` for the API (`/api/ORG/REPO/charts`). A path under `/api/` that ends in
//! `.yaml`, `.tgz` or `.prov` is not an API path (ChartMuseum's rule), so a repository
//! named `api` keeps its index and packages. With `--depth-dynamic` the depth is found by
//! trying the route templates in ChartMuseum's order: the first whose shape fits the end of
//! the path decides how many segments before it are the repository (none: the root one).

/// How a server finds the repository in a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Depth {
    /// Every repository is the first N segments; 0 is the one repository at the root.
    Fixed(usize),
    /// The repository is whatever precedes the route (ChartMuseum's `--depth-dynamic`).
    Dynamic,
    /// One repository at the root (no multi-tenancy).
    #[default]
    Single,
}

impl Depth {
    /// From `--depth` and `--depth-dynamic`.
    pub fn new(depth: usize, dynamic: bool) -> Depth {
        match (depth, dynamic) {
            (_, true) => Depth::Dynamic,
            (0, false) => Depth::Single,
            (n, false) => Depth::Fixed(n),
        }
    }

    pub fn is_multi_tenant(self) -> bool {
        self != Depth::Single
    }
}

/// Where a request goes.
#[derive(Debug, PartialEq, Eq)]
pub enum Route {
    /// Served by the server whatever the depth: `/`, `/health`, `/info`, `/ready`,
    /// `/metrics`, and the registry's version check, token service and catalog.
    Server,
    /// One repository's route. `repository` is its path (empty: the root repository, which
    /// only `--depth-dynamic` reaches); `path` is the route as a single repository serves it.
    Repository { repository: String, path: String },
    /// A registry request for `REPOSITORY/NAME`: the path is served as it is.
    Registry { repository: String },
    /// A registry name with the wrong number of segments for the depth.
    UnknownRegistryName(String),
    /// No route: ChartMuseum's 404.
    NotFound,
}

/// A route's shape after the repository: literal segments, and `None` for a parameter.
type Shape = &'static [Option<&'static str>];

const INDEX: Shape = &[Some("index.yaml")];
const FILE: Shape = &[Some("charts"), None];
/// The web view's pages of a repository (after ChartMuseum's routes, which win): its
/// list at `/ORG/REPO/` (with the slash: without it the path is ChartMuseum's 404), a
/// version or comparison page, and the pages' static files.
const WEB_LIST: Shape = &[Some("")];
const WEB_VERSION: Shape = &[Some("charts"), None, None];
const WEB_STATIC: Shape = &[Some("_chartkit"), None];
/// Non-API routes in ChartMuseum's order, then the web view's.
const REPOSITORY_ROUTES: [Shape; 5] = [INDEX, FILE, WEB_VERSION, WEB_STATIC, WEB_LIST];
/// API routes (after `/api/REPO`) in ChartMuseum's order.
const API_ROUTES: [Shape; 6] = [
    &[Some("charts")],
    &[Some("charts"), None],
    &[Some("charts"), None, None],
    &[Some("charts"), None, None, Some("templates")],
    &[Some("charts"), None, None, Some("values")],
    &[Some("prov")],
];

/// Paths every depth serves at the root.
const SERVER_PATHS: [&str; 9] = [
    "/",
    "/health",
    "/info",
    "/ready",
    "/metrics",
    "/v2",
    "/v2/",
    "/v2/token",
    "/v2/_catalog",
];

/// Where `path` (without the context path) goes at `depth`. With [`Depth::Single`] every
/// path is the root repository's.
pub fn route(path: &str, depth: Depth) -> Route {
    if depth == Depth::Single || SERVER_PATHS.contains(&path) {
        return Route::Server;
    }
    if let Some(rest) = path.strip_prefix("/v2/") {
        return registry_route(rest, depth);
    }
    let api = is_api_path(path);
    // `/api/ORG/REPO/charts` splits as "", "api", "ORG", "REPO", "charts".
    let segments: Vec<&str> = path.split('/').collect();
    let start = if api { 2 } else { 1 };
    let routes: &[Shape] = if api { &API_ROUTES } else { &REPOSITORY_ROUTES };
    let depth = match depth {
        Depth::Fixed(n) => n,
        Depth::Dynamic => match dynamic_depth(&segments[start.min(segments.len())..], routes) {
            Some(n) => n,
            None => return Route::NotFound,
        },
        Depth::Single => 0,
    };
    if segments.len() < start + depth {
        return Route::NotFound;
    }
    let repository = &segments[start..start + depth];
    let tail = &segments[start + depth..];
    if !repository.iter().all(|s| crate::names::is_safe(s))
        || !routes.iter().any(|shape| fits(tail, shape))
    {
        return Route::NotFound;
    }
    let path = if api {
        format!("/api/{}", tail.join("/"))
    } else {
        format!("/{}", tail.join("/"))
    };
    Route::Repository {
        repository: repository.join("/"),
        path,
    }
}

/// ChartMuseum's test for an API path: under `/api/`, and not a file a repository serves.
fn is_api_path(path: &str) -> bool {
    path.starts_with("/api/")
        && !(path.ends_with(".yaml") || path.ends_with(".tgz") || path.ends_with(".prov"))
}

/// Whether `tail` is exactly the route `shape` (parameters are non-empty segments).
fn fits(tail: &[&str], shape: Shape) -> bool {
    tail.len() == shape.len()
        && tail.iter().zip(shape).all(|(segment, part)| match part {
            Some(literal) => segment == literal,
            None => !segment.is_empty(),
        })
}

/// `--depth-dynamic`: the segments before the first route (in ChartMuseum's order, then
/// the web view's) that fits the end of `segments`.
fn dynamic_depth(segments: &[&str], routes: &[Shape]) -> Option<usize> {
    // A route of no segments would make a repository of any path.
    routes
        .iter()
        .filter(|shape| !shape.is_empty())
        .find_map(|shape| {
            let before = segments.len().checked_sub(shape.len())?;
            fits(&segments[before..], shape).then_some(before)
        })
}

/// A registry path (`REPOSITORY/NAME/manifests/…` after `/v2/`): at depth N the name has
/// N + 1 segments, the last the chart; with `--depth-dynamic` all but the last are the
/// repository (at least one: the root repository has no registry face then).
fn registry_route(rest: &str, depth: Depth) -> Route {
    let Some((name, _)) = crate::oci::parse_path(rest) else {
        // Not a registry path: the registry answers it in its own words.
        return Route::Server;
    };
    let segments: Vec<&str> = name.split('/').collect();
    let fits = match depth {
        Depth::Fixed(n) => segments.len() == n + 1,
        Depth::Dynamic => segments.len() >= 2,
        Depth::Single => return Route::Server,
    };
    let (chart, repository) = segments.split_last().unwrap_or((&"", &[]));
    if !fits || !repository.iter().all(|s| crate::names::is_safe(s)) || chart.is_empty() {
        return Route::UnknownRegistryName(name.to_owned());
    }
    Route::Registry {
        repository: repository.join("/"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(repository: &str, path: &str) -> Route {
        Route::Repository {
            repository: repository.to_owned(),
            path: path.to_owned(),
        }
    }

    #[test]
    fn fixed_depth_takes_the_first_segments() {
        let two = Depth::Fixed(2);
        assert_eq!(
            route("/org/repo/index.yaml", two),
            repo("org/repo", "/index.yaml")
        );
        assert_eq!(
            route("/org/repo/charts/a-1.0.0.tgz", two),
            repo("org/repo", "/charts/a-1.0.0.tgz")
        );
        assert_eq!(
            route("/org/repo/charts/a-1.0.0.tgz.prov", two),
            repo("org/repo", "/charts/a-1.0.0.tgz.prov")
        );
        assert_eq!(
            route("/api/org/repo/charts", two),
            repo("org/repo", "/api/charts")
        );
        assert_eq!(
            route("/api/org/repo/charts/a/1.0.0/values", two),
            repo("org/repo", "/api/charts/a/1.0.0/values")
        );
        assert_eq!(
            route("/api/org/repo/prov", two),
            repo("org/repo", "/api/prov")
        );
        assert_eq!(
            route("/a/index.yaml", Depth::Fixed(1)),
            repo("a", "/index.yaml")
        );
    }

    #[test]
    fn a_repository_s_web_pages_are_its_own() {
        let two = Depth::Fixed(2);
        let at = |path: &str| Route::Repository {
            repository: "org/repo".to_owned(),
            path: path.to_owned(),
        };
        assert_eq!(route("/org/repo/", two), at("/"));
        assert_eq!(route("/org/repo/charts/web", two), at("/charts/web"));
        assert_eq!(
            route("/org/repo/charts/web/1.0.0", two),
            at("/charts/web/1.0.0")
        );
        assert_eq!(
            route("/org/repo/_chartkit/web.css", two),
            at("/_chartkit/web.css")
        );
        assert_eq!(route("/org/repo/", Depth::Dynamic), at("/"));
    }

    #[test]
    fn the_wrong_depth_is_not_found() {
        let two = Depth::Fixed(2);
        for path in [
            "/index.yaml",
            "/org/index.yaml",
            "/a/b/c/index.yaml",
            "/api/charts",
            "/api/org/charts",
            "/api/org/repo/charts/a/1.0.0/readme",
            "/org/repo/charts",
            "/org/repo",
            "/charts/a-1.0.0.tgz",
        ] {
            assert_eq!(route(path, two), Route::NotFound, "{path}");
        }
        assert_eq!(route("/index.yaml", Depth::Fixed(1)), Route::NotFound);
        assert_eq!(route("/a/b/index.yaml", Depth::Fixed(1)), Route::NotFound);
    }

    #[test]
    fn repository_names_are_plain_segments() {
        let one = Depth::Fixed(1);
        for path in [
            "/../index.yaml",
            "/.git/index.yaml",
            "//index.yaml",
            "/a%2f/index.yaml",
        ] {
            assert_eq!(route(path, one), Route::NotFound, "{path}");
        }
    }

    #[test]
    fn server_routes_stay_at_the_root() {
        for path in [
            "/",
            "/health",
            "/info",
            "/ready",
            "/metrics",
            "/v2/",
            "/v2/token",
        ] {
            assert_eq!(route(path, Depth::Fixed(2)), Route::Server, "{path}");
            assert_eq!(route(path, Depth::Dynamic), Route::Server, "{path}");
        }
        assert_eq!(route("/api/charts", Depth::Single), Route::Server);
    }

    #[test]
    fn files_under_api_belong_to_a_repository_named_api() {
        assert_eq!(
            route("/api/index.yaml", Depth::Fixed(1)),
            repo("api", "/index.yaml")
        );
        assert_eq!(
            route("/api/charts/a-1.0.0.tgz", Depth::Fixed(1)),
            repo("api", "/charts/a-1.0.0.tgz")
        );
    }

    #[test]
    fn dynamic_depth_is_what_precedes_the_route() {
        let dynamic = Depth::Dynamic;
        assert_eq!(route("/index.yaml", dynamic), repo("", "/index.yaml"));
        assert_eq!(route("/a/index.yaml", dynamic), repo("a", "/index.yaml"));
        assert_eq!(
            route("/a/b/c/charts/x-1.0.0.tgz", dynamic),
            repo("a/b/c", "/charts/x-1.0.0.tgz")
        );
        assert_eq!(route("/api/charts", dynamic), repo("", "/api/charts"));
        assert_eq!(
            route("/api/a/b/charts/x/1.0.0", dynamic),
            repo("a/b", "/api/charts/x/1.0.0")
        );
        assert_eq!(
            route("/api/a/charts/x/1.0.0/templates", dynamic),
            repo("a", "/api/charts/x/1.0.0/templates")
        );
        assert_eq!(route("/api/a/prov", dynamic), repo("a", "/api/prov"));
        assert_eq!(route("/a/b", dynamic), Route::NotFound);
        assert_eq!(route("/api/a/b", dynamic), Route::NotFound);
    }

    #[test]
    fn dynamic_depth_takes_the_first_template_that_fits_as_chartmuseum_does() {
        // `/api/:repo/charts/:name/:version` comes before `…/templates`, so a one-segment
        // version path reads as version `templates` of a repository one level up.
        assert_eq!(
            route("/api/a/charts/x/templates", Depth::Dynamic),
            repo("a", "/api/charts/x/templates")
        );
        // `/api/:repo/charts` comes first: a repository may end in `charts`.
        assert_eq!(
            route("/api/org/charts/charts", Depth::Dynamic),
            repo("org/charts", "/api/charts")
        );
    }

    #[test]
    fn registry_names_carry_the_repository() {
        assert_eq!(
            route("/v2/org/repo/web/manifests/1.0.0", Depth::Fixed(2)),
            Route::Registry {
                repository: "org/repo".to_owned()
            }
        );
        assert_eq!(
            route("/v2/org/web/blobs/uploads/", Depth::Fixed(2)),
            Route::UnknownRegistryName("org/web".to_owned())
        );
        assert_eq!(
            route("/v2/a/b/c/web/tags/list", Depth::Dynamic),
            Route::Registry {
                repository: "a/b/c".to_owned()
            }
        );
        assert_eq!(
            route("/v2/web/tags/list", Depth::Dynamic),
            Route::UnknownRegistryName("web".to_owned())
        );
        assert_eq!(route("/v2/nonsense", Depth::Fixed(1)), Route::Server);
    }
}
