//! Request paths as the API server reads them (its `RequestInfoFactory`).

/// What a resource request names.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourcePath {
    pub group: String,
    pub version: String,
    pub namespace: String,
    pub resource: String,
    pub name: String,
    pub subresource: String,
    /// The deprecated `/watch/` prefix was used.
    pub watch_prefix: bool,
}

/// Every kind of path the sandbox answers.
#[derive(Debug, Clone, PartialEq)]
pub enum ApiPath {
    Version,
    Health,
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/GROUP`
    Group(String),
    /// `/api/v1`, `/apis/GROUP/VERSION`
    GroupVersion(String, String),
    /// `/openapi/v2`
    OpenApiV2,
    /// `/openapi/v3`
    OpenApiV3Root,
    /// `/openapi/v3/api/v1`, `/openapi/v3/apis/GROUP/VERSION`
    OpenApiV3(String, String),
    Resource(ResourcePath),
    Unknown,
}

pub fn parse(path: &str) -> ApiPath {
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    match parts.as_slice() {
        ["version"] => ApiPath::Version,
        ["healthz" | "livez" | "readyz", ..] => ApiPath::Health,
        ["api"] => ApiPath::CoreVersions,
        ["apis"] => ApiPath::Groups,
        ["apis", group] => ApiPath::Group(group.to_string()),
        ["api", version] => ApiPath::GroupVersion(String::new(), version.to_string()),
        ["apis", group, version] => ApiPath::GroupVersion(group.to_string(), version.to_string()),
        ["openapi", "v2"] | ["swagger.json"] => ApiPath::OpenApiV2,
        ["openapi", "v3"] => ApiPath::OpenApiV3Root,
        ["openapi", "v3", "api", version] => ApiPath::OpenApiV3(String::new(), version.to_string()),
        ["openapi", "v3", "apis", group, version] => {
            ApiPath::OpenApiV3(group.to_string(), version.to_string())
        }
        ["api", version, rest @ ..] => resource(String::new(), version, rest),
        ["apis", group, version, rest @ ..] => resource(group.to_string(), version, rest),
        _ => ApiPath::Unknown,
    }
}

fn resource(group: String, version: &str, rest: &[&str]) -> ApiPath {
    let mut p = ResourcePath {
        group,
        version: version.to_string(),
        ..ResourcePath::default()
    };
    let mut rest = rest;
    if rest.first() == Some(&"watch") {
        p.watch_prefix = true;
        rest = &rest[1..];
    }
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        p.namespace = rest[1].to_string();
        if rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
            rest = &rest[2..];
        } else {
            // `namespaces/NAME[/status|/finalize]`: the namespace object itself.
            p.resource = "namespaces".into();
            p.name = rest[1].to_string();
            p.namespace = String::new();
            if let Some(sub) = rest.get(2) {
                p.subresource = sub.to_string();
            }
            if rest.len() > 3 {
                return ApiPath::Unknown;
            }
            return ApiPath::Resource(p);
        }
    }
    match rest {
        [resource] => p.resource = resource.to_string(),
        [resource, name] => {
            p.resource = resource.to_string();
            p.name = name.to_string();
        }
        [resource, name, sub, rest @ ..] => {
            // Only `proxy` takes a path after it (the path to request on the pod or
            // service, which the proxy handler reads from the raw URI to keep its
            // slashes); any other subresource with more segments is no route.
            if !rest.is_empty() && *sub != "proxy" {
                return ApiPath::Unknown;
            }
            p.resource = resource.to_string();
            p.name = name.to_string();
            p.subresource = sub.to_string();
        }
        _ => return ApiPath::Unknown,
    }
    ApiPath::Resource(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match parse(path) {
            ApiPath::Resource(r) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn paths_parse_as_the_api_server_parses_them() {
        let r = res("/api/v1/namespaces/default/pods/web/log");
        assert_eq!(
            (
                r.namespace.as_str(),
                r.resource.as_str(),
                r.name.as_str(),
                r.subresource.as_str()
            ),
            ("default", "pods", "web", "log")
        );
        let r = res("/api/v1/namespaces/kube-system");
        assert_eq!(
            (r.resource.as_str(), r.name.as_str(), r.namespace.as_str()),
            ("namespaces", "kube-system", "")
        );
        let r = res("/api/v1/namespaces/x/finalize");
        assert_eq!(
            (r.resource.as_str(), r.subresource.as_str()),
            ("namespaces", "finalize")
        );
        let r = res("/api/v1/namespaces/default/services/charts:8879/proxy/a/index.yaml");
        assert_eq!(
            (r.resource.as_str(), r.name.as_str(), r.subresource.as_str()),
            ("services", "charts:8879", "proxy")
        );
        assert_eq!(
            parse("/api/v1/namespaces/default/pods/web/status/extra"),
            ApiPath::Unknown
        );
        let r = res("/apis/apps/v1/watch/namespaces/a/deployments");
        assert!(r.watch_prefix);
        assert_eq!(r.resource, "deployments");
        assert_eq!(
            parse("/apis/apps/v1"),
            ApiPath::GroupVersion("apps".into(), "v1".into())
        );
        assert_eq!(
            parse("/openapi/v3/apis/apps/v1"),
            ApiPath::OpenApiV3("apps".into(), "v1".into())
        );
    }
}
