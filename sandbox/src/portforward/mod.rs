//! `pods/portforward` and `services/proxy`: connections to a local address a pod
//! declares with the `sandbox.chartkit.dev/forward` annotation.

use std::sync::Arc;

use axum::body::Body;
use hyper::{Request, Response};

use crate::cluster::{Cluster, Target};
use crate::status::{ApiError, ApiResult};

/// The annotation that tells the sandbox where a pod's ports really are:
/// `CONTAINERPORT=HOST:PORT[,...]`.
pub const FORWARD_ANNOTATION: &str = "sandbox.chartkit.dev/forward";

pub async fn handle(
    _cluster: Arc<Cluster>,
    _t: Target,
    _req: Request<Body>,
) -> ApiResult<Response<Body>> {
    Err(ApiError::bad_request(
        "port forwarding is not available yet",
    ))
}

pub async fn proxy(
    _cluster: Arc<Cluster>,
    _t: Target,
    _req: Request<Body>,
) -> ApiResult<Response<Body>> {
    Err(ApiError::bad_request("proxying is not available yet"))
}
