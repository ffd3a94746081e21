//! Connecting through a kubeconfig to a sandbox serving HTTPS with a bearer token: the
//! kubeconfig's CA and token, then the same through --kube-ca-file, --kube-token and
//! --kube-apiserver with no kubeconfig at all.

use chartkit_cluster::{KubeOptions, KubeconfigSource};
use chartkit_sandbox::{Options, Sandbox};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};

async fn namespaces(client: kube::Client) -> Vec<String> {
    let api: Api<Namespace> = Api::all(client);
    api.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeconfig_and_flag_overrides_reach_a_tls_sandbox() {
    let sandbox = Sandbox::start(Options {
        tls: true,
        ..Options::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("config");
    std::fs::write(&kubeconfig, sandbox.kubeconfig()).unwrap();

    let options = KubeOptions {
        kubeconfig: KubeconfigSource::Search(vec![dir.path().join("absent"), kubeconfig]),
        namespace: Some("apps".into()),
        ..KubeOptions::default()
    };
    let connection = options.connect().await.unwrap();
    assert_eq!(connection.namespace, "apps");
    assert_eq!(connection.context.as_deref(), Some("chartkit-sandbox"));
    assert!(
        namespaces(connection.client)
            .await
            .contains(&"default".to_string())
    );

    let tls = sandbox.tls().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &tls.ca_pem).unwrap();
    let flags_only = KubeOptions {
        apiserver: Some(sandbox.url()),
        token: Some(tls.token.clone()),
        ca_file: Some(ca),
        ..KubeOptions::default()
    };
    let connection = flags_only.connect().await.unwrap();
    assert_eq!(connection.namespace, "default");
    assert!(
        namespaces(connection.client)
            .await
            .contains(&"kube-system".to_string())
    );

    // A wrong token is refused by the server, so the token really is what is sent.
    let wrong = KubeOptions {
        token: Some("wrong".into()),
        ..flags_only
    };
    let api: Api<Namespace> = Api::all(wrong.connect().await.unwrap().client);
    let error = api.list(&ListParams::default()).await.unwrap_err();
    assert!(
        matches!(&error, kube::Error::Api(s) if s.code == 401),
        "{error}"
    );
    sandbox.stop().await;
}
