//! `pods/log`: no container runs, so a container's log is what the simulated kubelet did
//! with it: a line when it started and one when it exited. Each start of a container has
//! its own log (`previous=true` reads the one before), with the kubelet's options
//! (`tailLines`, `timestamps`, `sinceSeconds`/`sinceTime`, `limitBytes`, `follow`) and
//! its refusals (`container "x" in pod "y" is waiting to start: ContainerCreating`).

use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use chrono::{DateTime, SecondsFormat, Utc};
use hyper::Response;
use serde_json::{Value, json};

use crate::cluster::{Cluster, Target};
use crate::http::Query;
use crate::status::{ApiError, ApiResult, Cause};

/// The `PodLogOptions` a request carries.
#[derive(Debug, Default, Clone)]
pub struct LogOptions {
    pub container: String,
    pub previous: bool,
    pub follow: bool,
    pub timestamps: bool,
    pub tail_lines: Option<i64>,
    pub limit_bytes: Option<i64>,
    pub since: Option<DateTime<Utc>>,
}

impl LogOptions {
    /// Reads and validates the query as the API server does (`PodLogOptions "web" is
    /// invalid: tailLines: Invalid value: -1: must be greater than or equal to 0`).
    pub fn parse(q: &Query, pod: &str) -> ApiResult<LogOptions> {
        let int = |key: &str| -> ApiResult<Option<i64>> {
            match q.get(key) {
                None | Some("") => Ok(None),
                Some(v) => v.parse().map(Some).map_err(|_| {
                    ApiError::bad_request(format!(
                        "strconv.ParseInt: parsing {v:?}: invalid syntax"
                    ))
                }),
            }
        };
        let tail_lines = int("tailLines")?;
        let limit_bytes = int("limitBytes")?;
        let since_seconds = int("sinceSeconds")?;
        let since_time = match q.get("sinceTime") {
            None | Some("") => None,
            Some(v) => Some(
                DateTime::parse_from_rfc3339(v)
                    .map_err(|_| {
                        ApiError::bad_request(format!(
                            "parsing time {v:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse"
                        ))
                    })?
                    .with_timezone(&Utc),
            ),
        };
        let mut causes = Vec::new();
        if let Some(n) = tail_lines.filter(|n| *n < 0) {
            causes.push(Cause::invalid(
                "tailLines",
                &json!(n),
                "must be greater than or equal to 0",
            ));
        }
        if let Some(n) = limit_bytes.filter(|n| *n < 1) {
            causes.push(Cause::invalid(
                "limitBytes",
                &json!(n),
                "must be greater than 0",
            ));
        }
        match (since_seconds, since_time) {
            (Some(_), Some(_)) => causes.push(Cause::forbidden(
                "",
                "at most one of `sinceTime` or `sinceSeconds` may be specified",
            )),
            (Some(n), None) if n < 1 => causes.push(Cause::invalid(
                "sinceSeconds",
                &json!(n),
                "must be greater than 0",
            )),
            _ => {}
        }
        if !causes.is_empty() {
            return Err(ApiError::invalid("PodLogOptions", "", pod, causes));
        }
        let since =
            since_time.or_else(|| since_seconds.map(|s| Utc::now() - chrono::Duration::seconds(s)));
        Ok(LogOptions {
            container: q.get("container").unwrap_or("").to_string(),
            previous: q.flag("previous"),
            follow: q.flag("follow"),
            timestamps: q.flag("timestamps"),
            tail_lines,
            limit_bytes,
            since,
        })
    }
}

pub async fn log_response(
    cluster: &Arc<Cluster>,
    t: &Target,
    q: &Query,
) -> ApiResult<Response<Body>> {
    let pod_target = Target {
        subresource: String::new(),
        ..t.clone()
    };
    let pod = cluster.get(&pod_target)?;
    let opts = LogOptions::parse(q, &t.name)?;
    let container = choose_container(&pod, &opts.container)?;
    let respond = |body: Body| {
        Response::builder()
            .status(200)
            .header("content-type", "text/plain")
            .body(body)
            .expect("a valid response")
    };
    // The API server streams nothing for a pod no kubelet has yet.
    if pod["spec"]["nodeName"].as_str().unwrap_or("").is_empty() {
        return Ok(respond(Body::empty()));
    }
    let instance = instance_for(&pod, &container, opts.previous)?;
    let lines = instance.lines(&container);
    let text = render(&lines, &opts);
    let follow = opts.follow && !opts.previous && instance.finished.is_none();
    if !follow {
        return Ok(respond(Body::from(text)));
    }
    // Stream on until this start of the container ends (or the pod goes away).
    let mut budget = opts.limit_bytes.map(|l| l.max(0) as usize);
    if let Some(b) = &mut budget {
        *b = b.saturating_sub(text.len());
    }
    let state = Follow {
        cluster: Arc::clone(cluster),
        changes: cluster.store.subscribe(),
        key: pod_target.key(),
        target: pod_target,
        container,
        start: instance.start,
        opts,
        first: Some(text),
        budget,
        done: false,
    };
    let stream = futures::stream::unfold(state, |mut s| async move {
        let chunk = s.next_chunk().await?;
        Some((Ok::<Bytes, std::io::Error>(chunk), s))
    });
    Ok(respond(Body::from_stream(stream)))
}

/// The container a request names, or the only one; the API server's errors otherwise.
fn choose_container(pod: &Value, asked: &str) -> ApiResult<String> {
    let name = pod["metadata"]["name"].as_str().unwrap_or("");
    let all: Vec<String> = ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|l| pod["spec"][*l].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["name"].as_str().map(String::from))
        .collect();
    if !asked.is_empty() {
        if !all.iter().any(|n| n == asked) {
            return Err(ApiError::bad_request(format!(
                "container {asked} is not valid for pod {name}"
            )));
        }
        return Ok(asked.to_string());
    }
    let regular: Vec<&str> = pod["spec"]["containers"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    match regular.as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}"
        ))),
        _ => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}, choose one of: [{}]",
            all.join(" ")
        ))),
    }
}

/// One start of a container: when it started and, if it has, when and how it ended.
#[derive(Debug, Clone, PartialEq)]
struct Instance {
    image: String,
    /// Which start this is (1 for the first).
    start: i64,
    started: Option<DateTime<Utc>>,
    finished: Option<(Option<DateTime<Utc>>, i64)>,
}

impl Instance {
    fn lines(&self, container: &str) -> Vec<(Option<DateTime<Utc>>, String)> {
        let mut out = vec![(
            self.started,
            format!(
                "chartkit sandbox: container {container} started (image {}, start {})",
                self.image, self.start
            ),
        )];
        if let Some((at, code)) = self.finished {
            out.push((
                at,
                format!("chartkit sandbox: container {container} exited with code {code}"),
            ));
        }
        out
    }
}

fn status_of<'a>(pod: &'a Value, container: &str) -> Option<&'a Value> {
    [
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
    ]
    .iter()
    .filter_map(|l| pod["status"][*l].as_array())
    .flatten()
    .find(|s| s["name"] == container)
}

fn time(v: &Value) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(v.as_str()?)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The start whose log is asked for, or the kubelet's reason there is none.
fn instance_for(pod: &Value, container: &str, previous: bool) -> ApiResult<Instance> {
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or("");
    let refuse = |why: &str| {
        Err(ApiError::bad_request(format!(
            "container \"{container}\" in pod \"{pod_name}\" {why}"
        )))
    };
    let Some(status) = status_of(pod, container) else {
        // A pod the kubelet has not reported on yet is still being set up.
        let reported = ["containerStatuses", "initContainerStatuses"]
            .iter()
            .any(|l| pod["status"][*l].is_array());
        return if reported {
            refuse("is not available")
        } else {
            refuse("is waiting to start: ContainerCreating")
        };
    };
    let image = status["image"].as_str().unwrap_or("").to_string();
    let restarts = status["restartCount"].as_i64().unwrap_or(0);
    let state = &status["state"];
    let last = &status["lastState"]["terminated"];
    let ended = |t: &Value| (time(&t["finishedAt"]), t["exitCode"].as_i64().unwrap_or(0));
    let previous_instance = || Instance {
        image: image.clone(),
        start: restarts.max(1),
        started: time(&last["startedAt"]),
        finished: Some(ended(last)),
    };
    if previous {
        if !last.is_object() {
            return Err(ApiError::bad_request(format!(
                "previous terminated container \"{container}\" in pod \"{pod_name}\" not found"
            )));
        }
        return Ok(previous_instance());
    }
    if let Some(running) = state["running"].as_object() {
        return Ok(Instance {
            image,
            start: restarts + 1,
            started: running.get("startedAt").and_then(time),
            finished: None,
        });
    }
    if state["terminated"].is_object() {
        let t = &state["terminated"];
        return Ok(Instance {
            image: image.clone(),
            start: restarts + 1,
            started: time(&t["startedAt"]),
            finished: Some(ended(t)),
        });
    }
    if last.is_object() {
        return Ok(previous_instance());
    }
    match state["waiting"]["reason"].as_str() {
        Some("ErrImagePull") => refuse("is waiting to start: image can't be pulled"),
        Some("ImagePullBackOff") => refuse("is waiting to start: trying and failing to pull image"),
        Some(reason) => refuse(&format!("is waiting to start: {reason}")),
        None => refuse("is waiting to start - no logs yet"),
    }
}

/// Lines after `since`, the last `tailLines`, stamped if asked, cut at `limitBytes`.
fn render(lines: &[(Option<DateTime<Utc>>, String)], opts: &LogOptions) -> String {
    let kept: Vec<&(Option<DateTime<Utc>>, String)> = lines
        .iter()
        .filter(|(at, _)| match (opts.since, at) {
            (Some(since), Some(at)) => *at >= since,
            _ => true,
        })
        .collect();
    let skip = match opts.tail_lines {
        Some(n) => kept.len().saturating_sub(n.max(0) as usize),
        None => 0,
    };
    let mut out = String::new();
    for (at, line) in &kept[skip..] {
        out.push_str(&stamp(*at, line, opts.timestamps));
    }
    if let Some(limit) = opts.limit_bytes {
        let mut cut = (limit.max(0) as usize).min(out.len());
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

fn stamp(at: Option<DateTime<Utc>>, line: &str, timestamps: bool) -> String {
    if !timestamps {
        return format!("{line}\n");
    }
    let at = at.unwrap_or_else(Utc::now);
    format!(
        "{} {line}\n",
        at.to_rfc3339_opts(SecondsFormat::Nanos, true)
    )
}

/// A followed log: what was there, then the exit line when this start ends.
struct Follow {
    cluster: Arc<Cluster>,
    changes: tokio::sync::broadcast::Receiver<crate::store::Change>,
    key: crate::store::ObjectKey,
    target: Target,
    container: String,
    start: i64,
    opts: LogOptions,
    first: Option<String>,
    budget: Option<usize>,
    done: bool,
}

impl Follow {
    async fn next_chunk(&mut self) -> Option<Bytes> {
        if let Some(first) = self.first.take()
            && !first.is_empty()
        {
            return Some(Bytes::from(first));
        }
        if self.done || self.budget == Some(0) {
            return None;
        }
        loop {
            match self.changes.recv().await {
                Ok(change) if change.key == self.key => {}
                Ok(_) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return None,
            }
            let Ok(pod) = self.cluster.get(&self.target) else {
                return None;
            };
            if let Some(line) = self.exit_line(&pod) {
                self.done = true;
                let mut text = line;
                if let Some(b) = self.budget {
                    text.truncate(b.min(text.len()));
                }
                return (!text.is_empty()).then(|| Bytes::from(text));
            }
        }
    }

    /// The exit line, once the followed start of the container has ended.
    fn exit_line(&self, pod: &Value) -> Option<String> {
        let status = status_of(pod, &self.container)?;
        let restarts = status["restartCount"].as_i64().unwrap_or(0);
        let ended = if restarts + 1 == self.start {
            &status["state"]["terminated"]
        } else if restarts + 1 > self.start {
            // It restarted since: the followed start is now the last terminated one.
            &status["lastState"]["terminated"]
        } else {
            return None;
        };
        if !ended.is_object() {
            return None;
        }
        let code = ended["exitCode"].as_i64().unwrap_or(0);
        let line = format!(
            "chartkit sandbox: container {} exited with code {code}",
            self.container
        );
        Some(stamp(
            time(&ended["finishedAt"]),
            &line,
            self.opts.timestamps,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(statuses: Value) -> Value {
        json!({
            "metadata": {"name": "web"},
            "spec": {"nodeName": "n", "containers": [{"name": "app"}]},
            "status": {"containerStatuses": statuses},
        })
    }

    fn running(restarts: i64) -> Value {
        let mut s = json!({
            "name": "app", "image": "nginx", "restartCount": restarts,
            "state": {"running": {"startedAt": "2024-01-01T00:00:10Z"}},
        });
        if restarts > 0 {
            s["lastState"] = json!({"terminated": {"exitCode": 2, "startedAt": "2024-01-01T00:00:01Z", "finishedAt": "2024-01-01T00:00:05Z"}});
        }
        s
    }

    #[test]
    fn each_start_has_its_own_log() {
        let p = pod(json!([running(1)]));
        let now = instance_for(&p, "app", false).unwrap();
        assert_eq!(
            render(&now.lines("app"), &LogOptions::default()),
            "chartkit sandbox: container app started (image nginx, start 2)\n"
        );
        let before = instance_for(&p, "app", true).unwrap();
        assert_eq!(
            render(&before.lines("app"), &LogOptions::default()),
            "chartkit sandbox: container app started (image nginx, start 1)\nchartkit sandbox: container app exited with code 2\n"
        );
        let opts = LogOptions {
            timestamps: true,
            tail_lines: Some(1),
            ..LogOptions::default()
        };
        assert_eq!(
            render(&before.lines("app"), &opts),
            "2024-01-01T00:00:05.000000000Z chartkit sandbox: container app exited with code 2\n"
        );
        let cut = LogOptions {
            limit_bytes: Some(9),
            ..LogOptions::default()
        };
        assert_eq!(render(&before.lines("app"), &cut), "chartkit ");
    }

    #[test]
    fn refusals_are_the_kubelets() {
        let p = pod(
            json!([{"name": "app", "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]),
        );
        assert_eq!(
            instance_for(&p, "app", false).unwrap_err().message,
            "container \"app\" in pod \"web\" is waiting to start: ContainerCreating"
        );
        assert_eq!(
            instance_for(&p, "app", true).unwrap_err().message,
            "previous terminated container \"app\" in pod \"web\" not found"
        );
        let unreported = json!({"metadata": {"name": "web"}, "spec": {"containers": [{"name": "app"}]}, "status": {}});
        assert_eq!(
            instance_for(&unreported, "app", false).unwrap_err().message,
            "container \"app\" in pod \"web\" is waiting to start: ContainerCreating"
        );
    }

    #[test]
    fn a_container_must_be_named_when_there_are_several() {
        let p = json!({"metadata": {"name": "web"}, "spec": {
            "initContainers": [{"name": "init"}],
            "containers": [{"name": "a"}, {"name": "b"}],
        }});
        let e = choose_container(&p, "").unwrap_err();
        assert_eq!(
            e.message,
            "a container name must be specified for pod web, choose one of: [init a b]"
        );
        assert_eq!(choose_container(&p, "init").unwrap(), "init");
        assert_eq!(
            choose_container(&p, "c").unwrap_err().message,
            "container c is not valid for pod web"
        );
    }

    #[test]
    fn options_are_validated_as_the_api_server_does() {
        let q = Query::parse(Some("tailLines=-1&limitBytes=0"));
        let e = LogOptions::parse(&q, "web").unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "PodLogOptions \"web\" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]"
        );
        let q = Query::parse(Some("sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z"));
        assert_eq!(LogOptions::parse(&q, "web").unwrap_err().code, 422);
        let q = Query::parse(Some("tailLines=x"));
        assert_eq!(LogOptions::parse(&q, "web").unwrap_err().code, 400);
    }
}
