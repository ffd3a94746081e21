//! Waiting for readiness against an in-process sandbox, whose simulated kubelet makes
//! pods ready after a delay or fail as their annotations ask.

use std::sync::Mutex;
use std::time::Duration;

use chartkit_cluster::apply::Applier;
use chartkit_cluster::discovery::Discovery;
use chartkit_cluster::manifest;
use chartkit_cluster::readiness::{self, Progress, State, WaitError};
use chartkit_sandbox::{Options, Sandbox, Settings};

fn options() -> Options {
    Options {
        settings: Settings {
            pod_ready_delay: Duration::from_millis(200),
            ..Settings::default()
        },
        ..Options::default()
    }
}

fn client(sandbox: &Sandbox) -> kube::Client {
    kube::Client::try_from(kube::Config::new(sandbox.url().parse().unwrap())).unwrap()
}

/// Records what the wait reported.
#[derive(Default)]
struct Recorder(Mutex<Vec<(String, State)>>);

impl Progress for Recorder {
    fn changed(&self, object: &str, state: &State) {
        self.0
            .lock()
            .unwrap()
            .push((object.to_string(), state.clone()));
    }
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_becomes_ready() {
    let sandbox = Sandbox::start(options()).await.unwrap();
    let client = client(&sandbox);
    let discovery = Discovery::new(client.clone());
    let applier = Applier::new(client.clone(), &discovery, "default");
    let objects = manifest::split(DEPLOYMENT).unwrap();
    applier.apply(&objects[0], false).await.unwrap();
    let target = applier.target(&objects[0]).await.unwrap();
    let recorder = Recorder::default();
    readiness::wait(
        &client,
        &[target],
        Duration::from_secs(30),
        false,
        &recorder,
    )
    .await
    .unwrap();
    let seen = recorder.0.lock().unwrap().clone();
    assert_eq!(
        seen.last(),
        Some(&("Deployment/web".to_string(), State::Ready)),
        "{seen:?}"
    );
    sandbox.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashlooping_pod_times_out_with_its_reason() {
    let sandbox = Sandbox::start(options()).await.unwrap();
    let client = client(&sandbox);
    let discovery = Discovery::new(client.clone());
    let applier = Applier::new(client.clone(), &discovery, "default");
    let objects = manifest::split(
        "apiVersion: v1
kind: Pod
metadata:
  name: crashy
  annotations: {sandbox.chartkit.dev/fail: crashloop}
spec:
  containers: [{name: app, image: busybox}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: fine}
",
    )
    .unwrap();
    let mut targets = Vec::new();
    for object in &objects {
        applier.apply(object, false).await.unwrap();
        targets.push(applier.target(object).await.unwrap());
    }
    let error = readiness::wait(
        &client,
        &targets,
        Duration::from_secs(3),
        false,
        &readiness::Quiet,
    )
    .await
    .unwrap_err();
    let WaitError::Timeout { pending, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].object, "Pod/crashy");
    assert!(
        pending[0]
            .reason
            .starts_with("container app: CrashLoopBackOff"),
        "{error}"
    );
    assert!(
        pending[0]
            .details
            .iter()
            .any(|d| d.starts_with("last warning: crashy BackOff")),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("timed out after 3s waiting for Pod/crashy: "),
        "{error}"
    );
    sandbox.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_job_ends_the_wait_when_waiting_for_jobs() {
    let sandbox = Sandbox::start(options()).await.unwrap();
    let client = client(&sandbox);
    let discovery = Discovery::new(client.clone());
    let applier = Applier::new(client.clone(), &discovery, "default");
    let objects = manifest::split(
        "apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: {sandbox.chartkit.dev/fail: job-fail, sandbox.chartkit.dev/run-duration: 100ms}
    spec:
      restartPolicy: Never
      containers: [{name: m, image: busybox}]
",
    )
    .unwrap();
    applier.apply(&objects[0], false).await.unwrap();
    let target = applier.target(&objects[0]).await.unwrap();
    let error = readiness::wait(
        &client,
        &[target],
        Duration::from_secs(30),
        true,
        &readiness::Quiet,
    )
    .await
    .unwrap_err();
    assert!(matches!(error, WaitError::Failed { .. }), "{error}");
    assert!(
        error.to_string().starts_with("Job/migrate: job failed"),
        "{error}"
    );
    sandbox.stop().await;
}
