//! Uploads, provenance and deletes through the router, over a storage that can be made to
//! fail at a chosen write. Each test is named after what went wrong before.

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use bytes::Bytes;
use chartkit_index::{GoTime, IndexFile};
use chartkit_signing::{GeneratedKey, Keyring};
use tower::ServiceExt;

use crate::api::{AppState, Policy, router};
use crate::metrics::Metrics;
use crate::publish::UploadSlots;
use crate::repository::{PackageRules, Repository, UrlStyle};
use crate::storage::{LocalStorage, ObjectInfo, Storage, StorageError, WriteMode};

/// Local storage that fails chosen writes and, when asked, its readiness check.
struct Faulty {
    inner: LocalStorage,
    fail_puts: Mutex<HashSet<String>>,
    fail_check: Mutex<bool>,
}

#[async_trait::async_trait]
impl Storage for Faulty {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    async fn list(&self) -> Result<Vec<ObjectInfo>, StorageError> {
        self.inner.list().await
    }
    async fn get(&self, name: &str) -> Result<Option<Bytes>, StorageError> {
        self.inner.get(name).await
    }
    async fn put(
        &self,
        name: &str,
        data: Bytes,
        mode: WriteMode,
    ) -> Result<ObjectInfo, StorageError> {
        if self.fail_puts.lock().unwrap().contains(name) {
            return Err(StorageError::Failed {
                action: "writing",
                name: name.to_owned(),
                storage: self.inner.describe(),
                message: "No space left on device (injected)".to_owned(),
            });
        }
        self.inner.put(name, data, mode).await
    }
    async fn delete(&self, name: &str) -> Result<bool, StorageError> {
        self.inner.delete(name).await
    }
    async fn check(&self) -> Result<(), StorageError> {
        if *self.fail_check.lock().unwrap() {
            return Err(StorageError::Failed {
                action: "checking",
                name: String::new(),
                storage: "s3://internal-bucket at http://10.0.0.7:9000".to_owned(),
                message: "connection refused".to_owned(),
            });
        }
        self.inner.check().await
    }
}

pub(crate) struct Server {
    dir: tempfile::TempDir,
    storage: Arc<Faulty>,
    repo: Arc<Repository>,
    pub state: AppState,
    app: Router,
}

#[derive(Default)]
pub(crate) struct Settings {
    pub allow_overwrite: bool,
    pub require_signature: bool,
    pub max_entry_size: Option<usize>,
    pub limits: crate::limits::RepositoryLimits,
    /// The web view, with the signer's key as its keyring when `require_signature` is set.
    pub web: bool,
    pub context_path: String,
}

pub(crate) fn signer() -> &'static GeneratedKey {
    static KEY: OnceLock<GeneratedKey> = OnceLock::new();
    KEY.get_or_init(|| {
        chartkit_signing::generate_key("Test Signer", "signer@example.com", None).unwrap()
    })
}

pub(crate) async fn server(settings: Settings) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(Faulty {
        inner: LocalStorage::open(dir.path()).unwrap(),
        fail_puts: Mutex::new(HashSet::new()),
        fail_check: Mutex::new(false),
    });
    let rules = PackageRules {
        max_entry_size: settings
            .max_entry_size
            .unwrap_or(PackageRules::default().max_entry_size),
        ..PackageRules::default()
    };
    let metrics = Arc::new(Metrics::default());
    let repo = Arc::new(Repository::new(
        storage.clone(),
        UrlStyle::default(),
        rules,
        Arc::clone(&metrics),
    ));
    repo.sync().await.unwrap();
    let require_signature = settings
        .require_signature
        .then(|| Keyring::from_bytes(signer().public.as_str().as_bytes()).unwrap());
    let policy = Policy {
        allow_overwrite: settings.allow_overwrite,
        require_signature,
        uploads: UploadSlots::new(2, Duration::from_millis(200)),
        limits: settings.limits,
        form_fields: crate::upload::FormFields {
            chart: "package".to_owned(),
            prov: "signature".to_owned(),
        },
        web: settings.web.then(|| {
            crate::web::Web::new(crate::web::WebOptions {
                keyring: settings
                    .require_signature
                    .then(|| Keyring::from_bytes(signer().public.as_str().as_bytes()).unwrap()),
                repo_name: None,
            })
        }),
        context_path: settings.context_path,
        ..Policy::for_tests()
    };
    let state = AppState {
        repo: Arc::clone(&repo),
        policy: Arc::new(policy),
        metrics,
        registry: Arc::new(crate::oci::Registry::for_tests()),
    };
    Server {
        app: router(state.clone()),
        dir,
        storage,
        repo,
        state,
    }
}

impl Server {
    pub(crate) async fn send(&self, request: Request<Body>) -> (StatusCode, String) {
        let response = self.app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    pub(crate) async fn get(&self, uri: &str) -> (StatusCode, String) {
        self.send(Request::get(uri).body(Body::empty()).unwrap())
            .await
    }

    pub(crate) async fn upload(&self, package: &[u8]) -> (StatusCode, String) {
        self.send(
            Request::post("/api/charts")
                .body(Body::from(package.to_vec()))
                .unwrap(),
        )
        .await
    }

    pub(crate) async fn upload_parts(&self, parts: &[(&str, &[u8])]) -> (StatusCode, String) {
        let (content_type, body) = multipart(parts);
        self.send(
            Request::post("/api/charts")
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from(body))
                .unwrap(),
        )
        .await
    }

    /// The files in the storage directory, temporaries included.
    fn stored(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn fail_put(&self, name: &str) {
        self.storage
            .fail_puts
            .lock()
            .unwrap()
            .insert(name.to_owned());
    }

    fn heal(&self) {
        self.storage.fail_puts.lock().unwrap().clear();
    }

    async fn index(&self) -> String {
        self.get("/index.yaml").await.1
    }
}

/// A package of `name`-`version` with extra files (path inside the chart, content).
pub(crate) fn package(name: &str, version: &str, extra: &[(&str, &[u8])]) -> Vec<u8> {
    let chart_yaml = format!("apiVersion: v2\nname: {name}\nversion: {version}\n");
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let mut files = vec![("Chart.yaml", chart_yaml.as_bytes())];
    files.extend_from_slice(extra);
    for (path, data) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, format!("{name}/{path}"), data)
            .unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

pub(crate) fn sign(package: &[u8], name: &str, version: &str) -> Vec<u8> {
    let ring = Keyring::from_bytes(signer().secret.expose().as_bytes()).unwrap();
    let metadata = format!("apiVersion: v2\nname: {name}\nversion: {version}\n");
    chartkit_signing::sign_chart(
        &metadata,
        &format!("{name}-{version}.tgz"),
        package,
        &ring.keys()[0],
        None,
    )
    .unwrap()
    .into_bytes()
}

fn multipart(parts: &[(&str, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "chartkit-test-boundary";
    let mut body = Vec::new();
    for (field, data) in parts {
        write!(
            body,
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        .unwrap();
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    write!(body, "--{boundary}--\r\n").unwrap();
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[tokio::test]
async fn a_failed_package_write_after_its_provenance_leaves_nothing_visible() {
    let server = server(Settings::default()).await;
    let chart = package("demo", "1.0.0", &[]);
    let prov = sign(&chart, "demo", "1.0.0");
    server.fail_put("demo-1.0.0.tgz");
    let (status, body) = server
        .upload_parts(&[("chart", &chart), ("prov", &prov)])
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert!(server.stored().is_empty(), "{:?}", server.stored());
    assert_eq!(
        server.get("/charts/demo-1.0.0.tgz.prov").await.0,
        StatusCode::NOT_FOUND
    );
    assert!(!server.index().await.contains("demo"));
    // Nothing was left to make the retry a conflict.
    server.heal();
    let (status, body) = server
        .upload_parts(&[("chart", &chart), ("prov", &prov)])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        server.stored(),
        ["demo-1.0.0.tgz", "demo-1.0.0.tgz.prov"],
        "both files, nothing else"
    );
    let (status, served) = server.get("/charts/demo-1.0.0.tgz.prov").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(served.as_bytes(), &prov[..]);
}

#[tokio::test]
async fn a_failed_provenance_write_stores_nothing() {
    let server = server(Settings::default()).await;
    let chart = package("demo", "1.0.0", &[]);
    let prov = sign(&chart, "demo", "1.0.0");
    server.fail_put("demo-1.0.0.tgz.prov");
    let (status, _) = server
        .upload_parts(&[("chart", &chart), ("prov", &prov)])
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(server.stored().is_empty(), "{:?}", server.stored());
    assert!(!server.index().await.contains("demo"));
}

#[tokio::test]
async fn a_failed_package_write_puts_the_previous_provenance_back() {
    let server = server(Settings {
        allow_overwrite: true,
        ..Settings::default()
    })
    .await;
    let first = package("demo", "1.0.0", &[]);
    let first_prov = sign(&first, "demo", "1.0.0");
    let (status, _) = server
        .upload_parts(&[("chart", &first), ("prov", &first_prov)])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let second = package("demo", "1.0.0", &[("values.yaml", b"a: 2\n")]);
    let second_prov = sign(&second, "demo", "1.0.0");
    server.fail_put("demo-1.0.0.tgz");
    let (status, _) = server
        .upload_parts(&[("chart", &second), ("prov", &second_prov)])
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    let (status, served) = server.get("/charts/demo-1.0.0.tgz.prov").await;
    assert_eq!(status, StatusCode::OK, "the old pair is still served");
    assert_eq!(served.as_bytes(), &first_prov[..]);
}

#[tokio::test]
async fn a_storage_failure_does_not_reveal_where_the_storage_is() {
    let server = server(Settings::default()).await;
    server.fail_put("demo-1.0.0.tgz");
    let (status, body) = server.upload(&package("demo", "1.0.0", &[])).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    let dir = server.dir.path().display().to_string();
    assert!(!body.contains(&dir), "{body}");
    assert!(!body.contains("No space left"), "{body}");
    assert!(
        body.contains("demo-1.0.0.tgz") && body.contains("reference"),
        "{body}"
    );
}

#[tokio::test]
async fn a_provenance_for_other_bytes_is_refused_even_without_require_signature() {
    let server = server(Settings::default()).await;
    let signed = package("demo", "1.0.0", &[]);
    let prov = sign(&signed, "demo", "1.0.0");
    let other = package("demo", "1.0.0", &[("values.yaml", b"changed: true\n")]);
    let (status, body) = server
        .upload_parts(&[("chart", &other), ("prov", &prov)])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("sign this package again"), "{body}");
    assert!(server.stored().is_empty());
    // The same through /api/prov once the package is stored.
    assert_eq!(server.upload(&other).await.0, StatusCode::CREATED);
    let (status, body) = server
        .send(
            Request::post("/api/prov")
                .body(Body::from(prov.clone()))
                .unwrap(),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(server.stored(), ["demo-1.0.0.tgz"]);
}

impl Server {
    async fn upload_prov(&self, uri: &str, prov: &[u8]) -> (StatusCode, String) {
        self.send(Request::post(uri).body(Body::from(prov.to_vec())).unwrap())
            .await
    }
}

#[tokio::test]
async fn a_provenance_sent_before_its_package_is_served_once_the_package_comes() {
    let server = server(Settings::default()).await;
    let chart = package("early", "1.0.0", &[]);
    let prov = sign(&chart, "early", "1.0.0");
    let (status, body) = server.upload_prov("/api/prov", &prov).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(server.stored(), ["early-1.0.0.tgz.prov"]);
    // Not served alone: there is nothing yet for it to sign.
    assert_eq!(
        server.get("/charts/early-1.0.0.tgz.prov").await.0,
        StatusCode::NOT_FOUND
    );
    // ChartMuseum refuses it again unless forced.
    assert_eq!(
        server.upload_prov("/api/prov", &prov).await.0,
        StatusCode::CONFLICT
    );
    assert_eq!(
        server.upload_prov("/api/prov?force", &prov).await.0,
        StatusCode::CREATED
    );
    assert_eq!(server.upload(&chart).await.0, StatusCode::CREATED);
    let (status, served) = server.get("/charts/early-1.0.0.tgz.prov").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(served.as_bytes(), &prov[..]);
}

#[tokio::test]
async fn a_package_that_a_provenance_sent_ahead_does_not_sign_replaces_it() {
    let server = server(Settings::default()).await;
    let signed = package("early", "1.0.0", &[]);
    let other = package("early", "1.0.0", &[("values.yaml", b"a: 2\n")]);
    let prov = sign(&signed, "early", "1.0.0");
    assert_eq!(
        server.upload_prov("/api/prov", &prov).await.0,
        StatusCode::CREATED
    );
    assert_eq!(server.upload(&other).await.0, StatusCode::CREATED);
    assert_eq!(server.stored(), ["early-1.0.0.tgz"]);
}

#[tokio::test]
async fn a_provenance_sent_ahead_satisfies_require_signature() {
    let server = server(Settings {
        require_signature: true,
        ..Settings::default()
    })
    .await;
    let chart = package("early", "1.0.0", &[]);
    assert_eq!(server.upload(&chart).await.0, StatusCode::BAD_REQUEST);
    let prov = sign(&chart, "early", "1.0.0");
    assert_eq!(
        server.upload_prov("/api/prov", &prov).await.0,
        StatusCode::CREATED
    );
    assert_eq!(server.upload(&chart).await.0, StatusCode::CREATED);
}

#[tokio::test]
async fn max_storage_objects_refuses_new_files_with_507_but_not_replacements() {
    let server = server(Settings {
        allow_overwrite: true,
        limits: crate::limits::RepositoryLimits {
            max_objects: Some(2),
            ..Default::default()
        },
        ..Settings::default()
    })
    .await;
    let a = package("a", "1.0.0", &[]);
    let b = package("b", "1.0.0", &[]);
    let c = package("c", "1.0.0", &[]);
    assert_eq!(server.upload(&a).await.0, StatusCode::CREATED);
    // A package and its .prov are two objects: one more than there is room for.
    let (status, body) = server
        .upload_parts(&[("chart", &b), ("prov", &sign(&b, "b", "1.0.0"))])
        .await;
    assert_eq!(status, StatusCode::INSUFFICIENT_STORAGE, "{body}");
    assert!(
        body.contains("repo has reached storage limit"),
        "ChartMuseum's words: {body}"
    );
    assert_eq!(server.upload(&b).await.0, StatusCode::CREATED);
    let (status, body) = server.upload(&c).await;
    assert_eq!(status, StatusCode::INSUFFICIENT_STORAGE, "{body}");
    let (status, _) = server
        .upload_prov("/api/prov", &sign(&a, "a", "1.0.0"))
        .await;
    assert_eq!(status, StatusCode::INSUFFICIENT_STORAGE);
    // Replacing a stored package takes no room.
    assert_eq!(server.upload(&a).await.0, StatusCode::CREATED);
    assert_eq!(server.stored(), ["a-1.0.0.tgz", "b-1.0.0.tgz"]);
}

#[tokio::test]
async fn per_chart_limit_deletes_the_versions_uploaded_longest_ago() {
    let server = server(Settings {
        limits: crate::limits::RepositoryLimits {
            per_chart: Some(2),
            ..Default::default()
        },
        ..Settings::default()
    })
    .await;
    let old = package("demo", "1.0.0", &[]);
    assert_eq!(
        server
            .upload_parts(&[("chart", &old), ("prov", &sign(&old, "demo", "1.0.0"))])
            .await
            .0,
        StatusCode::CREATED
    );
    // Uploaded in this order, so the oldest upload is not the lowest version.
    for (name, version) in [("other", "1.0.0"), ("demo", "3.0.0"), ("demo", "0.1.0")] {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let chart = package(name, version, &[]);
        assert_eq!(server.upload(&chart).await.0, StatusCode::CREATED);
    }
    assert_eq!(
        server.stored(),
        ["demo-0.1.0.tgz", "demo-3.0.0.tgz", "other-1.0.0.tgz"]
    );
    let index = server.index().await;
    assert!(!index.contains("demo-1.0.0.tgz"), "{index}");
    assert_eq!(
        server.get("/api/charts/demo/1.0.0").await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn overwriting_a_signed_package_without_a_provenance_drops_the_old_one() {
    let server = server(Settings {
        allow_overwrite: true,
        ..Settings::default()
    })
    .await;
    let first = package("demo", "1.0.0", &[]);
    let prov = sign(&first, "demo", "1.0.0");
    let (status, _) = server
        .upload_parts(&[("chart", &first), ("prov", &prov)])
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let second = package("demo", "1.0.0", &[("values.yaml", b"a: 2\n")]);
    assert_eq!(server.upload(&second).await.0, StatusCode::CREATED);
    assert_eq!(server.stored(), ["demo-1.0.0.tgz"]);
    assert_eq!(
        server.get("/charts/demo-1.0.0.tgz.prov").await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_provenance_that_does_not_match_its_package_is_not_served() {
    let server = server(Settings::default()).await;
    let served = package("demo", "1.0.0", &[]);
    let other = package("demo", "1.0.0", &[("values.yaml", b"a: 2\n")]);
    // As another tool, or a crash between two writes, could leave them.
    std::fs::write(server.dir.path().join("demo-1.0.0.tgz"), &served).unwrap();
    std::fs::write(
        server.dir.path().join("demo-1.0.0.tgz.prov"),
        sign(&other, "demo", "1.0.0"),
    )
    .unwrap();
    server.repo.sync().await.unwrap();
    assert_eq!(server.get("/charts/demo-1.0.0.tgz").await.0, StatusCode::OK);
    assert_eq!(
        server.get("/charts/demo-1.0.0.tgz.prov").await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn two_chart_parts_in_one_upload_are_refused() {
    let server = server(Settings::default()).await;
    let one = package("one", "1.0.0", &[]);
    let two = package("two", "1.0.0", &[]);
    let (status, body) = server
        .upload_parts(&[("chart", &one), ("chart", &two)])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("more than one `chart` part"), "{body}");
    assert!(server.stored().is_empty());
}

#[tokio::test]
async fn delete_finds_the_version_asked_for_or_the_file_chartmuseum_would_delete() {
    let server = server(Settings::default()).await;
    // Chart `x` version `1.0.0-2.0.0` is stored as x-1.0.0-2.0.0.tgz, the name chart
    // `x-1.0.0` version `2.0.0` would have.
    let delete = |uri: &str| {
        Request::builder()
            .method(Method::DELETE)
            .uri(uri)
            .body(Body::empty())
            .unwrap()
    };
    for uri in ["/api/charts/x/1.0.0-2.0.0", "/api/charts/x-1.0.0/2.0.0"] {
        assert_eq!(
            server.upload(&package("x", "1.0.0-2.0.0", &[])).await.0,
            StatusCode::CREATED
        );
        // No chart `x-1.0.0` is indexed, so the second is ChartMuseum's reading: the
        // file NAME-VERSION.tgz (what a script splitting the file name at its last dash
        // sends).
        let (status, _) = server.send(delete(uri)).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert!(server.stored().is_empty(), "{uri}");
    }
    let (status, _) = server.send(delete("/api/charts/x/1.0.0-2.0.0")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn an_upload_the_indexer_would_drop_is_refused_and_leaves_nothing() {
    let server = server(Settings::default()).await;
    let broken = package("demo", "1.0.0", &[("values.yaml", b"a: [1\n")]);
    let (status, body) = server.upload(&broken).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("values.yaml"), "{body}");
    assert!(server.stored().is_empty());
    let fixed = package("demo", "1.0.0", &[("values.yaml", b"a: [1]\n")]);
    assert_eq!(server.upload(&fixed).await.0, StatusCode::CREATED);
}

#[tokio::test]
async fn uploads_helm_indexes_are_stored_and_indexed() {
    let server = server(Settings::default()).await;
    // A package whose entries come in two gzip members, as concatenating tools make.
    let whole = package("multi", "1.0.0", &[("values.yaml", b"a: 1\n")]);
    let mut tar = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&whole[..]), &mut tar).unwrap();
    let cut = 512 * 3;
    let gzip = |data: &[u8]| {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    };
    let mut members = gzip(&tar[..cut]);
    members.extend(gzip(&tar[cut..]));
    let (status, body) = server.upload(&members).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // A package whose entries start with `./`.
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let chart_yaml = b"apiVersion: v2\nname: dotted\nversion: 1.0.0\n";
    let mut header = tar::Header::new_gnu();
    // Set as raw bytes: the tar crate would drop the `./`.
    header.as_old_mut().name[..12].copy_from_slice(b"./Chart.yaml");
    header.set_size(chart_yaml.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    builder.append(&header, &chart_yaml[..]).unwrap();
    let dotted = builder.into_inner().unwrap().finish().unwrap();
    let (status, body) = server.upload(&dotted).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let index = server.index().await;
    assert!(
        index.contains("  multi:\n") && index.contains("  dotted:\n"),
        "{index}"
    );
    // And a restart reads the stored packages back the same way.
    let restarted = Repository::new(
        Arc::new(LocalStorage::open(server.dir.path()).unwrap()),
        UrlStyle::default(),
        PackageRules::default(),
        Arc::new(Metrics::default()),
    );
    let report = restarted.sync().await.unwrap();
    assert_eq!((report.added, report.skipped.len()), (2, 0), "{report:?}");
}

#[tokio::test]
async fn metadata_beyond_the_index_entry_limit_is_refused() {
    let server = server(Settings {
        max_entry_size: Some(4096),
        ..Settings::default()
    })
    .await;
    let description = "d".repeat(8000);
    let chart_yaml =
        format!("apiVersion: v2\nname: wordy\nversion: 1.0.0\ndescription: {description}\n");
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let mut header = tar::Header::new_gnu();
    header.set_size(chart_yaml.len() as u64);
    header.set_mode(0o644);
    builder
        .append_data(&mut header, "wordy/Chart.yaml", chart_yaml.as_bytes())
        .unwrap();
    let wordy = builder.into_inner().unwrap().finish().unwrap();
    let (status, body) = server.upload(&wordy).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("--max-index-entry-size"), "{body}");
    assert!(server.stored().is_empty());
    // The same package copied in by hand is skipped by the sync, not indexed.
    std::fs::write(server.dir.path().join("wordy-1.0.0.tgz"), &wordy).unwrap();
    let report = server.repo.sync().await.unwrap();
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    assert!(!server.index().await.contains("wordy"));
}

#[tokio::test]
async fn uploads_beyond_the_slots_get_503_with_retry_after() {
    let server = server(Settings::default()).await;
    let slots = Arc::clone(&server.state.policy.uploads.slots);
    let held = slots.acquire_many_owned(2).await.unwrap();
    let response = server
        .app
        .clone()
        .oneshot(
            Request::post("/api/charts")
                .body(Body::from(package("demo", "1.0.0", &[])))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()[header::RETRY_AFTER], "5");
    drop(held);
    assert_eq!(
        server.upload(&package("demo", "1.0.0", &[])).await.0,
        StatusCode::CREATED
    );
}

#[tokio::test]
async fn ready_reports_storage_trouble_that_health_does_not() {
    let server = server(Settings::default()).await;
    assert_eq!(server.get("/ready").await.0, StatusCode::OK);
    *server.storage.fail_check.lock().unwrap() = true;
    let (status, body) = server.get("/ready").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(!body.contains("10.0.0.7"), "{body}");
    assert_eq!(server.get("/health").await.0, StatusCode::OK);
}

#[tokio::test]
async fn index_yaml_in_parts_matches_the_whole_index() {
    let server = server(Settings::default()).await;
    for (name, version) in [
        ("b", "1.0.0"),
        ("a10", "1.0.0"),
        ("a2", "1.0.0"),
        ("b", "2.0.0"),
    ] {
        assert_eq!(
            server.upload(&package(name, version, &[])).await.0,
            StatusCode::CREATED
        );
    }
    let whole_index = |served: &str| {
        let generated = served
            .lines()
            .find_map(|l| l.strip_prefix("generated: "))
            .and_then(|t| GoTime::parse(t.trim_matches('"')))
            .unwrap();
        let mut whole = IndexFile::new(generated);
        whole.entries = server.repo.charts();
        chartkit_index::to_yaml(&whole)
    };
    let served = server.index().await;
    assert_eq!(served, whole_index(&served));
    assert!(served.find("  a2:").unwrap() < served.find("  a10:").unwrap());
    // After a change only that chart's part is rendered again; the whole still matches.
    let request = Request::builder()
        .method(Method::DELETE)
        .uri("/api/charts/b/1.0.0")
        .body(Body::empty())
        .unwrap();
    assert_eq!(server.send(request).await.0, StatusCode::OK);
    let after = server.index().await;
    assert_ne!(after, served);
    assert_eq!(after, whole_index(&after));
    // The gzip form is the same text.
    let response = server
        .app
        .clone()
        .oneshot(
            Request::get("/index.yaml")
                .header(header::ACCEPT_ENCODING, "gzip")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.headers()[header::CONTENT_ENCODING], "gzip");
    let length: usize = response.headers()[header::CONTENT_LENGTH]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    assert_eq!(body.len(), length);
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&body[..]), &mut text).unwrap();
    assert_eq!(text, after);
}

/// A package with a symbolic link: Helm's loader reads it as an empty file, but
/// `chartkit pull --untar`, `template` and `show` refuse it.
fn package_with_symlink(name: &str) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let chart_yaml = format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\n");
    let mut header = tar::Header::new_gnu();
    header.set_size(chart_yaml.len() as u64);
    header.set_mode(0o644);
    builder
        .append_data(
            &mut header,
            format!("{name}/Chart.yaml"),
            chart_yaml.as_bytes(),
        )
        .unwrap();
    let mut link = tar::Header::new_gnu();
    link.set_entry_type(tar::EntryType::Symlink);
    link.set_size(0);
    link.set_mode(0o777);
    builder
        .append_link(&mut link, format!("{name}/templates/x.yaml"), "/etc/passwd")
        .unwrap();
    builder.into_inner().unwrap().finish().unwrap()
}

#[tokio::test]
async fn a_package_helm_indexes_but_pull_untar_refuses_is_neither_stored_nor_served() {
    let server = server(Settings::default()).await;
    let linked = package_with_symlink("linked");
    let (status, body) = server.upload(&linked).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body.contains("archive entry `linked/templates/x.yaml` is a link"),
        "{body}"
    );
    assert!(server.stored().is_empty());
    // Copied in by hand, it is left out of the index with its reason, and not served.
    std::fs::write(server.dir.path().join("linked-1.0.0.tgz"), &linked).unwrap();
    let report = server.repo.sync().await.unwrap();
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    assert!(
        report.skipped[0]
            .1
            .contains("`linked/templates/x.yaml` is a link"),
        "{report:?}"
    );
    assert!(!server.index().await.contains("linked"));
    let (status, body) = server.get("/charts/linked-1.0.0.tgz").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body.contains("not served"), "{body}");
    assert!(body.contains("is a link"), "{body}");
}

#[tokio::test]
async fn force_replaces_a_package_and_its_provenance_as_chartmuseum_does() {
    let server = server(Settings::default()).await;
    let multipart_to = |uri: &str, parts: &[(&str, &[u8])]| {
        let (content_type, body) = multipart(parts);
        Request::post(uri)
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
            .unwrap()
    };
    let first = package("demo", "1.0.0", &[]);
    let first_prov = sign(&first, "demo", "1.0.0");
    let parts: [(&str, &[u8]); 2] = [("chart", &first), ("prov", &first_prov)];
    assert_eq!(server.upload_parts(&parts).await.0, StatusCode::CREATED);
    // The same .prov again: 409, and with ?force 201.
    let prov_to = |uri: &str| {
        Request::post(uri)
            .body(Body::from(first_prov.clone()))
            .unwrap()
    };
    assert_eq!(
        server.send(prov_to("/api/prov")).await.0,
        StatusCode::CONFLICT
    );
    assert_eq!(
        server.send(prov_to("/api/prov?force")).await.0,
        StatusCode::CREATED
    );
    // Other bytes for the version, with their own .prov.
    let second = package("demo", "1.0.0", &[("values.yaml", b"a: 2\n")]);
    let second_prov = sign(&second, "demo", "1.0.0");
    let parts: [(&str, &[u8]); 2] = [("chart", &second), ("prov", &second_prov)];
    let (status, _) = server.send(multipart_to("/api/charts", &parts)).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, body) = server
        .send(multipart_to("/api/charts?force=true", &parts))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, served) = server.get("/charts/demo-1.0.0.tgz.prov").await;
    assert_eq!(served.as_bytes(), &second_prov[..]);
}

#[tokio::test]
async fn a_form_upload_with_only_a_prov_field_stores_the_provenance_as_chartmuseum_does() {
    let server = server(Settings::default()).await;
    let chart = package("demo", "1.0.0", &[]);
    let prov = sign(&chart, "demo", "1.0.0");
    assert_eq!(server.upload(&chart).await.0, StatusCode::CREATED);
    let (status, body) = server.upload_parts(&[("prov", &prov)]).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(server.stored(), ["demo-1.0.0.tgz", "demo-1.0.0.tgz.prov"]);
    let (status, served) = server.get("/charts/demo-1.0.0.tgz.prov").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(served.as_bytes(), &prov[..]);
    // A form with neither field is still refused.
    let (status, body) = server.upload_parts(&[("unknown", &chart)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn form_field_names_given_are_taken_besides_chart_and_prov() {
    let server = server(Settings::default()).await;
    let chart = package("fields", "1.0.0", &[]);
    let prov = sign(&chart, "fields", "1.0.0");
    let (status, body) = server
        .upload_parts(&[("package", &chart), ("signature", &prov)])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        server.stored(),
        ["fields-1.0.0.tgz", "fields-1.0.0.tgz.prov"]
    );
    let other = package("usual", "1.0.0", &[]);
    assert_eq!(
        server.upload_parts(&[("chart", &other)]).await.0,
        StatusCode::CREATED
    );
    // Other names are not a chart.
    let (status, _) = server
        .upload_parts(&[("file", &package("stray", "1.0.0", &[]))])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
