#![no_main]
//! Any bytes: read as a JSON object and a patch (two documents separated by a NUL byte),
//! then apply the patch as a strategic merge patch, a JSON merge patch and a JSON patch
//! to the object as a Deployment, and server-side apply it: none of these may panic or
//! hang, whatever the documents hold.

use chartkit_sandbox::resources::Registry;
use chartkit_sandbox::{fieldmanager, patch};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(2, |b| *b == 0);
    let (Some(a), Some(b)) = (parts.next(), parts.next()) else { return };
    let (Ok(doc), Ok(p)) = (serde_json::from_slice::<Value>(a), serde_json::from_slice::<Value>(b)) else {
        return;
    };
    let registry = Registry::with_builtins();
    for key in ["apps/deployments", "/pods", "/services"] {
        let def = registry.by_key(key).expect("built-in");
        let _ = patch::strategic_merge_patch(&def, &doc, &p);
        let _ = patch::merge_patch(&doc, &p);
        let _ = patch::json_patch(&doc, &p);
        let _ = fieldmanager::apply(&def, Some(&doc), &p, "fuzz", &def.api_version(&def.versions[0]), "", false);
        let mut new = p.clone();
        fieldmanager::record_update(&def, Some(&doc), &mut new, "fuzz", &def.api_version(&def.versions[0]), "");
    }
});
