//! The objects Helm's storage drivers keep records in, and the record ↔ object mapping:
//! a Secret (type `helm.sh/release.v1`) or a ConfigMap named
//! `sh.helm.release.v1.NAME.vREVISION`, the encoded record under `release`, labelled with
//! the release's labels plus `name`, `owner=helm`, `status`, `version` and `createdAt` or
//! `modifiedAt` (Unix seconds).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::codec::{self, CodecError};
use crate::model::Release;

/// The prefix of every record's object name.
pub const STORAGE_TYPE: &str = "sh.helm.release.v1";
/// The Secret type of a record.
pub const SECRET_TYPE: &str = "helm.sh/release.v1";
/// The labels Helm sets itself; `get` hides them from a record's labels.
pub const SYSTEM_LABELS: [&str; 6] = [
    "name",
    "owner",
    "status",
    "version",
    "createdAt",
    "modifiedAt",
];

/// Which kind of object holds records (`HELM_DRIVER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Driver {
    #[default]
    Secret,
    ConfigMap,
}

/// A `HELM_DRIVER` value chartkit does not store releases with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriverError {
    #[error("unknown driver {0:?}")]
    Unknown(String),
    #[error(
        "the {0:?} storage driver is not supported by chartkit; set HELM_DRIVER to \"secret\" (the default) or \"configmap\""
    )]
    Unsupported(String),
}

impl Driver {
    /// The driver `HELM_DRIVER` names, with Helm's spellings.
    pub fn from_name(name: &str) -> Result<Driver, DriverError> {
        match name {
            "secret" | "secrets" | "" => Ok(Driver::Secret),
            "configmap" | "configmaps" => Ok(Driver::ConfigMap),
            "memory" | "sql" => Err(DriverError::Unsupported(name.to_owned())),
            other => Err(DriverError::Unknown(other.to_owned())),
        }
    }

    /// Helm's name for the driver (`Secret`, `ConfigMap`).
    pub fn name(self) -> &'static str {
        match self {
            Driver::Secret => "Secret",
            Driver::ConfigMap => "ConfigMap",
        }
    }
}

/// The object name of a revision: `sh.helm.release.v1.NAME.vREVISION`.
pub fn key(name: &str, version: i64) -> String {
    format!("{STORAGE_TYPE}.{name}.v{version}")
}

/// Which time label a write adds: `createdAt` on create, `modifiedAt` on update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    Created(i64),
    Modified(i64),
}

/// The labels of a record's object, as Helm computes them: the release's own labels, the
/// write's time label, then the system labels over both.
pub fn object_labels(release: &Release, stamp: Stamp) -> BTreeMap<String, String> {
    let mut labels = release.labels.clone();
    match stamp {
        Stamp::Created(t) => labels.insert("createdAt".into(), t.to_string()),
        Stamp::Modified(t) => labels.insert("modifiedAt".into(), t.to_string()),
    };
    labels.insert("name".into(), release.name.clone());
    labels.insert("owner".into(), "helm".into());
    labels.insert("status".into(), release.status().as_str().to_owned());
    labels.insert("version".into(), release.version.to_string());
    labels
}

/// The Secret that stores `release`.
pub fn to_secret(release: &Release, stamp: Stamp) -> Secret {
    let data = codec::encode(release);
    Secret {
        metadata: ObjectMeta {
            name: Some(key(&release.name, release.version)),
            labels: Some(object_labels(release, stamp)),
            ..ObjectMeta::default()
        },
        type_: Some(SECRET_TYPE.to_owned()),
        data: Some(BTreeMap::from([(
            "release".to_owned(),
            ByteString(data.into_bytes()),
        )])),
        ..Secret::default()
    }
}

/// The ConfigMap that stores `release`.
pub fn to_config_map(release: &Release, stamp: Stamp) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(key(&release.name, release.version)),
            labels: Some(object_labels(release, stamp)),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "release".to_owned(),
            codec::encode(release),
        )])),
        ..ConfigMap::default()
    }
}

/// How a record's labels come back: a single `get` hides the system labels, a list or
/// query keeps all of them (as Helm's drivers do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Labels {
    WithoutSystem,
    All,
}

/// An object whose record cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("failed to decode data {key:?}: {source}")]
pub struct ObjectError {
    pub key: String,
    #[source]
    pub source: CodecError,
}

fn with_labels(
    mut release: Release,
    labels: Option<&BTreeMap<String, String>>,
    which: Labels,
) -> Release {
    let labels = labels.cloned().unwrap_or_default();
    release.labels = match which {
        Labels::All => labels,
        Labels::WithoutSystem => labels
            .into_iter()
            .filter(|(k, _)| !SYSTEM_LABELS.contains(&k.as_str()))
            .collect(),
    };
    release
}

/// The record in a Secret (a missing `release` entry reads as an empty string, which
/// fails as Helm's decoder fails it).
pub fn from_secret(secret: &Secret, which: Labels) -> Result<Release, ObjectError> {
    let data = secret
        .data
        .as_ref()
        .and_then(|d| d.get("release"))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .unwrap_or_default();
    let release = codec::decode(&data).map_err(|source| ObjectError {
        key: secret.metadata.name.clone().unwrap_or_default(),
        source,
    })?;
    Ok(with_labels(release, secret.metadata.labels.as_ref(), which))
}

/// The record in a ConfigMap.
pub fn from_config_map(map: &ConfigMap, which: Labels) -> Result<Release, ObjectError> {
    let data = map
        .data
        .as_ref()
        .and_then(|d| d.get("release"))
        .cloned()
        .unwrap_or_default();
    let release = codec::decode(&data).map_err(|source| ObjectError {
        key: map.metadata.name.clone().unwrap_or_default(),
        source,
    })?;
    Ok(with_labels(release, map.metadata.labels.as_ref(), which))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Info;
    use crate::status::Status;

    fn release() -> Release {
        Release {
            name: "web".into(),
            version: 4,
            namespace: "apps".into(),
            info: Some(Info {
                status: Status::Superseded,
                ..Info::default()
            }),
            labels: BTreeMap::from([("team".into(), "a".into()), ("status".into(), "x".into())]),
            ..Release::default()
        }
    }

    #[test]
    fn secret_shape() {
        let secret = to_secret(&release(), Stamp::Created(1700000000));
        assert_eq!(
            secret.metadata.name.as_deref(),
            Some("sh.helm.release.v1.web.v4")
        );
        assert_eq!(secret.type_.as_deref(), Some("helm.sh/release.v1"));
        let labels = secret.metadata.labels.clone().unwrap();
        let expected: BTreeMap<String, String> = [
            ("createdAt", "1700000000"),
            ("name", "web"),
            ("owner", "helm"),
            ("status", "superseded"),
            ("team", "a"),
            ("version", "4"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        assert_eq!(labels, expected);

        let back = from_secret(&secret, Labels::WithoutSystem).unwrap();
        assert_eq!(back.labels, BTreeMap::from([("team".into(), "a".into())]));
        assert_eq!(back.name, "web");
        let all = from_secret(&secret, Labels::All).unwrap();
        assert_eq!(all.labels, expected);
    }

    #[test]
    fn config_map_shape() {
        let map = to_config_map(&release(), Stamp::Modified(5));
        assert_eq!(
            map.metadata.name.as_deref(),
            Some("sh.helm.release.v1.web.v4")
        );
        assert_eq!(map.metadata.labels.as_ref().unwrap()["modifiedAt"], "5");
        let back = from_config_map(&map, Labels::WithoutSystem).unwrap();
        assert_eq!(back.version, 4);
        assert_eq!(back.status(), Status::Superseded);
    }

    #[test]
    fn broken_objects_name_their_key() {
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some("sh.helm.release.v1.x.v1".into()),
                ..ObjectMeta::default()
            },
            ..Secret::default()
        };
        let err = from_secret(&secret, Labels::All).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("failed to decode data \"sh.helm.release.v1.x.v1\"")
        );
    }

    #[test]
    fn driver_names() {
        assert_eq!(Driver::from_name("").unwrap(), Driver::Secret);
        assert_eq!(Driver::from_name("configmaps").unwrap(), Driver::ConfigMap);
        assert_eq!(
            Driver::from_name("etcd").unwrap_err().to_string(),
            "unknown driver \"etcd\""
        );
        assert!(matches!(
            Driver::from_name("sql"),
            Err(DriverError::Unsupported(_))
        ));
    }
}
