//! Watch streams: newline-delimited JSON events, starting with the objects that exist
//! (for a watch from "now" or with `sendInitialEvents`) or the changes after a
//! resourceVersion, filtered by namespace, name and selectors (an object that stops
//! matching is sent as DELETED, one that starts as ADDED), with bookmarks and
//! `timeoutSeconds`. Only durable changes are sent.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use hyper::Response;
use serde_json::{Value, json};

use super::{App, Query, list_options, table};
use crate::cluster::Target;
use crate::meta;
use crate::status::{ApiError, ApiResult};
use crate::store::Change;

/// How often a watch that asked for bookmarks gets one.
const BOOKMARK_EVERY: Duration = Duration::from_secs(15);
/// A watch's length when the client gives no `timeoutSeconds` (the API server picks
/// between 30 and 60 minutes).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

struct Filter {
    resource: String,
    namespace: Option<String>,
    name: Option<String>,
    labels: crate::selector::LabelSelector,
    fields: crate::selector::FieldSelector,
    group: String,
    plural: String,
}

impl Filter {
    fn in_scope(&self, c: &Change) -> bool {
        c.key.resource == self.resource
            && self
                .namespace
                .as_ref()
                .is_none_or(|n| *n == c.key.namespace)
            && self.name.as_ref().is_none_or(|n| *n == c.key.name)
    }

    fn matches(&self, o: &Value) -> bool {
        self.labels.matches_object(o) && self.fields.matches(&self.group, &self.plural, o)
    }

    /// The event type a change is sent as, if it is sent at all.
    fn event(&self, c: &Change) -> Option<&'static str> {
        let before = c.previous.as_deref().is_some_and(|o| self.matches(o));
        let after = c.object.as_deref().is_some_and(|o| self.matches(o));
        match (c.event_type(), before, after) {
            ("ADDED", _, true) => Some("ADDED"),
            ("DELETED", true, _) => Some("DELETED"),
            ("MODIFIED", true, true) => Some("MODIFIED"),
            ("MODIFIED", false, true) => Some("ADDED"),
            ("MODIFIED", true, false) => Some("DELETED"),
            _ => None,
        }
    }
}

struct Encoder {
    target: Target,
    cluster: Arc<crate::cluster::Cluster>,
    table: Option<table::Include>,
    headers_sent: bool,
}

impl Encoder {
    fn event(&mut self, kind: &str, object: &Value) -> Bytes {
        let served = self.cluster.present(&self.target, object);
        let object = match self.table {
            None => served,
            Some(include) => {
                let mut t = table::table(
                    &self.target.def,
                    &self.target.version,
                    std::slice::from_ref(&served),
                    include,
                    json!({"resourceVersion": served["metadata"]["resourceVersion"]}),
                );
                if self.headers_sent {
                    t["columnDefinitions"] = Value::Null;
                }
                self.headers_sent = true;
                t
            }
        };
        line(&json!({"type": kind, "object": object}))
    }

    fn bookmark(&self, rv: u64, initial_end: bool) -> Bytes {
        let mut m = json!({"resourceVersion": rv.to_string(), "creationTimestamp": null});
        if initial_end {
            m["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        line(&json!({
            "type": "BOOKMARK",
            "object": {
                "kind": self.target.def.kind,
                "apiVersion": self.target.def.api_version(&self.target.version),
                "metadata": m,
            },
        }))
    }
}

fn line(v: &Value) -> Bytes {
    let mut bytes = serde_json::to_vec(v).expect("JSON serialises");
    bytes.push(b'\n');
    Bytes::from(bytes)
}

pub fn serve(app: &Arc<App>, target: Target, q: &Query, accept: &str) -> ApiResult<Response<Body>> {
    let cluster = Arc::clone(&app.cluster);
    let opts = list_options(q)?;
    opts.fields
        .check_supported(&target.def.group, &target.def.plural)?;
    let filter = Filter {
        resource: target.def.key(),
        namespace: (target.def.namespaced && !target.namespace.is_empty())
            .then(|| target.namespace.clone()),
        name: (!target.name.is_empty()).then(|| target.name.clone()),
        labels: opts.labels,
        fields: opts.fields,
        group: target.def.group.clone(),
        plural: target.def.plural.clone(),
    };
    let rv_param = q.get("resourceVersion").unwrap_or("");
    let send_initial = match q.get("sendInitialEvents") {
        Some("true") => true,
        Some(_) => false,
        None => rv_param.is_empty() || rv_param == "0",
    };
    let bookmarks = q.flag("allowWatchBookmarks");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .filter(|t| *t > 0)
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT);
    let start: Option<u64> = if rv_param.is_empty() || rv_param == "0" {
        None
    } else {
        Some(
            rv_param
                .parse::<u64>()
                .map_err(|_| ApiError::unknown(ApiError::resource_version_text(rv_param)))?,
        )
    };
    let is_table = table::wants_table(accept);
    // includeObject is checked only when a Table is asked for, as the API server does.
    let table = if is_table {
        Some(table::Include::parse(q.get("includeObject"))?)
    } else {
        None
    };
    let mut encoder = Encoder {
        target: target.clone(),
        cluster: Arc::clone(&cluster),
        table,
        headers_sent: false,
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(256);
    let mut durable = cluster.store.durable_rx();
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + timeout;
        let current_durable = *durable.borrow_and_update();
        let mut pos = match start {
            Some(rv) if !send_initial => rv,
            _ => {
                let ns = filter.namespace.as_deref();
                let (objects, rv) = cluster.store.list(&filter.resource, ns);
                // Changes not yet durable come later, as events.
                let rv = rv.min(current_durable);
                for o in objects {
                    if filter.name.as_deref().is_some_and(|n| n != meta::name(&o))
                        || !filter.matches(&o)
                    {
                        continue;
                    }
                    if tx.send(encoder.event("ADDED", &o)).await.is_err() {
                        return;
                    }
                }
                if send_initial && bookmarks && tx.send(encoder.bookmark(rv, true)).await.is_err() {
                    return;
                }
                rv
            }
        };
        let mut bookmark_at = tokio::time::Instant::now() + BOOKMARK_EVERY;
        loop {
            let until = *durable.borrow_and_update();
            if until > pos {
                let changes = match cluster.store.changes(pos, until, |c| filter.in_scope(c)) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = tx
                            .send(line(&json!({"type": "ERROR", "object": e.to_status()})))
                            .await;
                        return;
                    }
                };
                for c in &changes {
                    if let Some(kind) = filter.event(c)
                        && tx.send(encoder.event(kind, c.subject())).await.is_err()
                    {
                        return;
                    }
                }
                pos = until;
            }
            tokio::select! {
                changed = durable.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                () = tokio::time::sleep_until(bookmark_at) => {
                    bookmark_at = tokio::time::Instant::now() + BOOKMARK_EVERY;
                    if bookmarks && tx.send(encoder.bookmark(pos, false)).await.is_err() {
                        return;
                    }
                }
                () = tokio::time::sleep_until(deadline) => return,
                () = tx.closed() => return,
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<Bytes, std::io::Error>(b), rx))
    });
    let content_type = if is_table {
        table::TABLE_CONTENT_TYPE
    } else {
        "application/json"
    };
    Ok(Response::builder()
        .status(200)
        .header("content-type", content_type)
        .header("cache-control", "no-cache, private")
        .body(Body::from_stream(stream))
        .expect("a valid response"))
}
