//! Helm plugins kept in a registry, as helm 4's `plugin install oci://…` reads them: an
//! OCI image manifest whose `artifactType` (or, for older pushers, config media type) is
//! helm's plugin type, with a tar layer titled `NAME-VERSION.tgz` and optionally one
//! titled `NAME-VERSION.tgz.prov`, NAME being the repository's last path part. Helm has
//! no command that pushes plugins; publishers use `oras push --artifact-type …`, which
//! gives exactly this layout.

use serde::Deserialize;
use std::collections::BTreeMap;

use crate::error::OciError;
use crate::manifest::MANIFEST_MEDIA_TYPE;
use crate::reference::Reference;
use crate::registry::Registry;

/// The artifact type of a Helm plugin.
pub const PLUGIN_ARTIFACT_TYPE: &str = "application/vnd.helm.plugin.v1+json";

/// The layer media types helm copies from a plugin's manifest; layers of other types are
/// skipped by its pull, so a tarball under another type is as good as missing.
pub const PLUGIN_LAYER_MEDIA_TYPES: [&str; 2] = [
    "application/vnd.oci.image.layer.v1.tar",
    "application/vnd.oci.image.layer.v1.tar+gzip",
];

const TITLE: &str = "org.opencontainers.image.title";

/// A plugin pulled from a registry.
#[derive(Debug, Clone)]
pub struct PluginArtifact {
    /// What was pulled, as helm prints it (`HOST/REPO:TAG`).
    pub reference: Reference,
    /// The manifest's digest.
    pub digest: String,
    /// The tarball layer's title (`NAME-VERSION.tgz`).
    pub file_name: String,
    pub tarball: Vec<u8>,
    /// The provenance layer's title and bytes, when the manifest has one.
    pub prov: Option<(String, Vec<u8>)>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawManifest {
    #[serde(default)]
    media_type: String,
    #[serde(default)]
    artifact_type: String,
    config: RawDescriptor,
    #[serde(default)]
    layers: Vec<RawDescriptor>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDescriptor {
    #[serde(default)]
    media_type: String,
    digest: String,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

/// The plugin name helm expects in a reference: the repository path's last part.
pub fn plugin_name(reference: &Reference) -> &str {
    reference.name()
}

/// The layers of a plugin manifest helm would take: the tarball's and the provenance's
/// (index in `layers`, title). Pure, so the rules are tested without a registry.
fn choose_layers(
    manifest: &RawManifest,
    name: &str,
    shown: &str,
) -> Result<(usize, Option<usize>), OciError> {
    let not_a_plugin = |reason: String| OciError::NotAPlugin {
        reference: shown.to_owned(),
        reason,
    };
    if !manifest.media_type.is_empty() && manifest.media_type != MANIFEST_MEDIA_TYPE {
        return Err(not_a_plugin(format!(
            "its manifest is {}, not an OCI image manifest",
            manifest.media_type
        )));
    }
    if !manifest.artifact_type.is_empty() && manifest.artifact_type != PLUGIN_ARTIFACT_TYPE {
        return Err(not_a_plugin(format!(
            "expected artifact type {PLUGIN_ARTIFACT_TYPE}, got {}",
            manifest.artifact_type
        )));
    }
    if manifest.artifact_type.is_empty() && manifest.config.media_type != PLUGIN_ARTIFACT_TYPE {
        return Err(not_a_plugin(format!(
            "expected config media type {PLUGIN_ARTIFACT_TYPE} for legacy compatibility, got {}",
            manifest.config.media_type
        )));
    }
    let prefix = format!("{name}-");
    let titled = |suffix: &str| {
        manifest.layers.iter().position(|layer| {
            PLUGIN_LAYER_MEDIA_TYPES.contains(&layer.media_type.as_str())
                && layer
                    .annotations
                    .get(TITLE)
                    .is_some_and(|t| t.starts_with(&prefix) && t.ends_with(suffix))
        })
    };
    let tarball = titled(".tgz").ok_or_else(|| {
        not_a_plugin(format!(
            "required layer matching pattern {name}-VERSION.tgz not found in manifest"
        ))
    })?;
    Ok((tarball, titled(".tgz.prov")))
}

/// Pulls the plugin `reference` names (a tag or a digest is needed: helm does not pick a
/// version for plugins) from `registry`, its provenance layer included when it has one.
pub fn pull_plugin(registry: &Registry, reference: &Reference) -> Result<PluginArtifact, OciError> {
    let shown = reference.to_string();
    let Some(wanted) = reference.digest.clone().or_else(|| reference.tag.clone()) else {
        return Err(OciError::BadReference {
            reference: format!("oci://{shown}"),
            reason: "a plugin reference needs a tag or a digest (`:VERSION` or `@sha256:…`)".into(),
        });
    };
    let fetched = registry.manifest(&reference.repository, &wanted)?;
    let manifest: RawManifest =
        serde_json::from_slice(&fetched.bytes).map_err(|e| OciError::NotAPlugin {
            reference: shown.clone(),
            reason: format!("its manifest is not readable JSON: {e}"),
        })?;
    let name = plugin_name(reference);
    let (tarball_at, prov_at) = choose_layers(&manifest, name, &shown)?;
    let layer = &manifest.layers[tarball_at];
    let file_name = layer.annotations[TITLE].clone();
    let tarball = registry.blob(&reference.repository, &layer.digest, "plugin tarball")?;
    let prov = match prov_at {
        Some(at) => {
            let layer = &manifest.layers[at];
            let bytes = registry.blob(&reference.repository, &layer.digest, "plugin provenance")?;
            Some((layer.annotations[TITLE].clone(), bytes))
        }
        None => None,
    };
    Ok(PluginArtifact {
        reference: reference.clone(),
        digest: fetched.digest,
        file_name,
        tarball,
        prov,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(json: &str) -> RawManifest {
        serde_json::from_str(json).unwrap()
    }

    const LAYERS: &str = r#""layers":[
        {"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:p","size":1,"annotations":{"org.opencontainers.image.title":"greet-1.0.0.tgz.prov"}},
        {"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:t","size":1,"annotations":{"org.opencontainers.image.title":"greet-1.0.0.tgz"}}]"#;

    #[test]
    fn takes_the_titled_layers_of_a_plugin_artifact() {
        let m = manifest(&format!(
            r#"{{"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.helm.plugin.v1+json","config":{{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:e"}},{LAYERS}}}"#
        ));
        assert_eq!(choose_layers(&m, "greet", "r").unwrap(), (1, Some(0)));
        let error = choose_layers(&m, "other", "r").unwrap_err().to_string();
        assert!(error.contains("other-VERSION.tgz not found"), "{error}");
    }

    #[test]
    fn a_config_of_the_plugin_type_stands_for_the_artifact_type() {
        let legacy = manifest(&format!(
            r#"{{"config":{{"mediaType":"application/vnd.helm.plugin.v1+json","digest":"sha256:e"}},{LAYERS}}}"#
        ));
        assert!(choose_layers(&legacy, "greet", "r").is_ok());
        let chart = manifest(&format!(
            r#"{{"config":{{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"sha256:e"}},{LAYERS}}}"#
        ));
        let error = choose_layers(&chart, "greet", "r").unwrap_err().to_string();
        assert!(
            error.contains("application/vnd.cncf.helm.config.v1+json"),
            "{error}"
        );
    }
}
