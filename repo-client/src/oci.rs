//! Charts in OCI registries (`oci://`), offline first: manifests and blobs live in the
//! content store by digest (the one packages from index repositories use) and are checked
//! on every read, so a digest reference never uses the network once cached; the tags of
//! a repository and the digests tags pointed at are remembered in `oci-v1/`, so `--offline`
//! can still resolve a tag or a range, and says how old what it used is.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chartkit_oci::tags::{Wanted, choose_tag, versions, wanted};
use chartkit_oci::{ChartManifest, Credentials, CredentialsFile, OciError, Reference, Registry};
use sha2::{Digest, Sha256};

use crate::cached_index::{age_of, human_age, now_secs};
use crate::client::Client;
use crate::error::{ClientError, Result};
use crate::locate::Access;
use crate::network::Network;
use crate::settings::RepoEntry;

/// The cache bucket of tag lists.
const TAGS_BUCKET: &str = "oci-v1";

/// A chart found in a registry.
#[derive(Debug, Clone)]
pub struct OciChart {
    /// The reference pulled, as helm prints it (`HOST/REPO:TAG`).
    pub reference: Reference,
    /// The manifest's digest.
    pub digest: String,
    pub name: String,
    pub version: String,
    pub package: Vec<u8>,
    pub prov: Option<Vec<u8>>,
    /// False when the content store held the package.
    pub downloaded: bool,
    /// The manifest's creation annotation (a mirror pushes the chart again with it, so
    /// the copy keeps helm's manifest digest).
    pub created: Option<String>,
    /// Things to tell the user (an offline answer's age).
    pub warnings: Vec<String>,
}

impl OciChart {
    /// `NAME-VERSION.tgz`, the file helm writes.
    pub fn file_name(&self) -> String {
        format!("{}-{}.tgz", self.name, self.version)
    }
}

/// Whether a pull takes the provenance layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    Skip,
    /// `pull --prov`: when the manifest has one.
    IfPresent,
    /// `--verify`: a manifest without one is an error.
    Required,
}

/// A chart pushed.
#[derive(Debug, Clone)]
pub struct OciPushed {
    /// `HOST/PATH/NAME:TAG`, as helm prints it.
    pub reference: Reference,
    /// The manifest's digest.
    pub digest: String,
}

/// What `oci-v1/HOST/REPO/tags.json` remembers of a repository.
#[derive(Debug, Default)]
struct TagCache {
    tags: Vec<String>,
    digests: BTreeMap<String, String>,
    /// When the registry last said where each tag points.
    digest_checked: BTreeMap<String, u64>,
    /// When the tag list was last read (0: never).
    checked: u64,
}

impl Client {
    /// A registry client for `host` with `access`'s TLS settings and credentials: the
    /// flags', else those stored by `registry login` in helm's registry config.
    pub fn registry(&self, host: &str, access: &Access) -> Result<Registry> {
        let Network::Online(http) = &self.network else {
            return Err(ClientError::Offline {
                missing: format!("the registry {host}"),
                fetch: String::new(),
            });
        };
        let entry = RepoEntry {
            ca_file: path_text(&access.ca_file),
            cert_file: path_text(&access.cert_file),
            key_file: path_text(&access.key_file),
            insecure_skip_tls_verify: access.insecure_skip_tls_verify,
            ..RepoEntry::for_url(&format!("https://{host}"))
        };
        let client = http.client_for_entry(&entry, &format!("oci://{host}"))?;
        let credentials = match (&access.username, &access.password) {
            (Some(username), password) => Some(Credentials {
                username: username.clone(),
                password: password.clone().unwrap_or_default(),
            }),
            (None, _) => self.stored_credentials(host)?,
        };
        Ok(Registry::new(client, host, access.plain_http, credentials))
    }

    /// `registry login`: checks `credentials` against the registry (`GET /v2/`, through
    /// its token service if it has one), then stores them in helm's registry config.
    pub fn registry_login(
        &self,
        host: &str,
        credentials: Credentials,
        access: &Access,
    ) -> Result<()> {
        let access = Access {
            username: Some(credentials.username.clone()),
            password: Some(credentials.password.clone()),
            ..access.clone()
        };
        self.registry(host, &access)?.ping()?;
        let mut file = CredentialsFile::load(&self.registry_config()?)?;
        file.store(host, &credentials)?;
        Ok(())
    }

    /// `registry logout`: forgets `host`'s credentials; false when none were stored.
    pub fn registry_logout(&self, host: &str) -> Result<bool> {
        let mut file = CredentialsFile::load(&self.registry_config()?)?;
        Ok(file.remove(host)?)
    }

    fn registry_config(&self) -> Result<PathBuf> {
        self.paths.registry_config.clone().ok_or_else(|| {
            ClientError::BadReference(
                "helm's registry config cannot be located: set HELM_REGISTRY_CONFIG or --registry-config".into(),
            )
        })
    }

    /// What `registry login` stored for `host`.
    pub fn stored_credentials(&self, host: &str) -> Result<Option<Credentials>> {
        match &self.paths.registry_config {
            Some(path) => Ok(CredentialsFile::load(path)?.get(host)?),
            None => Ok(None),
        }
    }

    /// `helm push PACKAGE oci://HOST/PATH`: the package (already loaded as `chart`, with
    /// its `.prov` when one lies beside it) under `PATH/NAME:VERSION` with Helm's
    /// manifest, its blobs uploaded first (those the registry has are skipped).
    /// `created` is the creation annotation (helm: the package file's modification time).
    pub fn push_oci(
        &self,
        chart: &chartkit_chart::Chart,
        package: Vec<u8>,
        prov: Option<Vec<u8>>,
        destination: &str,
        created: &str,
        access: &Access,
    ) -> Result<OciPushed> {
        let metadata = &chart.metadata;
        let base = destination.trim_end_matches('/');
        let reference =
            Reference::parse(&format!("{base}/{}:{}", metadata.name, metadata.version))?;
        let artifact = chartkit_oci::HelmArtifact::new(metadata, package, prov, created);
        let registry = self.registry(&reference.registry, access)?;
        // The config and the chart (and the `.prov`) go up at once: the manifest only
        // needs them all there.
        std::thread::scope(|scope| {
            let uploads: Vec<_> = (artifact.blobs.iter())
                .map(|(descriptor, bytes)| {
                    let (registry, repository) = (&registry, &reference.repository);
                    scope.spawn(move || registry.push_blob(repository, &descriptor.digest, bytes))
                })
                .collect();
            uploads.into_iter().try_for_each(|upload| {
                upload
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            })
        })?;
        let tag = reference.tag.clone().unwrap_or_default();
        let digest = registry.push_manifest(&reference.repository, &tag, &artifact.manifest)?;
        // What was pushed can be pulled by digest without the network.
        self.store_blob(&digest, &artifact.manifest)?;
        for (descriptor, bytes) in &artifact.blobs {
            self.store_blob(&descriptor.digest, bytes)?;
        }
        Ok(OciPushed { reference, digest })
    }

    /// The chart `reference` with `--version`/`--devel` names, from the content store
    /// when its manifest digest is known and cached, else from the registry; the `.prov`
    /// layer too as `provenance` says.
    pub fn fetch_oci(
        &self,
        reference: &Reference,
        version: Option<&str>,
        devel: bool,
        access: &Access,
        provenance: Provenance,
    ) -> Result<OciChart> {
        let mut warnings = Vec::new();
        let lazy = LazyRegistry {
            client: self,
            host: &reference.registry,
            access,
            registry: std::sync::OnceLock::new(),
        };
        let connect = || lazy.get();
        let mut cache = self.read_tags(reference);
        let (chosen, digest) = match wanted(reference, version, devel)? {
            Wanted::Exact(exact) => match &exact.digest {
                Some(digest) => {
                    // A tag beside the digest is checked (online) as helm checks it; a
                    // digest alone needs no network once cached.
                    if let Some(tag) = &exact.tag
                        && !self.network.is_offline()
                        && let Some(tagged) = connect()?
                            .manifest_digest(&exact.repository, tag)
                            .ok()
                            .flatten()
                        && tagged != *digest
                    {
                        return Err(ClientError::BadReference(format!(
                            "chart reference digest mismatch: {tagged} is not {digest}"
                        )));
                    }
                    (exact.clone(), digest.clone())
                }
                None => {
                    let tag = exact.tag.clone().unwrap_or_default();
                    if self.network.is_offline() {
                        let digest = cache
                            .digests
                            .get(&tag)
                            .cloned()
                            .ok_or_else(|| unseen_tag(&exact, &cache))?;
                        let checked = cache.digest_checked.get(&tag).copied();
                        warnings.push(offline_age(&exact, checked.unwrap_or(cache.checked)));
                        (exact, digest)
                    } else {
                        let fetched = connect()?.manifest(&exact.repository, &tag)?;
                        self.store_manifest(&fetched.digest, &fetched.bytes)?;
                        cache.digest_checked.insert(tag.clone(), now_secs());
                        cache.digests.insert(tag, fetched.digest.clone());
                        self.write_tags(reference, &cache)?;
                        (exact, fetched.digest)
                    }
                }
            },
            Wanted::FromTags(constraint) => {
                let list = self.tag_list(reference, &mut cache, &lazy, &mut warnings)?;
                let version = choose_tag(&versions(&list), &constraint, &reference.locator())?;
                let exact = reference.with_tag(&version);
                let tag = exact.tag.clone().unwrap_or_default();
                let digest = if self.network.is_offline() {
                    cache
                        .digests
                        .get(&tag)
                        .cloned()
                        .ok_or_else(|| unseen_tag(&exact, &cache))?
                } else {
                    let fetched = connect()?.manifest(&exact.repository, &tag)?;
                    self.store_manifest(&fetched.digest, &fetched.bytes)?;
                    cache.digest_checked.insert(tag.clone(), now_secs());
                    cache.digests.insert(tag, fetched.digest.clone());
                    fetched.digest
                };
                self.write_tags(reference, &cache)?;
                (exact, digest)
            }
        };
        let shown = chosen.to_string();
        let manifest_bytes = self.blob(&digest, &chosen, "the manifest", &lazy, true)?;
        let manifest = ChartManifest::parse(&manifest_bytes, &shown)?;
        let downloaded = self.cached_blob(&manifest.chart.digest).is_none();
        let config_of = || {
            self.blob(
                &manifest.config.digest,
                &chosen,
                "the chart's config",
                &lazy,
                false,
            )
        };
        let package_of = || self.blob(&manifest.chart.digest, &chosen, "the chart", &lazy, false);
        // helm names what it pulls after the reference (`NAME-TAG.tgz`), so with a
        // version tag the config blob is not needed: a blob request fewer, the costliest
        // kind for a registry. A digest alone, or a tag that is not a version, needs the
        // config's name and version.
        let tagged =
            (chosen.version()).filter(|v| chartkit_version::Version::parse_strict(v).is_ok());
        let (name, version, package) = match tagged {
            Some(version) => (chosen.name().to_owned(), version, package_of()?),
            None => {
                // Two downloads at once when both are needed: one round trip, not two.
                let (config, package) = match downloaded && !self.network.is_offline() {
                    true => std::thread::scope(|scope| {
                        let package = scope.spawn(package_of);
                        let config = config_of();
                        let package = package
                            .join()
                            .unwrap_or_else(|p| std::panic::resume_unwind(p));
                        (config, package)
                    }),
                    false => (config_of(), package_of()),
                };
                let (name, version) = chart_identity(&config?, &chosen);
                (name, version, package?)
            }
        };
        let prov = match (&manifest.prov, provenance) {
            (_, Provenance::Skip) => None,
            (Some(prov), _) => {
                Some(self.blob(&prov.digest, &chosen, "the provenance file", &lazy, false)?)
            }
            (None, Provenance::IfPresent) => None,
            (None, Provenance::Required) => {
                return Err(ClientError::Registry(OciError::NotAChart {
                    reference: shown,
                    reason: "manifest does not contain a layer with mediatype application/vnd.cncf.helm.chart.provenance.v1.prov".into(),
                }));
            }
        };
        let reference = match chosen.tag.is_some() {
            true => Reference {
                digest: None,
                ..chosen
            },
            false => chosen,
        };
        Ok(OciChart {
            reference,
            digest,
            name,
            version,
            package,
            prov,
            downloaded,
            created: manifest
                .annotations
                .get("org.opencontainers.image.created")
                .cloned(),
            warnings,
        })
    }

    /// The versions `reference`'s tags name, newest first (helm's `Tags`), with what the
    /// user should know (offline: how old the list is).
    pub fn oci_versions(
        &self,
        reference: &Reference,
        access: &Access,
    ) -> Result<(Vec<String>, Vec<String>)> {
        let lazy = LazyRegistry {
            client: self,
            host: &reference.registry,
            access,
            registry: std::sync::OnceLock::new(),
        };
        let mut cache = self.read_tags(reference);
        let mut warnings = Vec::new();
        let list = self.tag_list(reference, &mut cache, &lazy, &mut warnings)?;
        if !self.network.is_offline() {
            self.write_tags(reference, &cache)?;
        }
        Ok((versions(&list), warnings))
    }

    /// The repository's tags: asked for online (and remembered in `cache`), else the
    /// last list seen, with a warning saying how old it is.
    fn tag_list(
        &self,
        reference: &Reference,
        cache: &mut TagCache,
        lazy: &LazyRegistry<'_>,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<String>> {
        if self.network.is_offline() {
            if cache.checked == 0 {
                return Err(ClientError::Offline {
                    missing: format!("the tag list of oci://{}", reference.locator()),
                    fetch: String::new(),
                });
            }
            warnings.push(offline_age(reference, cache.checked));
            return Ok(cache.tags.clone());
        }
        let tags = lazy.get()?.tags(&reference.repository)?;
        cache.tags = tags.clone();
        cache.checked = now_secs();
        Ok(tags)
    }

    /// Blob `digest` from the content store, or fetched (`manifest`: through the
    /// manifests endpoint), checked and stored.
    fn blob(
        &self,
        digest: &str,
        reference: &Reference,
        what: &str,
        lazy: &LazyRegistry<'_>,
        manifest: bool,
    ) -> Result<Vec<u8>> {
        if let Some(bytes) = self.cached_blob(digest) {
            return Ok(bytes);
        }
        if self.network.is_offline() {
            return Err(ClientError::Offline {
                missing: format!("{what} of oci://{reference} ({digest})"),
                fetch: String::new(),
            });
        }
        let registry = lazy.get()?;
        let bytes = if manifest {
            registry.manifest(&reference.repository, digest)?.bytes
        } else {
            registry.blob(&reference.repository, digest, what)?
        };
        self.store_blob(digest, &bytes)?;
        Ok(bytes)
    }

    /// The stored blob `digest` (`sha256:<hex>`) if it still has that digest.
    pub fn cached_blob(&self, digest: &str) -> Option<Vec<u8>> {
        let hex = digest.strip_prefix("sha256:")?;
        let bytes = std::fs::read(self.blob_path(hex)).ok()?;
        (hex::encode(Sha256::digest(&bytes)) == hex).then_some(bytes)
    }

    /// A manifest read by tag, stored unless the store has it already (a warm pull by
    /// tag or range reads the same manifest again, and a durable write is an fsync).
    fn store_manifest(&self, digest: &str, bytes: &[u8]) -> Result<()> {
        match self.cached_blob(digest) {
            Some(_) => Ok(()),
            None => self.store_blob(digest, bytes),
        }
    }

    fn store_blob(&self, digest: &str, bytes: &[u8]) -> Result<()> {
        let Some(hex) = digest.strip_prefix("sha256:") else {
            return Ok(());
        };
        let path = self.blob_path(hex);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(ClientError::io(dir))?;
        }
        // A cache write, unsynced: every read checks the digest, so a blob a crash
        // left torn is fetched again.
        chartkit_durable::write_cache(&path, bytes)?;
        Ok(())
    }

    fn tags_path(&self, reference: &Reference) -> PathBuf {
        self.paths
            .cache_home
            .join(TAGS_BUCKET)
            .join(reference.registry.replace(':', "_"))
            .join(&reference.repository)
            .join("tags.json")
    }

    fn read_tags(&self, reference: &Reference) -> TagCache {
        let Ok(bytes) = std::fs::read(self.tags_path(reference)) else {
            return TagCache::default();
        };
        let Ok(json) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            return TagCache::default();
        };
        let strings = |v: Option<&serde_json::Value>| -> Vec<String> {
            v.and_then(|v| v.as_array())
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        };
        TagCache {
            tags: strings(json.get("tags")),
            digests: json
                .get("digests")
                .and_then(|d| d.as_object())
                .map(|d| {
                    d.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                        .collect()
                })
                .unwrap_or_default(),
            digest_checked: json
                .get("digest_checked")
                .and_then(|d| d.as_object())
                .map(|d| {
                    d.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
                        .collect()
                })
                .unwrap_or_default(),
            checked: json.get("checked").and_then(|c| c.as_u64()).unwrap_or(0),
        }
    }

    fn write_tags(&self, reference: &Reference, cache: &TagCache) -> Result<()> {
        let path = self.tags_path(reference);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(ClientError::io(dir))?;
        }
        let json = serde_json::json!({
            "tags": cache.tags,
            "digests": cache.digests,
            "digest_checked": cache.digest_checked,
            "checked": cache.checked,
        });
        // Unsynced: a list a crash left torn reads as no list, and is asked for again.
        chartkit_durable::write_cache(&path, json.to_string().as_bytes())?;
        Ok(())
    }
}

/// The registry client, made when first needed (a cached digest needs none).
struct LazyRegistry<'a> {
    client: &'a Client,
    host: &'a str,
    access: &'a Access,
    registry: std::sync::OnceLock<Registry>,
}

impl LazyRegistry<'_> {
    fn get(&self) -> Result<&Registry> {
        if let Some(registry) = self.registry.get() {
            return Ok(registry);
        }
        let registry = self.client.registry(self.host, self.access)?;
        Ok(self.registry.get_or_init(|| registry))
    }
}

fn offline_age(reference: &Reference, checked: u64) -> String {
    format!(
        "offline: oci://{} resolved from what the registry said {} ago",
        reference.locator(),
        human_age(age_of(checked))
    )
}

/// `--offline` and the tag's manifest was never seen: says which tags were, and when.
fn unseen_tag(exact: &Reference, cache: &TagCache) -> ClientError {
    let tag = exact.tag.as_deref().unwrap_or_default();
    let seen = match (cache.checked, cache.tags.is_empty()) {
        (0, _) => String::new(),
        (checked, true) => format!(
            " (the registry listed no tags {} ago)",
            human_age(age_of(checked))
        ),
        (checked, false) => format!(
            " (the tags the registry listed {} ago: {})",
            human_age(age_of(checked)),
            cache.tags.join(", ")
        ),
    };
    ClientError::Offline {
        missing: format!("the tag {tag} of oci://{}{seen}", exact.locator()),
        fetch: String::new(),
    }
}

/// The chart's name and version from its config blob, else from the reference.
fn chart_identity(config: &[u8], reference: &Reference) -> (String, String) {
    let json: serde_json::Value = serde_json::from_slice(config).unwrap_or_default();
    let field = |name: &str| json.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    (
        field("name").unwrap_or_else(|| reference.name().to_owned()),
        field("version")
            .or_else(|| reference.version())
            .unwrap_or_default(),
    )
}

fn path_text(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Paths;

    fn offline_client(dir: &std::path::Path) -> Client {
        let paths = Paths {
            config_home: dir.join("config"),
            cache_home: dir.join("cache"),
            repositories: None,
            indexes: None,
            registry_config: None,
        };
        Client::new(paths, Network::Offline).unwrap()
    }

    fn fetch(client: &Client, reference: &str, version: Option<&str>) -> Result<OciChart> {
        client.fetch_oci(
            &Reference::parse(reference).unwrap(),
            version,
            false,
            &Access::default(),
            Provenance::Skip,
        )
    }

    #[test]
    fn offline_a_tag_seen_once_does_not_stand_for_the_tag_list() {
        let dir = tempfile::tempdir().unwrap();
        let client = offline_client(dir.path());
        let reference = Reference::parse("oci://r.example/charts/web").unwrap();
        let digest = format!("sha256:{}", "a".repeat(64));
        let mut cache = TagCache::default();
        cache.digests.insert("1.0.0".into(), digest.clone());
        cache.digest_checked.insert("1.0.0".into(), now_secs());
        client.write_tags(&reference, &cache).unwrap();

        let error = fetch(&client, "oci://r.example/charts/web", Some("^1")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the tag list of oci://r.example/charts/web is not in the cache and chartkit is offline"
        );
        // The tag's digest is known, its manifest is not stored: that is what is missing.
        let error = fetch(&client, "oci://r.example/charts/web:1.0.0", None).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "the manifest of oci://r.example/charts/web:1.0.0 ({digest}) is not in the cache and chartkit is offline"
            )
        );
        let error = fetch(&client, "oci://r.example/charts/web:2.0.0", None).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("the tag 2.0.0 of oci://r.example/charts/web is not in the cache"),
            "{error}"
        );
    }

    #[test]
    fn a_stored_blob_is_used_only_while_it_has_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let client = offline_client(dir.path());
        let digest = chartkit_oci::manifest::digest_of(b"manifest");
        client.store_blob(&digest, b"manifest").unwrap();
        assert_eq!(client.cached_blob(&digest).unwrap(), b"manifest");
        std::fs::write(client.blob_path(&digest["sha256:".len()..]), b"other").unwrap();
        assert_eq!(client.cached_blob(&digest), None);
    }
}
