//! The HTTP front: routing by the API server's path rules, content negotiation (JSON,
//! YAML bodies, Tables, aggregated discovery), watch streams, and the `Status` errors
//! clients parse.

mod audit;
pub mod discovery;
mod openapi;
pub mod path;
mod request_body;
pub mod table;
mod table_apps;
mod table_cluster;
mod table_custom;
mod table_net;
pub mod table_pod;
mod watch;

#[cfg(test)]
mod garbage_tests;

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use crate::cluster::{
    Cluster, DeleteOptions, Deleted, FieldValidation, ListOptions, Target, WriteOptions, Written,
};
use crate::patch::PatchType;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::{ApiError, ApiResult};
use path::{ApiPath, ResourcePath};

pub use audit::AuditLog;

/// Where `chartkit sandbox down` asks a background sandbox to stop.
pub const SHUTDOWN_PATH: &str = "/.chartkit/shutdown";
/// The header carrying the shutdown secret.
pub const SHUTDOWN_HEADER: &str = "x-chartkit-shutdown";

pub use request_body::MAX_BODY;
use request_body::read_body;

/// What every request handler shares.
pub struct App {
    pub cluster: Arc<Cluster>,
    /// `host:port` clients reach the server at (for `/api`'s server address).
    pub address: String,
    pub openapi: openapi::Cache,
    /// The secret `chartkit sandbox down` sends to stop this server, if it may.
    pub shutdown_token: Option<String>,
    /// Told when a shutdown request arrives.
    pub shutdown: tokio::sync::Notify,
    /// Where each request is written, with `--audit-log`.
    pub audit: Option<AuditLog>,
}

impl App {
    pub fn new(
        cluster: Arc<Cluster>,
        address: String,
        shutdown_token: Option<String>,
        audit: Option<AuditLog>,
    ) -> Arc<App> {
        Arc::new(App {
            cluster,
            address,
            openapi: openapi::Cache::default(),
            shutdown_token,
            shutdown: tokio::sync::Notify::new(),
            audit,
        })
    }
}

/// Query parameters (the last of a repeated one wins, as Go's `Get` takes the first:
/// clients never repeat them).
pub struct Query(HashMap<String, String>);

impl Query {
    pub fn parse(query: Option<&str>) -> Query {
        let mut map = HashMap::new();
        if let Some(q) = query {
            for (k, v) in form_urlencoded::parse(q.as_bytes()) {
                map.entry(k.into_owned()).or_insert_with(|| v.into_owned());
            }
        }
        Query(map)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1" | "True"))
    }
}

fn json_response(code: u16, value: &Value) -> Response<Body> {
    typed_response(code, "application/json", value)
}

fn typed_response(code: u16, content_type: &str, value: &Value) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", content_type)
        .header("cache-control", "no-cache, private")
        .body(Body::from(
            serde_json::to_vec(value).expect("JSON serialises"),
        ))
        .expect("a valid response")
}

pub fn error_response(e: &ApiError) -> Response<Body> {
    json_response(e.code, &e.to_status())
}

fn with_warnings(mut resp: Response<Body>, warnings: &[String]) -> Response<Body> {
    for w in warnings {
        let text = format!("299 - {}", go_quote(w));
        if let Ok(v) = hyper::header::HeaderValue::from_str(&text) {
            resp.headers_mut().append("warning", v);
        }
    }
    resp
}

fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_ascii_graphic() || c == ' ' => out.push(c),
            c => out.push_str(&format!("\\u{:04x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Handles one request, writing it to the audit log when there is one.
pub async fn handle(app: Arc<App>, req: Request<Body>) -> Response<Body> {
    let Some(audit) = app.audit.as_ref() else {
        return answer(&app, req).await;
    };
    let method = req.method().to_string();
    let uri = req.uri().to_string();
    let agent = header(req.headers(), "user-agent").to_string();
    let response = answer(&app, req).await;
    audit.record(&method, &uri, &agent, response.status().as_u16());
    response
}

async fn answer(app: &Arc<App>, req: Request<Body>) -> Response<Body> {
    if req.uri().path() == SHUTDOWN_PATH {
        let given = header(req.headers(), SHUTDOWN_HEADER);
        if req.method() == Method::POST
            && app
                .shutdown_token
                .as_deref()
                .is_some_and(|t| !given.is_empty() && t == given)
        {
            app.shutdown.notify_one();
            return json_response(200, &json!({"stopping": true}));
        }
        return error_response(&ApiError::no_route());
    }
    if let Some(token) = &app.cluster.settings.token {
        let given = req
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        if given != Some(token.as_str()) {
            return error_response(&ApiError::unauthorized());
        }
    }
    // As the API server's panic filter does: a bug answers 500, never a dropped
    // connection.
    use futures::FutureExt as _;
    match std::panic::AssertUnwindSafe(route(app, req))
        .catch_unwind()
        .await
    {
        Ok(Ok(resp)) => resp,
        Ok(Err(e)) => error_response(&e),
        Err(_) => error_response(&ApiError::internal(
            "an error on the server (\"the sandbox failed while handling the request\") has prevented the request from succeeding",
        )),
    }
}

async fn route(app: &Arc<App>, req: Request<Body>) -> ApiResult<Response<Body>> {
    let path = parse_path(req.uri().path());
    let accept = header(req.headers(), "accept");
    let get_only = |method: &Method| -> ApiResult<()> {
        if method == Method::GET || method == Method::HEAD {
            Ok(())
        } else {
            Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource",
            ))
        }
    };
    match path {
        ApiPath::Version => {
            get_only(req.method())?;
            Ok(json_response(200, &version_info(&app.cluster)))
        }
        ApiPath::Health => Ok(Response::builder()
            .status(200)
            .header("content-type", "text/plain; charset=utf-8")
            .body(Body::from("ok"))
            .expect("a valid response")),
        ApiPath::CoreVersions => {
            get_only(req.method())?;
            if discovery::wants_aggregated(&accept) {
                let doc = discovery::aggregated(&app.cluster.registry(), true);
                Ok(discovery::aggregated_response(&doc, req.headers()))
            } else {
                Ok(json_response(200, &discovery::core_versions(&app.address)))
            }
        }
        ApiPath::Groups => {
            get_only(req.method())?;
            if discovery::wants_aggregated(&accept) {
                let doc = discovery::aggregated(&app.cluster.registry(), false);
                Ok(discovery::aggregated_response(&doc, req.headers()))
            } else {
                Ok(json_response(
                    200,
                    &discovery::groups(&app.cluster.registry()),
                ))
            }
        }
        ApiPath::Group(g) => {
            get_only(req.method())?;
            discovery::group(&app.cluster.registry(), &g)
                .map(|d| json_response(200, &d))
                .ok_or_else(ApiError::no_route)
        }
        ApiPath::GroupVersion(g, v) => {
            get_only(req.method())?;
            discovery::resource_list(&app.cluster.registry(), &g, &v)
                .map(|d| json_response(200, &d))
                .ok_or_else(ApiError::no_route)
        }
        ApiPath::OpenApiV2 => {
            get_only(req.method())?;
            openapi::v2(app, &accept)
        }
        ApiPath::OpenApiV3Root => {
            get_only(req.method())?;
            Ok(json_response(200, &openapi::v3_root(app)))
        }
        ApiPath::OpenApiV3(g, v) => {
            get_only(req.method())?;
            openapi::v3(app, &g, &v).map(|doc| json_response(200, &doc))
        }
        ApiPath::Resource(rp) => {
            // Deprecated resources: every request for them carries the API server's warning.
            let warning = match (rp.group.as_str(), rp.resource.as_str()) {
                ("", "endpoints") => Some(
                    "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice",
                ),
                ("", "componentstatuses") => Some("v1 ComponentStatus is deprecated in v1.19+"),
                _ => None,
            };
            let resp = resource_request(app, rp, req).await?;
            Ok(match warning {
                Some(w) => with_warnings(resp, &[w.to_string()]),
                None => resp,
            })
        }
        ApiPath::Unknown => Err(ApiError::no_route()),
    }
}

fn parse_path(path: &str) -> ApiPath {
    path::parse(path)
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

fn version_info(cluster: &Cluster) -> Value {
    let v = &cluster.settings.kubernetes_version;
    json!({
        "major": v.major.to_string(),
        "minor": v.minor.to_string(),
        "emulationMajor": v.major.to_string(),
        "emulationMinor": v.minor.to_string(),
        "minCompatibilityMajor": v.major.to_string(),
        "minCompatibilityMinor": (v.minor - 1).to_string(),
        "gitVersion": v.git_version(),
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.6",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// A write's options; `kind` names them in errors (`CreateOptions`, `UpdateOptions`,
/// `PatchOptions`).
fn write_options(q: &Query, headers: &HeaderMap, kind: &str) -> ApiResult<WriteOptions> {
    use crate::status::Cause;
    // The options' own validation, every failure at once.
    let mut causes = Vec::new();
    if let Some(m) = q.get("fieldManager") {
        if m.len() > 128 {
            causes.push(Cause {
                reason: "FieldValueTooLong",
                field: "fieldManager".into(),
                value: None,
                detail: "Too long: may not be more than 128 bytes".into(),
            });
        }
        for (i, c) in m.char_indices() {
            if c.is_control() {
                causes.push(Cause::invalid(
                    "fieldManager",
                    &json!(m),
                    format!("invalid character U+{:04X} (at position {i})", c as u32),
                ));
            }
        }
    }
    let dry_run = match q.get("dryRun") {
        None | Some("") => false,
        Some("All") => true,
        Some(other) => {
            causes.push(Cause::not_supported("dryRun", &json!([other]), &["All"]));
            false
        }
    };
    let validation = match q.get("fieldValidation") {
        None | Some("") => FieldValidation::Warn,
        Some("Strict") => FieldValidation::Strict,
        Some("Warn") => FieldValidation::Warn,
        Some("Ignore") => FieldValidation::Ignore,
        Some(other) => {
            causes.push(Cause::not_supported(
                "fieldValidation",
                &json!(other),
                &["", "Ignore", "Strict", "Warn"],
            ));
            FieldValidation::Warn
        }
    };
    if !causes.is_empty() {
        return Err(ApiError::invalid(kind, "meta.k8s.io", "", causes));
    }
    let manager = match q.get("fieldManager") {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => {
            let ua = header(headers, "user-agent");
            ua.split('/')
                .next()
                .unwrap_or("")
                .chars()
                .take(128)
                .collect()
        }
    };
    Ok(WriteOptions {
        dry_run,
        manager,
        validation,
        force: q.flag("force"),
        duplicates: Vec::new(),
    })
}

/// A list's options after the handler's and the storage layer's checks of its
/// resourceVersion and resourceVersionMatch (a watch's are checked, and worded, by the
/// watch); an exact resourceVersion older than the change log is gone.
fn checked_list_options(q: &Query, cluster: &Cluster) -> ApiResult<ListOptions> {
    let rv = q.get("resourceVersion").unwrap_or("");
    let continuing = q.get("continue").is_some_and(|c| !c.is_empty());
    if let Some(m) = q.get("resourceVersionMatch").filter(|m| !m.is_empty()) {
        use crate::status::Cause;
        let mut causes = Vec::new();
        let field = "resourceVersionMatch";
        if rv.is_empty() {
            causes.push(Cause::forbidden(
                field,
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if continuing {
            causes.push(Cause::forbidden(
                field,
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if m != "Exact" && m != "NotOlderThan" {
            causes.push(Cause::not_supported(
                field,
                &json!(m),
                &["Exact", "NotOlderThan", ""],
            ));
        }
        if m == "Exact" && rv == "0" {
            causes.push(Cause::forbidden(
                field,
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
        if !causes.is_empty() {
            return Err(ApiError::invalid("ListOptions", "meta.k8s.io", "", causes));
        }
        if m == "Exact"
            && let Ok(n) = rv.parse::<u64>()
            && cluster.store.changes(n, n, |_| false).is_err()
        {
            return Err(ApiError::gone(
                "The resourceVersion for the provided list is too old.",
            ));
        }
    }
    if !rv.is_empty() && !continuing && rv.parse::<u64>().is_err() {
        return Err(ApiError::bad_request(format!(
            "invalid resource version: {}",
            ApiError::resource_version_text(rv)
        )));
    }
    list_options(q)
}

fn list_options(q: &Query) -> ApiResult<ListOptions> {
    Ok(ListOptions {
        labels: LabelSelector::parse(q.get("labelSelector").unwrap_or(""))?,
        fields: FieldSelector::parse(q.get("fieldSelector").unwrap_or(""))?,
        limit: q
            .get("limit")
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|l| *l > 0),
        continue_token: q
            .get("continue")
            .filter(|c| !c.is_empty())
            .map(String::from),
    })
}

async fn resource_request(
    app: &Arc<App>,
    rp: ResourcePath,
    req: Request<Body>,
) -> ApiResult<Response<Body>> {
    let cluster = &app.cluster;
    let def = cluster
        .registry()
        .lookup(&rp.group, &rp.version, &rp.resource)
        .ok_or_else(ApiError::no_route)?;
    if !rp.subresource.is_empty()
        && !def.has_subresource(&rp.subresource)
        && !def.custom.as_ref().is_some_and(|c| {
            (rp.subresource == "status" && c.status.contains(&rp.version))
                || (rp.subresource == "scale" && c.scale.contains_key(&rp.version))
        })
    {
        return Err(ApiError::no_route());
    }
    if !def.namespaced && !rp.namespace.is_empty() {
        return Err(ApiError::no_route());
    }
    let target = Target {
        def: Arc::clone(&def),
        version: rp.version.clone(),
        namespace: rp.namespace.clone(),
        name: rp.name.clone(),
        subresource: rp.subresource.clone(),
    };
    let q = Query::parse(req.uri().query());
    let method = req.method().clone();
    let accept = header(req.headers(), "accept");
    let content_type = header(req.headers(), "content-type");
    let headers = req.headers().clone();
    let expect = crate::body::Expect::for_target(&target);

    match rp.subresource.as_str() {
        "log" => return crate::pods::log_response(cluster, &target, &q).await,
        "portforward" => return crate::portforward::handle(Arc::clone(cluster), target, req).await,
        "proxy" => return crate::portforward::proxy(Arc::clone(cluster), target, req).await,
        "exec" | "attach" => {
            return Err(ApiError::bad_request(
                "the sandbox runs no containers: exec and attach are not available",
            ));
        }
        _ => {}
    }

    // `?watch` matters to a GET only (a create or delete ignores it); the `/watch/`
    // paths serve GETs only.
    if rp.watch_prefix || (q.flag("watch") && method == Method::GET) {
        if method != Method::GET {
            return Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource",
            ));
        }
        return watch::serve(app, target, &q, &accept);
    }

    if !def.allows(verb(&method, &target)) && target.subresource.is_empty() {
        return Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        ));
    }

    match (&method, target.name.is_empty()) {
        (&Method::GET, true) => {
            let opts = checked_list_options(&q, cluster)?;
            let list = cluster.list(&target, &opts)?;
            if table::wants_table(&accept) {
                let items = list["items"].as_array().cloned().unwrap_or_default();
                let t = table::table(
                    &def,
                    &target.version,
                    &items,
                    table::Include::parse(q.get("includeObject"))?,
                    list["metadata"].clone(),
                );
                return Ok(typed_response(200, table::TABLE_CONTENT_TYPE, &t));
            }
            Ok(json_response(200, &list))
        }
        (&Method::GET, false) => {
            let object = cluster.get(&target)?;
            // A status subresource prints as its resource; a scale as a Scale.
            if table::wants_table(&accept)
                && matches!(target.subresource.as_str(), "" | "status" | "scale")
            {
                let include = table::Include::parse(q.get("includeObject"))?;
                let list_meta = json!({"resourceVersion": object["metadata"]["resourceVersion"]});
                let t = if target.subresource == "scale" {
                    table::scale_table(&object, include, list_meta)
                } else {
                    table::table(
                        &def,
                        &target.version,
                        std::slice::from_ref(&object),
                        include,
                        list_meta,
                    )
                };
                return Ok(typed_response(200, table::TABLE_CONTENT_TYPE, &t));
            }
            Ok(json_response(200, &object))
        }
        (&Method::POST, true) => {
            let mut opts = write_options(&q, &headers, "CreateOptions")?;
            let body = read_body(&headers, req.into_body()).await?;
            let object = crate::body::parse_object_for(&expect, &content_type, &body)?;
            opts.duplicates = crate::body::duplicate_fields(&body);
            if let Some(resp) = crate::virtual_resources::create(cluster, &target, &object)? {
                return Ok(json_response(201, &resp));
            }
            let written = cluster.create(&target, object, &opts)?;
            finish_write(cluster, written, 201).await
        }
        (&Method::POST, false) => {
            // Subresources created by POST: eviction, token, binding.
            let body = read_body(&headers, req.into_body()).await?;
            let object = crate::body::parse_object_for(&expect, &content_type, &body)?;
            crate::virtual_resources::post_subresource(cluster, &target, &object)
                .map(|v| json_response(201, &v))
        }
        (&Method::PUT, false) => {
            let mut opts = write_options(&q, &headers, "UpdateOptions")?;
            let body = read_body(&headers, req.into_body()).await?;
            let object = crate::body::parse_object_for(&expect, &content_type, &body)?;
            opts.duplicates = crate::body::duplicate_fields(&body);
            if target.subresource == "finalize" {
                let written =
                    crate::controllers::namespace::finalize(cluster, &target, object, &opts)?;
                return finish_write(cluster, written, 200).await;
            }
            let written = cluster.update(&target, object, &opts)?;
            finish_write(cluster, written, 200).await
        }
        (&Method::PATCH, false) => {
            let kind = PatchType::from_content_type(&content_type)
                .ok_or_else(|| ApiError::unsupported_patch_type(def.custom.is_some()))?;
            let opts = write_options(&q, &headers, "PatchOptions")?;
            let body = read_body(&headers, req.into_body()).await?;
            let written = cluster.patch(&target, kind, &body, &opts)?;
            let code = if written.created { 201 } else { 200 };
            finish_write(cluster, written, code).await
        }
        (&Method::DELETE, named) => {
            let body = read_body(&headers, req.into_body()).await?;
            let opts = delete_options(&q, &content_type, &body)?;
            if named {
                let lo = list_options(&q)?;
                let out = cluster.delete_collection(&target, &lo, &opts)?;
                return Ok(json_response(200, &out));
            }
            let (deleted, rv) = cluster.delete(&target, &opts)?;
            cluster.store.durable(rv).await?;
            Ok(match deleted {
                Deleted::Pending(o) => json_response(200, &o),
                Deleted::Gone(o) if def.group.is_empty() && def.plural == "pods" => {
                    json_response(200, &o)
                }
                Deleted::Gone(o) => {
                    let mut details = json!({"name": target.name, "kind": def.plural, "uid": o["metadata"]["uid"]});
                    if !def.group.is_empty() {
                        details["group"] = json!(def.group);
                    }
                    json_response(
                        200,
                        &json!({
                            "kind": "Status",
                            "apiVersion": "v1",
                            "metadata": {},
                            "status": "Success",
                            "details": details,
                        }),
                    )
                }
            })
        }
        _ => Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )),
    }
}

fn verb(method: &Method, t: &Target) -> &'static str {
    match (method.as_str(), t.name.is_empty()) {
        ("GET", true) => "list",
        ("GET", false) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "deletecollection",
        ("DELETE", false) => "delete",
        _ => "",
    }
}

async fn finish_write(cluster: &Cluster, written: Written, code: u16) -> ApiResult<Response<Body>> {
    if written.rv > 0 {
        cluster.store.durable(written.rv).await?;
    }
    Ok(with_warnings(
        json_response(code, &written.object),
        &written.warnings,
    ))
}

fn delete_options(q: &Query, content_type: &str, body: &[u8]) -> ApiResult<DeleteOptions> {
    let mut opts = DeleteOptions::default();
    if !body.iter().all(u8::is_ascii_whitespace) {
        // Typed clients send their DeleteOptions in protobuf.
        let protobuf =
            content_type.split(';').next().map(str::trim) == Some(crate::proto::MEDIA_TYPE);
        let v: Value = if protobuf {
            crate::body::parse_object_for(
                &crate::body::Expect::delete_options(),
                content_type,
                body,
            )?
        } else {
            serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?
        };
        opts.dry_run = v["dryRun"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "All"));
        opts.grace_period = v["gracePeriodSeconds"].as_i64();
        opts.propagation = v["propagationPolicy"].as_str().map(String::from);
        if opts.propagation.is_none()
            && let Some(orphan) = v["orphanDependents"].as_bool()
        {
            opts.propagation = Some(if orphan { "Orphan" } else { "Background" }.to_string());
        }
        opts.precondition_uid = v["preconditions"]["uid"].as_str().map(String::from);
        opts.precondition_rv = v["preconditions"]["resourceVersion"]
            .as_str()
            .map(String::from);
    }
    match q.get("dryRun") {
        None | Some("") => {}
        Some("All") => opts.dry_run = true,
        Some(other) => {
            return Err(ApiError::invalid(
                "DeleteOptions",
                "meta.k8s.io",
                "",
                vec![crate::status::Cause::not_supported(
                    "dryRun",
                    &json!([other]),
                    &["All"],
                )],
            ));
        }
    }
    if let Some(g) = q.get("gracePeriodSeconds").and_then(|g| g.parse().ok()) {
        opts.grace_period = Some(g);
    }
    if let Some(p) = q.get("propagationPolicy") {
        opts.propagation = Some(p.to_string());
    }
    Ok(opts)
}

/// Lets handlers in other modules build JSON responses.
pub fn respond(code: u16, value: &Value) -> Response<Body> {
    json_response(code, value)
}

#[allow(dead_code)]
fn status_code(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}
