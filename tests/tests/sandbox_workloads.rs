//! The sandbox's simulated controllers, seen through the real kubectl and helm:
//! Deployments roll out to ready pods, rolling updates stay within maxSurge and
//! maxUnavailable, Jobs complete or fail, crash loops show, deletions cascade, CRDs
//! become Established, and `helm install --wait` succeeds or times out.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};

fn out(command: &mut Command) -> String {
    String::from_utf8_lossy(&run_ok(command).stdout).into_owned()
}

/// Runs `kubectl` with `args` until its output satisfies `done`, or fails the test.
fn poll(
    sandbox: &SandboxProcess,
    ctx: &TestContext,
    args: &[&str],
    done: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let o = sandbox
            .kubectl(ctx, "")
            .expect("kubectl")
            .args(args)
            .output()
            .expect("run kubectl");
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        if done(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "kubectl {args:?} never got there; last output:\n{text}\n{}\nsandbox log:\n{}",
            String::from_utf8_lossy(&o.stderr),
            sandbox.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn deployment(name: &str, replicas: u32, image: &str, extra_annotations: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  strategy:
    type: RollingUpdate
    rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata:
      labels: {{app: {name}}}
      annotations: {{{extra_annotations}}}
    spec:
      containers:
      - name: app
        image: {image}
        ports: [{{name: http, containerPort: 8080}}]
"#
    )
}

#[test]
fn a_deployment_rolls_out_to_ready_pods() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut kubectl) = sandbox.kubectl(&ctx, "a_deployment_rolls_out_to_ready_pods") else {
        return;
    };
    let file = write_file(
        ctx.dir(),
        "web.yaml",
        &deployment("web", 2, "nginx:1.25", ""),
    );
    run_ok(kubectl.arg("apply").arg("-f").arg(&file));
    let status = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "rollout",
        "status",
        "deployment/web",
        "--timeout=60s",
    ]));
    assert!(
        status.contains("deployment \"web\" successfully rolled out"),
        "{status}"
    );
    let waited = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "wait",
        "--for=condition=Available",
        "deployment/web",
        "--timeout=30s",
    ]));
    assert_eq!(waited.trim(), "deployment.apps/web condition met");
    let pods = out(sandbox
        .kubectl(&ctx, "")
        .unwrap()
        .args(["get", "pods", "-l", "app=web"]));
    let rows: Vec<&str> = pods.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{pods}");
    for row in rows {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert!(cols[0].starts_with("web-"), "{pods}");
        assert_eq!(&cols[1..4], ["1/1", "Running", "0"], "{pods}");
    }
    // The status and conditions a real cluster reports.
    let d = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "get",
        "deployment",
        "web",
        "-o",
        "jsonpath={.status.replicas} {.status.updatedReplicas} {.status.readyReplicas} {.status.availableReplicas} {.status.conditions[?(@.type==\"Progressing\")].reason} {.status.conditions[?(@.type==\"Available\")].reason} {.metadata.annotations.deployment\\.kubernetes\\.io/revision}",
    ]));
    assert_eq!(
        d,
        "2 2 2 2 NewReplicaSetAvailable MinimumReplicasAvailable 1"
    );
    // Pods are scheduled, have IPs, and the kubelet's events are there.
    let ips = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "get",
        "pods",
        "-l",
        "app=web",
        "-o",
        "jsonpath={range .items[*]}{.spec.nodeName} {.status.podIP} {.status.containerStatuses[0].ready}{\"\\n\"}{end}",
    ]));
    for line in ips.lines() {
        assert!(line.starts_with("sandbox-node 10.244."), "{ips}");
        assert!(line.ends_with(" true"), "{ips}");
    }
    let events = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "get",
        "events",
        "-o",
        "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}",
    ]));
    for reason in [
        "ScalingReplicaSet",
        "SuccessfulCreate",
        "Scheduled",
        "Pulled",
        "Created",
        "Started",
    ] {
        assert!(
            events.lines().any(|l| l == reason),
            "no {reason} event in:\n{events}"
        );
    }
}

#[test]
fn a_rolling_update_stays_within_surge_and_unavailability() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut kubectl) = sandbox.kubectl(
        &ctx,
        "a_rolling_update_stays_within_surge_and_unavailability",
    ) else {
        return;
    };
    let file = write_file(
        ctx.dir(),
        "web.yaml",
        &deployment("web", 3, "nginx:1.25", ""),
    );
    run_ok(kubectl.arg("apply").arg("-f").arg(&file));
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "rollout",
        "status",
        "deployment/web",
        "--timeout=60s",
    ]));
    // Watch the status through the update.
    let mut watch = sandbox
        .kubectl(&ctx, "")
        .unwrap()
        .args([
            "get",
            "deployment",
            "web",
            "--watch",
            "-o",
            "jsonpath={.status.replicas} {.status.updatedReplicas} {.status.availableReplicas}{\"\\n\"}",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl watch");
    let stdout = watch.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<String>>()
    });
    std::thread::sleep(Duration::from_millis(500));
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "set",
        "image",
        "deployment/web",
        "app=nginx:1.26",
    ]));
    let status = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "rollout",
        "status",
        "deployment/web",
        "--timeout=60s",
    ]));
    assert!(status.contains("successfully rolled out"), "{status}");
    std::thread::sleep(Duration::from_millis(300));
    let _ = watch.kill();
    let _ = watch.wait();
    let lines = reader.join().expect("reader");
    let counts: Vec<Vec<i64>> = lines
        .iter()
        .map(|l| {
            l.split_whitespace()
                .map(|n| n.parse().unwrap_or(0))
                .collect()
        })
        .filter(|c: &Vec<i64>| c.len() == 3)
        .collect();
    assert!(counts.len() >= 3, "too few status changes seen: {lines:?}");
    // replicas never above 3 + maxSurge, available never below 3 - maxUnavailable.
    assert!(counts.iter().all(|c| c[0] <= 4), "{lines:?}");
    assert!(counts.iter().all(|c| c[2] >= 3), "{lines:?}");
    assert!(
        counts.iter().any(|c| c[0] == 4),
        "the surge was never used: {lines:?}"
    );
    assert_eq!(counts.last().unwrap(), &vec![3, 3, 3], "{lines:?}");
    // Two revisions; undo makes a third from the first template.
    let history =
        out(sandbox
            .kubectl(&ctx, "")
            .unwrap()
            .args(["rollout", "history", "deployment/web"]));
    assert!(
        history.lines().any(|l| l.trim_start().starts_with('1')),
        "{history}"
    );
    assert!(
        history.lines().any(|l| l.trim_start().starts_with('2')),
        "{history}"
    );
    run_ok(
        sandbox
            .kubectl(&ctx, "")
            .unwrap()
            .args(["rollout", "undo", "deployment/web"]),
    );
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "rollout",
        "status",
        "deployment/web",
        "--timeout=60s",
    ]));
    let image = poll(
        &sandbox,
        &ctx,
        &[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image} {.metadata.annotations.deployment\\.kubernetes\\.io/revision}",
        ],
        |t| t == "nginx:1.25 3",
    );
    assert_eq!(image, "nginx:1.25 3");
    // Scaling.
    run_ok(
        sandbox
            .kubectl(&ctx, "")
            .unwrap()
            .args(["scale", "deployment/web", "--replicas=5"]),
    );
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "rollout",
        "status",
        "deployment/web",
        "--timeout=60s",
    ]));
    let ready = poll(
        &sandbox,
        &ctx,
        &[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.status.readyReplicas}/{.status.replicas}",
        ],
        |t| t == "5/5",
    );
    assert_eq!(ready, "5/5");
    let rs = out(sandbox
        .kubectl(&ctx, "")
        .unwrap()
        .args(["get", "rs", "-l", "app=web", "-o", "name"]));
    assert_eq!(rs.lines().count(), 2, "{rs}");
}

#[test]
fn jobs_complete_or_fail_at_their_backoff_limit() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut kubectl) = sandbox.kubectl(&ctx, "jobs_complete_or_fail_at_their_backoff_limit")
    else {
        return;
    };
    let jobs = r#"apiVersion: batch/v1
kind: Job
metadata: {name: ok}
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, "true"]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: bad}
spec:
  backoffLimit: 1
  template:
    metadata:
      annotations: {sandbox.chartkit.dev/fail: job-fail}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
"#;
    let file = write_file(ctx.dir(), "jobs.yaml", jobs);
    run_ok(kubectl.arg("apply").arg("-f").arg(&file));
    let waited = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "wait",
        "--for=condition=complete",
        "job/ok",
        "--timeout=30s",
    ]));
    assert_eq!(waited.trim(), "job.batch/ok condition met");
    let ok = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "get",
        "job",
        "ok",
        "-o",
        "jsonpath={.status.succeeded} {.status.conditions[*].type} {.status.completionTime}",
    ]));
    assert!(ok.starts_with("2 SuccessCriteriaMet Complete 20"), "{ok}");
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "wait",
        "--for=condition=failed",
        "job/bad",
        "--timeout=30s",
    ]));
    let bad = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "get",
        "job",
        "bad",
        "-o",
        "jsonpath={.status.failed} {.status.conditions[?(@.type==\"Failed\")].reason}",
    ]));
    assert_eq!(bad, "2 BackoffLimitExceeded");
    let pods = out(sandbox
        .kubectl(&ctx, "")
        .unwrap()
        .args(["get", "pods", "-l", "job-name=ok"]));
    assert_eq!(pods.matches("Completed").count(), 2, "{pods}");
}

#[test]
fn a_crash_looping_pod_shows_crash_loop_back_off() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut kubectl) = sandbox.kubectl(&ctx, "a_crash_looping_pod_shows_crash_loop_back_off")
    else {
        return;
    };
    let pod = r#"apiVersion: v1
kind: Pod
metadata:
  name: crasher
  annotations: {sandbox.chartkit.dev/fail: crashloop}
spec:
  containers: [{name: app, image: busybox}]
"#;
    let file = write_file(ctx.dir(), "pod.yaml", pod);
    run_ok(kubectl.arg("apply").arg("-f").arg(&file));
    let table = poll(&sandbox, &ctx, &["get", "pods", "crasher"], |t| {
        t.contains("CrashLoopBackOff")
    });
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..3], ["crasher", "0/1", "CrashLoopBackOff"], "{table}");
    let restarts = poll(
        &sandbox,
        &ctx,
        &[
            "get",
            "pod",
            "crasher",
            "-o",
            "jsonpath={.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].lastState.terminated.exitCode}",
        ],
        |t| {
            t.split_whitespace()
                .next()
                .and_then(|n| n.parse::<i64>().ok())
                .is_some_and(|n| n >= 2)
        },
    );
    assert!(restarts.ends_with(" 1"), "{restarts}");
    let events = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "get",
        "events",
        "--field-selector",
        "involvedObject.name=crasher",
        "-o",
        "jsonpath={range .items[*]}{.type} {.reason}{\"\\n\"}{end}",
    ]));
    assert!(events.lines().any(|l| l == "Warning BackOff"), "{events}");
}

#[test]
fn deletions_cascade_through_namespaces_and_owners() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut kubectl) =
        sandbox.kubectl(&ctx, "deletions_cascade_through_namespaces_and_owners")
    else {
        return;
    };
    let ns = write_file(
        ctx.dir(),
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: doomed}\n",
    );
    run_ok(kubectl.arg("apply").arg("-f").arg(&ns));
    let file = write_file(ctx.dir(), "web.yaml", &deployment("web", 2, "nginx", ""));
    run_ok(
        sandbox
            .kubectl(&ctx, "")
            .unwrap()
            .args(["-n", "doomed", "apply", "-f"])
            .arg(&file),
    );
    let svc = write_file(
        ctx.dir(),
        "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80, targetPort: http}]\n",
    );
    run_ok(
        sandbox
            .kubectl(&ctx, "")
            .unwrap()
            .args(["-n", "doomed", "apply", "-f"])
            .arg(&svc),
    );
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "-n",
        "doomed",
        "rollout",
        "status",
        "deployment/web",
        "--timeout=60s",
    ]));
    // Every namespace has its default ServiceAccount and root CA.
    let sa = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "-n",
        "doomed",
        "get",
        "serviceaccount,configmap",
        "-o",
        "name",
    ]));
    assert!(
        sa.contains("serviceaccount/default") && sa.contains("configmap/kube-root-ca.crt"),
        "{sa}"
    );
    // The Service got a cluster IP and its endpoints follow the ready pods.
    let svc = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "-n",
        "doomed",
        "get",
        "service",
        "web",
        "-o",
        "jsonpath={.spec.clusterIP}",
    ]));
    // Anywhere in the service range 10.96.0.0/12.
    let octets: Vec<u8> = svc.split('.').filter_map(|o| o.parse().ok()).collect();
    assert!(
        octets.len() == 4 && octets[0] == 10 && (96..112).contains(&octets[1]),
        "{svc}"
    );
    let slices = poll(
        &sandbox,
        &ctx,
        &[
            "-n",
            "doomed",
            "get",
            "endpointslices",
            "-l",
            "kubernetes.io/service-name=web",
            "-o",
            "jsonpath={range .items[*].endpoints[*]}{.conditions.ready} {end}",
        ],
        |t| t == "true true ",
    );
    assert_eq!(slices, "true true ");
    let deleted = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "delete",
        "namespace",
        "doomed",
        "--timeout=60s",
    ]));
    assert_eq!(deleted.trim(), "namespace \"doomed\" deleted");
    let gone = sandbox
        .kubectl(&ctx, "")
        .unwrap()
        .args(["get", "namespace", "doomed"])
        .output()
        .unwrap();
    assert!(!gone.status.success());
    assert!(String::from_utf8_lossy(&gone.stderr).contains("namespaces \"doomed\" not found"));

    // Background: the ReplicaSet and pods go after the Deployment.
    run_ok(
        sandbox
            .kubectl(&ctx, "")
            .unwrap()
            .args(["apply", "-f"])
            .arg(&file),
    );
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "rollout",
        "status",
        "deployment/web",
        "--timeout=60s",
    ]));
    run_ok(
        sandbox
            .kubectl(&ctx, "")
            .unwrap()
            .args(["delete", "deployment", "web"]),
    );
    poll(
        &sandbox,
        &ctx,
        &["get", "rs,pods", "-l", "app=web", "-o", "name"],
        str::is_empty,
    );

    // Foreground: by the time the Deployment is gone, so are its dependents.
    run_ok(
        sandbox
            .kubectl(&ctx, "")
            .unwrap()
            .args(["apply", "-f"])
            .arg(&file),
    );
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "rollout",
        "status",
        "deployment/web",
        "--timeout=60s",
    ]));
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "delete",
        "deployment",
        "web",
        "--cascade=foreground",
        "--timeout=60s",
    ]));
    let left = out(sandbox
        .kubectl(&ctx, "")
        .unwrap()
        .args(["get", "rs,pods", "-l", "app=web", "-o", "name"]));
    assert_eq!(left, "", "dependents outlived a foreground deletion");

    // Orphan: the ReplicaSet and pods stay, without the owner reference.
    run_ok(
        sandbox
            .kubectl(&ctx, "")
            .unwrap()
            .args(["apply", "-f"])
            .arg(&file),
    );
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "rollout",
        "status",
        "deployment/web",
        "--timeout=60s",
    ]));
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "delete",
        "deployment",
        "web",
        "--cascade=orphan",
    ]));
    let rs = poll(
        &sandbox,
        &ctx,
        &[
            "get",
            "rs",
            "-l",
            "app=web",
            "-o",
            "jsonpath={range .items[*]}{.metadata.name} {.metadata.ownerReferences}{\"\\n\"}{end}",
        ],
        |t| !t.is_empty() && t.lines().all(|l| l.trim_end().split(' ').count() == 1),
    );
    assert_eq!(rs.lines().count(), 1, "{rs}");
    std::thread::sleep(Duration::from_millis(500));
    let pods = out(sandbox
        .kubectl(&ctx, "")
        .unwrap()
        .args(["get", "pods", "-l", "app=web", "-o", "name"]));
    assert_eq!(pods.lines().count(), 2, "{pods}");
}

#[test]
fn a_crd_becomes_established_and_lists_its_resources_with_its_columns() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut kubectl) = sandbox.kubectl(
        &ctx,
        "a_crd_becomes_established_and_lists_its_resources_with_its_columns",
    ) else {
        return;
    };
    let crd = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
              color: {type: string, default: blue}
"#;
    let file = write_file(ctx.dir(), "crd.yaml", crd);
    run_ok(kubectl.arg("apply").arg("-f").arg(&file));
    let est = out(sandbox.kubectl(&ctx, "").unwrap().args([
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
        "--timeout=30s",
    ]));
    assert_eq!(
        est.trim(),
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com condition met"
    );
    let w = write_file(
        ctx.dir(),
        "w.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: small}\nspec: {size: 2}\n",
    );
    run_ok(
        sandbox
            .kubectl(&ctx, "")
            .unwrap()
            .arg("apply")
            .arg("-f")
            .arg(&w),
    );
    let table = out(sandbox.kubectl(&ctx, "").unwrap().args(["get", "widgets"]));
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["NAME", "SIZE", "COLOR"], "{table}");
    assert_eq!(lines[1], ["small", "2", "blue"], "{table}");
    // Schema validation answers as the API server does.
    let bad = write_file(
        ctx.dir(),
        "bad.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: bad}\nspec: {size: 0}\n",
    );
    let o = sandbox
        .kubectl(&ctx, "")
        .unwrap()
        .arg("apply")
        .arg("-f")
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("The Widget \"bad\" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"),
        "{err}"
    );
    // Deleting the CRD takes its resources along.
    run_ok(sandbox.kubectl(&ctx, "").unwrap().args([
        "delete",
        "crd",
        "widgets.example.com",
        "--timeout=30s",
    ]));
    let o = sandbox
        .kubectl(&ctx, "")
        .unwrap()
        .args(["get", "widgets"])
        .output()
        .unwrap();
    assert!(
        !o.status.success(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

fn chart(ctx: &TestContext, dir: &str, annotations: &str) -> std::path::PathBuf {
    let root = ctx.path(dir);
    write_file(
        &root,
        "Chart.yaml",
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    );
    write_file(
        &root,
        "templates/deployment.yaml",
        &deployment("{{ .Release.Name }}", 2, "nginx:1.25", annotations),
    );
    write_file(
        &root,
        "templates/service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  selector: {app: {{ .Release.Name }}}\n  ports: [{port: 80, targetPort: http}]\n",
    );
    root
}

#[test]
fn helm_install_wait_succeeds_and_times_out_on_a_crash_loop() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut helm) = sandbox.helm(
        &ctx,
        "helm_install_wait_succeeds_and_times_out_on_a_crash_loop",
    ) else {
        return;
    };
    let good = chart(&ctx, "good", "");
    let o = out(helm
        .args(["install", "web"])
        .arg(&good)
        .args(["--wait", "--timeout", "60s"]));
    assert!(o.contains("STATUS: deployed"), "{o}");
    let bad = chart(&ctx, "bad", "sandbox.chartkit.dev/fail: crashloop");
    let started = Instant::now();
    let o = sandbox
        .helm(&ctx, "")
        .unwrap()
        .args(["install", "crash"])
        .arg(&bad)
        .args(["--wait", "--timeout", "10s"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(started.elapsed() >= Duration::from_secs(9));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("resource Deployment/default/crash not ready. status: InProgress"),
        "{err}"
    );
    assert!(err.contains("context deadline exceeded"), "{err}");
    let status = out(sandbox
        .helm(&ctx, "")
        .unwrap()
        .args(["status", "crash", "-o", "json"]));
    assert!(status.contains("\"status\":\"failed\""), "{status}");
}
