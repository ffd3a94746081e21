//! [`Client`]: settings, network and cache together, and the operations built on them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chartkit_index::ChartVersion;
use chartkit_repo::{IndexCache, IndexDownload};
use sha2::{Digest, Sha256};

use crate::cached_index::{IndexFiles, IndexMeta, age_of, human_age, now_secs};
use crate::error::{ClientError, Result};
use crate::network::{Fetched, Http, Network, Opened, Progress};
use crate::reference::ChartRef;
use crate::settings::{Paths, RepoEntry, RepoFile};
use crate::tunnel::{TunnelUrl, is_tunnel_url};

/// The repository client of one process.
pub struct Client {
    pub paths: Paths,
    pub repos: RepoFile,
    pub network: Network,
    /// The largest index a download may bring ([`DEFAULT_MAX_INDEX_SIZE`] unless set).
    pub max_index_size: u64,
}

/// The largest index downloaded by default: well above the largest public index (tens
/// of megabytes), far below what would exhaust a machine's memory or disk.
pub const DEFAULT_MAX_INDEX_SIZE: u64 = 512 * 1024 * 1024;

/// What [`Client::update_index`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexUpdate {
    /// A new index was downloaded and stored (with its compact form).
    Downloaded { bytes: u64, warnings: Vec<String> },
    /// The server said the cached index is current (304); nothing was transferred.
    NotModified { warnings: Vec<String> },
}

impl IndexUpdate {
    /// What Helm logs reading the index it downloads (Helm always downloads it whole):
    /// a warning for each entry it skips, naming the repository's URL.
    pub fn warnings(&self) -> &[String] {
        match self {
            IndexUpdate::Downloaded { warnings, .. } | IndexUpdate::NotModified { warnings } => {
                warnings
            }
        }
    }
}

/// When [`Client::load_index`] asks the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refresh {
    /// Never: the cached index or an error (Helm's behaviour for configured
    /// repositories: `helm repo update` is what downloads).
    Never,
    /// Only when nothing is cached yet.
    IfMissing,
    /// Always ask (conditionally); on a network failure fall back to the cache with a
    /// warning saying how old it is (what `--repo URL` and dependencies use).
    Always,
}

/// A repository's index, ready for queries.
pub struct RepoIndex {
    pub entry: RepoEntry,
    /// The compact index (chart names in memory, entries read on demand).
    pub index: IndexCache,
    /// How long ago the server last confirmed this index.
    pub age: Duration,
    /// Things the user should know: a fallback to the cache, skipped entries.
    pub warnings: Vec<String>,
}

/// A chart version chosen from an index (or a package URL given directly).
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Chart name and version; empty for a package URL given directly.
    pub name: String,
    pub version: String,
    /// Absolute download URLs, the first one used.
    pub urls: Vec<String>,
    /// The sha256 the index gives for the package (lower-case hex), if any.
    pub digest: Option<String>,
    /// The repository URL the chart was found in (empty for a direct URL).
    pub repo_url: String,
    /// The repository (its credentials and TLS settings are used for the download).
    pub repo: RepoEntry,
    /// How it was asked for, for messages and the command that would fetch it.
    pub reference: ChartRef,
    /// The full index entry.
    pub entry: Option<ChartVersion>,
}

impl Resolved {
    /// The package's file name: the last segment of its URL's path.
    pub fn file_name(&self) -> String {
        let url = self.urls.first().map(String::as_str).unwrap_or_default();
        let path = reqwest::Url::parse(url)
            .map(|u| u.path().to_owned())
            .unwrap_or_else(|_| url.to_owned());
        let base = path.rsplit('/').next().unwrap_or_default();
        if base.is_empty() {
            format!("{}-{}.tgz", self.name, self.version)
        } else {
            base.to_owned()
        }
    }

    /// Where the package's provenance file is: its URL with `.prov` added.
    pub fn prov_url(&self) -> String {
        format!("{}.prov", self.urls.first().cloned().unwrap_or_default())
    }

    /// The command that would download this chart.
    pub fn fetch_command(&self) -> String {
        let version = if self.version.is_empty() {
            String::new()
        } else {
            format!(" --version {}", self.version)
        };
        match &self.reference {
            ChartRef::Named { repo, chart } => format!("chartkit pull {repo}/{chart}{version}"),
            ChartRef::InRepo { url, chart } => {
                format!("chartkit pull {chart} --repo {url}{version}")
            }
            ChartRef::Direct { url } => format!("chartkit pull {url}"),
        }
    }
}

/// A package in the content-addressed cache, checked against its digest.
#[derive(Debug, Clone)]
pub struct Package {
    /// `<cache>/content/sha256/<2 hex>/<64 hex>`.
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    /// Lower-case hex sha256 of `bytes`.
    pub sha256: String,
    /// False when the cache already held it.
    pub downloaded: bool,
}

impl Client {
    /// A client over the repository list in `paths` (a missing list is empty).
    pub fn new(paths: Paths, network: Network) -> Result<Client> {
        let repos = RepoFile::load(&paths.repositories_file())?;
        Ok(Client {
            paths,
            repos,
            network,
            max_index_size: DEFAULT_MAX_INDEX_SIZE,
        })
    }

    /// The client with another bound on index downloads.
    pub fn with_max_index_size(mut self, max_index_size: u64) -> Client {
        self.max_index_size = max_index_size;
        self
    }

    /// The configured repository named `name`.
    pub fn repo(&self, name: &str) -> Result<&RepoEntry> {
        self.repos.get(name).ok_or_else(|| ClientError::NoSuchRepo {
            name: name.to_owned(),
            path: self.paths.repositories_file(),
        })
    }

    /// The repository at `url`: a configured one with that URL (its credentials), or an
    /// unnamed entry for it (helm's `--repo`, a dependency's `repository: https://...`).
    pub fn entry_for_url(&self, url: &str) -> RepoEntry {
        self.repos
            .find_url(url)
            .cloned()
            .unwrap_or_else(|| RepoEntry::for_url(url))
    }

    /// The cache files of `entry`'s index.
    pub fn index_files(&self, entry: &RepoEntry) -> IndexFiles {
        IndexFiles::of(&self.paths.index_dir(), entry)
    }

    /// Downloads `entry`'s index.yaml unless the cached one is current (a conditional
    /// request with the recorded ETag/Last-Modified), checks it as Helm would and stores
    /// it with its compact form. An invalid index replaces nothing.
    pub fn update_index(&self, entry: &RepoEntry) -> Result<IndexUpdate> {
        self.update_index_with_progress(entry, None)
    }

    /// [`Client::update_index`], reporting the download's progress. Through a tunnel, a
    /// download whose connection broke starts again ([`Http::attempts`]).
    pub fn update_index_with_progress(
        &self,
        entry: &RepoEntry,
        progress: Option<Progress<'_>>,
    ) -> Result<IndexUpdate> {
        let attempts = Http::attempts(&entry.url);
        let mut attempt = 1;
        loop {
            match self.update_index_once(entry, progress) {
                Err(ClientError::Unreachable { .. }) if attempt < attempts => attempt += 1,
                result => return result,
            }
        }
    }

    fn update_index_once(
        &self,
        entry: &RepoEntry,
        progress: Option<Progress<'_>>,
    ) -> Result<IndexUpdate> {
        let http = self.network.http(|| {
            (
                format!("a fresh index of {}", describe(entry)),
                update_command(entry),
            )
        })?;
        if !crate::getter::is_built_in(&entry.url) && http.getters().serving(&entry.url).is_none() {
            return Err(ClientError::NoProtocolHandler {
                scheme: crate::getter::scheme(&entry.url),
            });
        }
        let url = index_url(&entry.url)?;
        let files = self.index_files(entry);
        self.remove_abandoned_downloads(&files);
        let meta = files.read_meta(&entry.url);
        let opened = http.open(&url, entry, true, meta.as_ref().map(|m| &m.validators))?;
        let (validators, update) = match opened {
            Opened::NotModified => {
                // Helm would have downloaded and read the index again: its warnings come
                // from the cached form.
                let cache_home = Some(self.paths.cache_home.as_path());
                let warnings = IndexCache::load_or_build(&files.index, cache_home)
                    .map(|cached| cached.warnings_when_read_from(&entry.url))
                    .unwrap_or_default();
                (
                    meta.map(|m| m.validators).unwrap_or_default(),
                    IndexUpdate::NotModified { warnings },
                )
            }
            Opened::Body(mut body) => {
                // What a plugin wrote is named with the plugin, which is to blame.
                let shown_url = match &body.plugin {
                    Some(name) => format!("{url} (as fetched by plugin \"{name}\")"),
                    None => url.clone(),
                };
                let bad_index = |source| ClientError::BadIndex {
                    url: shown_url.clone(),
                    source,
                };
                let limit = self.max_index_size;
                let too_large = |announced| ClientError::IndexTooLarge {
                    repo: describe(entry),
                    url: url.clone(),
                    limit,
                    announced,
                };
                if let Some(announced) = body.expected.filter(|&length| length > limit) {
                    return Err(too_large(Some(announced)));
                }
                // The index is hashed, written (under a temporary name) and parsed as it
                // arrives; it is put in place, if valid, once it is whole. Past the
                // limit the download stops, and dropping it removes what it wrote.
                let cache_home = Some(self.paths.cache_home.as_path());
                let mut download =
                    IndexDownload::begin(&files.index, body.expected, &url, cache_home)
                        .map_err(bad_index)?;
                let bytes = body.read_pieces(progress, |piece| {
                    if download.len() + piece.len() as u64 > limit {
                        return Err(too_large(None));
                    }
                    download.push(piece).map_err(bad_index)
                })?;
                let stored = download.store().map_err(bad_index)?;
                files.write_charts(stored.chart_names())?;
                let warnings = stored.warnings_when_read_from(&entry.url);
                (body.validators, IndexUpdate::Downloaded { bytes, warnings })
            }
        };
        files.write_meta(&IndexMeta {
            url: entry.url.clone(),
            validators,
            checked: now_secs(),
        })?;
        Ok(update)
    }

    /// Removes the temporary files a killed or aborted earlier download left beside
    /// `files` and in the compact cache (no process is writing them any more; see
    /// [`chartkit_durable::remove_abandoned`]), so that they do not stay for ever.
    fn remove_abandoned_downloads(&self, files: &IndexFiles) {
        let compact_dir = self.paths.cache_home.join(chartkit_repo::CACHE_BUCKET);
        for dir in [files.index.parent(), Some(compact_dir.as_path())]
            .into_iter()
            .flatten()
        {
            chartkit_durable::remove_abandoned(dir);
        }
    }

    /// `entry`'s index from the cache, asking the server as `refresh` says.
    pub fn load_index(&self, entry: &RepoEntry, refresh: Refresh) -> Result<RepoIndex> {
        let files = self.index_files(entry);
        let mut warnings = Vec::new();
        let cached = files.read_meta(&entry.url);
        let want_fetch = match refresh {
            Refresh::Never => false,
            Refresh::IfMissing => cached.is_none(),
            Refresh::Always => true,
        };
        if want_fetch {
            match self.update_index(entry) {
                Ok(update) => warnings.extend(update.warnings().iter().cloned()),
                Err(ClientError::Offline { fetch, .. }) => {
                    if cached.is_none() {
                        return Err(ClientError::Offline {
                            missing: format!("the index of {}", describe(entry)),
                            fetch,
                        });
                    }
                }
                Err(error @ (ClientError::Unreachable { .. } | ClientError::Status { .. })) => {
                    let Some(meta) = &cached else {
                        return Err(error);
                    };
                    warnings.push(format!(
                        "{error}; using the cached index of {}, last updated {} ago",
                        describe(entry),
                        human_age(age_of(meta.checked))
                    ));
                }
                Err(other) => return Err(other),
            }
        }
        let meta = match files.read_meta(&entry.url) {
            Some(meta) => meta,
            None if self.network.is_offline() || refresh == Refresh::Never => {
                return Err(if self.network.is_offline() {
                    ClientError::Offline {
                        missing: format!("the index of {}", describe(entry)),
                        fetch: update_command(entry),
                    }
                } else {
                    ClientError::NoCachedIndex {
                        name: entry.name.clone(),
                    }
                });
            }
            None => {
                return Err(ClientError::NoCachedIndex {
                    name: entry.name.clone(),
                });
            }
        };
        let index = IndexCache::load_or_build(&files.index, Some(&self.paths.cache_home)).map_err(
            |source| ClientError::BadIndex {
                url: entry.url.clone(),
                source,
            },
        )?;
        warnings.extend(index.warnings.iter().cloned());
        Ok(RepoIndex {
            entry: entry.clone(),
            index,
            age: age_of(meta.checked),
            warnings,
        })
    }

    /// Chooses the chart version `reference` names, as `helm pull` does: an exact
    /// version text wins, else the newest version in `version` (a range; empty or
    /// `None` is the newest stable, `devel` widens that to pre-releases).
    pub fn resolve(
        &self,
        reference: &ChartRef,
        version: Option<&str>,
        devel: bool,
    ) -> Result<(Resolved, Vec<String>)> {
        if let ChartRef::Direct { url } = reference {
            return Ok((self.direct(url, self.entry_for_url(url)), Vec::new()));
        }
        let (entry, refresh) = self.entry_for(reference)?;
        let loaded = self.load_index(&entry, refresh)?;
        let resolved = self.resolve_in(&loaded, reference, version, devel)?;
        Ok((resolved, loaded.warnings))
    }

    /// The repository `reference` points into (a configured one by name or URL, else an
    /// unnamed entry for its URL), and how fresh its index must be: a configured
    /// repository's cached index is used as it is (fetched only when missing), a
    /// repository given by URL is asked each time (conditionally). Callers may change
    /// the entry's credentials before [`Client::load_index`].
    pub fn entry_for(&self, reference: &ChartRef) -> Result<(RepoEntry, Refresh)> {
        Ok(match reference {
            ChartRef::Named { repo, .. } => (self.repo(repo)?.clone(), Refresh::IfMissing),
            ChartRef::InRepo { url, .. } => (self.entry_for_url(url), Refresh::Always),
            ChartRef::Direct { url } => (self.entry_for_url(url), Refresh::Never),
        })
    }

    /// A package URL given directly, downloaded with `repo`'s settings; without an index
    /// there is no digest to check it against.
    pub fn direct(&self, url: &str, repo: RepoEntry) -> Resolved {
        Resolved {
            name: String::new(),
            version: String::new(),
            urls: vec![url.to_owned()],
            digest: None,
            repo_url: String::new(),
            repo,
            reference: ChartRef::Direct {
                url: url.to_owned(),
            },
            entry: None,
        }
    }

    /// [`Client::resolve`] in an index already loaded.
    pub fn resolve_in(
        &self,
        loaded: &RepoIndex,
        reference: &ChartRef,
        version: Option<&str>,
        devel: bool,
    ) -> Result<Resolved> {
        let chart = reference.chart_name();
        let request = chartkit_index::select::pull_request(version, devel);
        let not_found = || ClientError::ChartNotFound {
            chart: chart.to_owned(),
            version: version.filter(|v| !v.is_empty()).map(str::to_owned),
            repo: match &loaded.entry.name {
                n if n.is_empty() => format!("{} repository", loaded.entry.url),
                n => format!("repository \"{n}\" ({})", loaded.entry.url),
            },
        };
        let chosen = match loaded.index.get(chart, &request) {
            Ok(chosen) => chosen,
            Err(chartkit_index::compact::QueryError::Select(
                chartkit_index::select::SelectError::Range(e),
            )) => return Err(ClientError::Range(e)),
            Err(chartkit_index::compact::QueryError::Select(_)) => return Err(not_found()),
            Err(e) => return Err(e.into()),
        };
        let urls = chosen.urls.clone().unwrap_or_default();
        if urls.is_empty() {
            return Err(ClientError::NoUrls {
                chart: chart.to_owned(),
                version: chosen.version().to_owned(),
            });
        }
        let urls = urls
            .iter()
            .map(|u| resolve_reference_url(&loaded.entry.url, u))
            .collect::<Result<Vec<_>>>()?;
        let digest = match normalize_digest(&chosen.digest) {
            Ok(digest) => digest,
            Err(()) => {
                return Err(ClientError::BadDigest {
                    repo: match &loaded.entry.name {
                        n if n.is_empty() => format!("the repository {}", loaded.entry.url),
                        n => format!("repository \"{n}\" ({})", loaded.entry.url),
                    },
                    chart: chosen.name().to_owned(),
                    version: chosen.version().to_owned(),
                    digest: chosen.digest.clone(),
                });
            }
        };
        Ok(Resolved {
            name: chosen.name().to_owned(),
            version: chosen.version().to_owned(),
            urls,
            digest,
            repo_url: loaded.entry.url.clone(),
            repo: loaded.entry.clone(),
            reference: reference.clone(),
            entry: Some(chosen),
        })
    }

    /// Where a package with this sha256 lives in the cache.
    pub fn blob_path(&self, sha256: &str) -> PathBuf {
        self.paths
            .content_dir()
            .join(&sha256[..2.min(sha256.len())])
            .join(sha256)
    }

    /// The package of `resolved`, from the cache when it holds the digest, otherwise
    /// downloaded, checked against the index digest (a mismatch stores nothing) and
    /// stored by its sha256.
    pub fn fetch_package(&self, resolved: &Resolved) -> Result<Package> {
        if let Some(digest) = &resolved.digest
            && let Some(bytes) = read_checked(&self.blob_path(digest), digest)
        {
            return Ok(Package {
                path: self.blob_path(digest),
                bytes,
                sha256: digest.clone(),
                downloaded: false,
            });
        }
        let url = resolved.urls.first().cloned().unwrap_or_default();
        let http = self.network.http(|| {
            (
                match &resolved.digest {
                    Some(d) if !resolved.name.is_empty() => format!(
                        "chart {} version {} (sha256:{d})",
                        resolved.name, resolved.version
                    ),
                    _ => format!("the package {url}"),
                },
                resolved.fetch_command(),
            )
        })?;
        let credentials =
            resolved.repo.pass_credentials_all || same_origin(&url, &resolved.repo.url);
        let Fetched::Body { bytes, .. } =
            http.get(&url, &resolved.repo, credentials, None, None)?
        else {
            unreachable!("an unconditional request is never answered 304 by Http::get")
        };
        let sha256 = hex::encode(Sha256::digest(&bytes));
        // A getter plugin may build the package when asked (helm-git packages the
        // chart from its git checkout each time), so its bytes need not be those the
        // index was made from; helm does not compare them either.
        let built_by_plugin = http.getters().serving(&url).is_some();
        if let Some(expected) = &resolved.digest
            && *expected != sha256
            && !built_by_plugin
        {
            return Err(ClientError::DigestMismatch {
                url,
                expected: expected.clone(),
                actual: sha256,
            });
        }
        let path = self.blob_path(&sha256);
        write_blob(&path, &bytes)?;
        Ok(Package {
            path,
            bytes,
            sha256,
            downloaded: true,
        })
    }

    /// The provenance file of `resolved` (`<package URL>.prov`), cached beside the
    /// package's blob as `<64 hex>.prov` when the digest is known.
    pub fn fetch_prov(&self, resolved: &Resolved) -> Result<Vec<u8>> {
        let cached = resolved.digest.as_ref().map(|d| {
            let mut path = self.blob_path(d).into_os_string();
            path.push(".prov");
            PathBuf::from(path)
        });
        if let Some(path) = &cached
            && let Ok(bytes) = std::fs::read(path)
        {
            return Ok(bytes);
        }
        let url = resolved.prov_url();
        let http = self.network.http(|| {
            (
                format!("the provenance file {url}"),
                format!("{} --prov", resolved.fetch_command()),
            )
        })?;
        let credentials =
            resolved.repo.pass_credentials_all || same_origin(&url, &resolved.repo.url);
        let Fetched::Body { bytes, .. } =
            http.get(&url, &resolved.repo, credentials, None, None)?
        else {
            unreachable!("an unconditional request is never answered 304 by Http::get")
        };
        if let Some(path) = &cached {
            write_blob(path, &bytes)?;
        }
        Ok(bytes)
    }
}

/// `repository "NAME" (URL)` or `the repository at URL`.
fn describe(entry: &RepoEntry) -> String {
    if entry.is_unnamed() {
        format!("the repository at {}", entry.url)
    } else {
        format!("repository \"{}\" ({})", entry.name, entry.url)
    }
}

/// The command that downloads `entry`'s index; empty for a repository known only by
/// URL, which the command that needs it downloads itself when online.
fn update_command(entry: &RepoEntry) -> String {
    if entry.is_unnamed() {
        String::new()
    } else {
        format!("chartkit repo update {}", entry.name)
    }
}

/// The index URL of a repository URL.
pub fn index_url(repo_url: &str) -> Result<String> {
    resolve_reference_url(repo_url, "index.yaml")
}

/// Helm's `ResolveReferenceURL`: an absolute `reference` as it is, otherwise resolved
/// against `base` taken as a directory, keeping `base`'s query. Against a
/// `portforward://` base, the target (`NAMESPACE/KIND/NAME:PORT`) plays the host's part:
/// `/top/a.tgz` is `/top/a.tgz` on the same target.
pub fn resolve_reference_url(base: &str, reference: &str) -> Result<String> {
    if reqwest::Url::parse(reference).is_ok() {
        return Ok(reference.to_owned());
    }
    if is_tunnel_url(base) {
        let tunnel = TunnelUrl::parse(base)?;
        // Resolved on a stand-in host, so the target's `/`s are not taken for a path.
        let stand_in = format!("http://tunnel.invalid{}", tunnel.rest);
        let joined = resolve_reference_url(&stand_in, reference)?;
        let joined = reqwest::Url::parse(&joined).map_err(|e| ClientError::BadUrl {
            url: reference.to_owned(),
            reason: e.to_string(),
        })?;
        let mut rest = joined.path().to_owned();
        if let Some(query) = joined.query() {
            rest.push('?');
            rest.push_str(query);
        }
        return Ok(tunnel.with_rest(&rest));
    }
    let bad = |url: &str, e: &dyn std::fmt::Display| ClientError::BadUrl {
        url: url.to_owned(),
        reason: e.to_string(),
    };
    let mut parsed = reqwest::Url::parse(base).map_err(|e| bad(base, &e))?;
    let query = parsed.query().map(str::to_owned);
    let path = format!("{}/", parsed.path().trim_end_matches('/'));
    parsed.set_path(&path);
    parsed.set_query(None);
    let mut joined = parsed.join(reference).map_err(|e| bad(reference, &e))?;
    joined.set_query(query.as_deref());
    Ok(joined.to_string())
}

/// Same scheme, host and port: where helm sends a repository's credentials. For
/// `portforward://` URLs, the same target.
fn same_origin(a: &str, b: &str) -> bool {
    if is_tunnel_url(a) || is_tunnel_url(b) {
        return match (TunnelUrl::parse(a), TunnelUrl::parse(b)) {
            (Ok(a), Ok(b)) => a.target == b.target,
            _ => false,
        };
    }
    match (reqwest::Url::parse(a), reqwest::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

/// An index digest as lower-case hex without a `sha256:` prefix; `None` when there is
/// none, an error when there is one that is not a sha256 (a check that cannot be made
/// must fail, not be skipped).
fn normalize_digest(digest: &str) -> std::result::Result<Option<String>, ()> {
    let d = digest.trim();
    if d.is_empty() {
        return Ok(None);
    }
    let d = d.strip_prefix("sha256:").unwrap_or(d).to_ascii_lowercase();
    match d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()) {
        true => Ok(Some(d)),
        false => Err(()),
    }
}

/// The blob's bytes if it exists and still has its digest.
fn read_checked(path: &Path, digest: &str) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    (hex::encode(Sha256::digest(&bytes)) == digest).then_some(bytes)
}

fn write_blob(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(ClientError::io(dir))?;
        // What a package download killed while it was being stored left.
        chartkit_durable::remove_abandoned(dir);
    }
    chartkit_durable::write(path, bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_urls_resolve_as_helms() {
        let r = |b, u| resolve_reference_url(b, u).unwrap();
        assert_eq!(
            r("http://h/charts", "index.yaml"),
            "http://h/charts/index.yaml"
        );
        assert_eq!(
            r("http://h/charts/", "index.yaml"),
            "http://h/charts/index.yaml"
        );
        assert_eq!(r("http://h", "a-1.tgz"), "http://h/a-1.tgz");
        assert_eq!(r("http://h/x?k=v", "a.tgz"), "http://h/x/a.tgz?k=v");
        assert_eq!(r("http://h/x", "https://o/a.tgz"), "https://o/a.tgz");
        assert_eq!(r("http://h/x", "/top/a.tgz"), "http://h/top/a.tgz");
    }

    #[test]
    fn reference_urls_resolve_against_a_tunnel() {
        let r = |b: &str, u: &str| resolve_reference_url(b, u).unwrap();
        let base = "portforward://infra/svc/charts:8879";
        assert_eq!(
            r(base, "index.yaml"),
            "portforward://infra/svc/charts:8879/index.yaml"
        );
        assert_eq!(
            r(&format!("{base}/"), "charts/web-1.2.0.tgz"),
            "portforward://infra/svc/charts:8879/charts/web-1.2.0.tgz"
        );
        assert_eq!(
            r(&format!("{base}/stable?k=v"), "web-1.2.0.tgz"),
            "portforward://infra/svc/charts:8879/stable/web-1.2.0.tgz?k=v"
        );
        assert_eq!(
            r(&format!("{base}/stable"), "/top/a.tgz"),
            "portforward://infra/svc/charts:8879/top/a.tgz"
        );
        assert_eq!(
            r(&format!("{base}/stable"), "../a.tgz"),
            "portforward://infra/svc/charts:8879/a.tgz"
        );
        // An index pointing elsewhere is followed as it says.
        assert_eq!(r(base, "https://cdn/a.tgz"), "https://cdn/a.tgz");
        assert!(
            resolve_reference_url("portforward://infra/svc/charts", "index.yaml")
                .unwrap_err()
                .to_string()
                .contains("has no port")
        );
    }

    #[test]
    fn digests_are_normalized() {
        let hex = "a".repeat(64);
        assert_eq!(
            normalize_digest(&format!("sha256:{hex}")).unwrap(),
            Some(hex.clone())
        );
        assert_eq!(normalize_digest(&hex.to_uppercase()), Ok(Some(hex.clone())));
        assert_eq!(normalize_digest(""), Ok(None));
        // Malformed digests are refused, never skipped: 66 hex digits, not hex, empty hex.
        assert!(normalize_digest(&format!("{hex}ab")).is_err());
        assert!(normalize_digest(&"z".repeat(64)).is_err());
        assert!(normalize_digest("sha256:").is_err());
    }

    #[test]
    fn credentials_stay_with_their_origin() {
        assert!(same_origin("http://h:1/a.tgz", "http://h:1/repo"));
        assert!(!same_origin("http://other/a.tgz", "http://h/repo"));
        assert!(!same_origin("https://h/a.tgz", "http://h/repo"));
        let repo = "portforward://infra/svc/charts:8879";
        assert!(same_origin(&format!("{repo}/charts/a.tgz"), repo));
        assert!(!same_origin(
            "portforward://infra/svc/other:8879/a.tgz",
            repo
        ));
        assert!(!same_origin("http://infra/a.tgz", repo));
    }
}
