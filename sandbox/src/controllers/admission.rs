//! What the API server does on create and update beyond the registry's rules and
//! needs other objects for: admission of pods (ServiceAccounts), allocation of
//! Service cluster IPs and node ports. Called by [`crate::cluster::Cluster`].

use serde_json::Value;

use crate::cluster::{Cluster, Target};
use crate::status::ApiResult;

/// Runs before a create is committed (outside the store's lock, so it may read).
pub fn on_create(cluster: &Cluster, t: &Target, object: &mut Value) -> ApiResult<()> {
    if t.def.custom.is_some() || !t.def.group.is_empty() {
        return Ok(());
    }
    match t.def.plural.as_str() {
        "pods" => super::serviceaccounts::admit_pod(cluster, t, object),
        "services" => super::services::allocate(cluster, object),
        _ => Ok(()),
    }
}

/// Runs inside an update (under the store's lock: it sees only the two objects):
/// values the API server allocated stay when the new object leaves them out.
pub fn on_update(t: &Target, current: &Value, new: &mut Value) {
    if t.def.custom.is_some() || !t.def.group.is_empty() || !t.subresource.is_empty() {
        return;
    }
    if t.def.plural == "services" {
        super::services::keep_allocated(current, new);
    }
}
