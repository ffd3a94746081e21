//! `pods/log`: no container runs, so a pod's log is what the simulated kubelet did with
//! it (one line per container start), enough for `kubectl logs` and `helm test --logs`.

use axum::body::Body;
use hyper::Response;
use serde_json::Value;

use crate::cluster::{Cluster, Target};
use crate::http::Query;
use crate::status::{ApiError, ApiResult};

pub async fn log_response(cluster: &Cluster, t: &Target, q: &Query) -> ApiResult<Response<Body>> {
    let pod_target = Target {
        subresource: String::new(),
        ..t.clone()
    };
    let pod = cluster.get(&pod_target)?;
    let containers: Vec<String> = pod["spec"]["containers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let container = match q.get("container") {
        Some(c) if !c.is_empty() => {
            let all_names: Vec<String> = ["initContainers", "containers"]
                .iter()
                .flat_map(|l| pod["spec"][*l].as_array().cloned().unwrap_or_default())
                .filter_map(|c| c["name"].as_str().map(String::from))
                .collect();
            if !all_names.iter().any(|n| n == c) {
                return Err(ApiError::bad_request(format!(
                    "container {c} is not valid for pod {}",
                    t.name
                )));
            }
            c.to_string()
        }
        _ if containers.len() == 1 => containers[0].clone(),
        _ => {
            return Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {}, choose one of: [{}]",
                t.name,
                containers.join(" ")
            )));
        }
    };
    let text = log_text(&pod, &container);
    Ok(Response::builder()
        .status(200)
        .header("content-type", "text/plain")
        .body(Body::from(text))
        .expect("a valid response"))
}

fn log_text(pod: &Value, container: &str) -> String {
    let statuses = ["initContainerStatuses", "containerStatuses"]
        .iter()
        .flat_map(|l| pod["status"][*l].as_array().cloned().unwrap_or_default())
        .find(|s| s["name"] == container);
    let Some(status) = statuses else {
        return String::new();
    };
    let image = status["image"].as_str().unwrap_or("");
    let mut out = String::new();
    let starts = status["restartCount"].as_i64().unwrap_or(0) + 1;
    if status["state"]["waiting"].is_object() && starts == 1 {
        return out;
    }
    for i in 0..starts {
        out.push_str(&format!(
            "chartkit sandbox: container {container} started (image {image}, start {})\n",
            i + 1
        ));
    }
    if let Some(code) = status["state"]["terminated"]["exitCode"].as_i64() {
        out.push_str(&format!(
            "chartkit sandbox: container {container} exited with code {code}\n"
        ));
    }
    out
}
