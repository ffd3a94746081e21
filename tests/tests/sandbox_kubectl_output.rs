//! What the real kubectl prints from the sandbox: the API server's table columns and
//! cells for each type (compared with what kubectl prints against a real 1.34 cluster,
//! ages aside), and the error texts of bad requests.

use std::process::{Command, Output};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};

/// Columns whose cells are ages, which are replaced by `<age>` before comparing.
const AGE_COLUMNS: &[&str] = &["AGE", "LAST SEEN", "FIRST SEEN", "DURATION", "CREATED AT"];

/// A kubectl table as cells: the header's words decide where each column starts (kubectl
/// pads columns to their widest cell), and ages are replaced so the comparison is stable.
fn cells(text: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let Some(header) = lines.first() else {
        return Vec::new();
    };
    let bytes = header.as_bytes();
    let mut starts = vec![0];
    for i in 2..bytes.len() {
        if bytes[i] != b' ' && bytes[i - 1] == b' ' && bytes[i - 2] == b' ' {
            starts.push(i);
        }
    }
    let names: Vec<String> = split_at(header, &starts);
    lines
        .iter()
        .enumerate()
        .map(|(row, line)| {
            let mut cells = split_at(line, &starts);
            if row > 0 {
                for (i, cell) in cells.iter_mut().enumerate() {
                    let column = names.get(i).map(String::as_str).unwrap_or("");
                    if AGE_COLUMNS.contains(&column) && !cell.is_empty() && cell != "<none>" {
                        *cell = "<age>".into();
                    }
                    if column == "RESTARTS"
                        && let Some((count, _)) = cell.split_once(" (")
                    {
                        *cell = format!("{count} (<age> ago)");
                    }
                }
            }
            cells
        })
        .collect()
}

fn split_at(line: &str, starts: &[usize]) -> Vec<String> {
    starts
        .iter()
        .enumerate()
        .map(|(i, &start)| {
            let end = starts
                .get(i + 1)
                .copied()
                .unwrap_or(line.len())
                .min(line.len());
            line.get(start.min(line.len())..end)
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .collect()
}

/// A table as kubectl lays one out (its tabwriter: cells padded by three spaces to the
/// widest in their column, the last column unpadded), from rows of `|`-separated cells.
fn render(rows: &[&str]) -> String {
    let rows: Vec<Vec<&str>> = rows.iter().map(|r| r.split('|').collect()).collect();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                line.push_str(&" ".repeat(widths[i] - cell.len() + 3));
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Asserts kubectl printed the table a real cluster prints (rows of `|`-separated cells),
/// ages aside: the header line must match exactly, and every cell.
fn assert_table(out: &Output, rows: &[&str]) {
    let expected = render(rows);
    let got = String::from_utf8_lossy(&out.stdout).to_string();
    let got_header = got.lines().next().unwrap_or("").trim_end();
    let want_header = expected.lines().next().unwrap_or("").trim_end();
    assert_eq!(
        got_header, want_header,
        "header of:\n{got}\nexpected:\n{expected}"
    );
    assert_eq!(
        cells(&got),
        cells(&expected),
        "got:\n{got}\nexpected:\n{expected}"
    );
}

struct Kubectl<'a> {
    sandbox: &'a SandboxProcess,
    ctx: &'a TestContext,
}

impl Kubectl<'_> {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.sandbox.kubectl(self.ctx, "").expect("kubectl");
        c.args(args);
        c
    }

    fn ok(&self, args: &[&str]) -> Output {
        run_ok(&mut self.cmd(args))
    }

    fn fails(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().expect("run kubectl");
        assert!(
            !out.status.success(),
            "kubectl {args:?} succeeded:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).trim_end().to_string()
    }

    fn apply(&self, name: &str, manifest: &str) {
        let path = write_file(self.ctx.dir(), name, manifest);
        self.ok(&["create", "-f", path.to_str().expect("utf-8 path")]);
    }

    /// Creates a namespace from a manifest (the imperative `kubectl create namespace`
    /// sends protobuf).
    fn namespace(&self, name: &str) {
        self.apply(
            &format!("ns-{name}.yaml"),
            &format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n"),
        );
    }

    fn status(&self, kind: &str, name: &str, ns: &str, status: impl AsRef<str>) {
        let status = status.as_ref();
        self.ok(&[
            "patch",
            kind,
            name,
            "-n",
            ns,
            "--subresource=status",
            "--type=merge",
            "-p",
            status,
        ]);
    }
}

/// Now in RFC 3339 (UTC, seconds), so a restart shows a short age like a fresh one.
fn rfc3339_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn start(test: &str) -> Option<(TestContext, SandboxProcess)> {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    sandbox.kubectl(&ctx, test)?;
    Some((ctx, sandbox))
}

#[test]
fn nodes_namespaces_and_services_print_as_a_real_cluster_prints_them() {
    let Some((ctx, sandbox)) =
        start("nodes_namespaces_and_services_print_as_a_real_cluster_prints_them")
    else {
        return;
    };
    let k = Kubectl {
        sandbox: &sandbox,
        ctx: &ctx,
    };
    let version = String::from_utf8_lossy(
        &k.ok(&[
            "get",
            "node",
            "sandbox-node",
            "-o",
            "jsonpath={.status.nodeInfo.kubeletVersion}",
        ])
        .stdout,
    )
    .to_string();
    let node_row = format!("sandbox-node|Ready|control-plane|5s|{version}");
    assert_table(
        &k.ok(&["get", "node", "sandbox-node"]),
        &["NAME|STATUS|ROLES|AGE|VERSION", &node_row],
    );
    let wide_row =
        format!("{node_row}|127.0.0.1|<none>|chartkit sandbox|<unknown>|sandbox://simulated");
    assert_table(
        &k.ok(&["get", "node", "sandbox-node", "-o", "wide"]),
        &[
            "NAME|STATUS|ROLES|AGE|VERSION|INTERNAL-IP|EXTERNAL-IP|OS-IMAGE|KERNEL-VERSION|CONTAINER-RUNTIME",
            &wide_row,
        ],
    );
    assert_table(
        &k.ok(&["get", "namespaces", "default", "kube-system"]),
        &[
            "NAME|STATUS|AGE",
            "default|Active|5s",
            "kube-system|Active|5s",
        ],
    );

    k.namespace("snap");
    k.apply(
        "services.yaml",
        r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: snap, labels: {snap: "yes"}}
spec: {clusterIP: 10.96.100.10, selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: np, namespace: snap, labels: {snap: "yes"}}
spec:
  type: NodePort
  clusterIP: 10.96.100.11
  selector: {app: web, tier: front}
  ports:
  - {name: http, port: 80, nodePort: 30080}
  - {name: dns, port: 53, protocol: UDP, nodePort: 30053}
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: snap, labels: {snap: "yes"}}
spec: {type: LoadBalancer, clusterIP: 10.96.100.12, ports: [{port: 443, nodePort: 30443}]}
---
apiVersion: v1
kind: Service
metadata: {name: headless, namespace: snap, labels: {snap: "yes"}}
spec: {clusterIP: None, ports: [{port: 5432}]}
---
apiVersion: v1
kind: Service
metadata: {name: ext, namespace: snap, labels: {snap: "yes"}}
spec: {type: ExternalName, externalName: db.example.com}
"#,
    );
    // The simulated cloud gives a LoadBalancer the first free address of its range.
    k.ok(&[
        "wait",
        "-n",
        "snap",
        "--for=jsonpath={.status.loadBalancer.ingress[0].ip}=172.18.255.200",
        "service/lb",
        "--timeout=30s",
    ]);
    assert_table(
        &k.ok(&["get", "services", "-n", "snap", "-l", "snap=yes"]),
        &[
            "NAME|TYPE|CLUSTER-IP|EXTERNAL-IP|PORT(S)|AGE",
            "ext|ExternalName|<none>|db.example.com|<none>|5s",
            "headless|ClusterIP|None|<none>|5432/TCP|5s",
            "lb|LoadBalancer|10.96.100.12|172.18.255.200|443:30443/TCP|5s",
            "np|NodePort|10.96.100.11|<none>|80:30080/TCP,53:30053/UDP|5s",
            "web|ClusterIP|10.96.100.10|<none>|80/TCP|5s",
        ],
    );
    assert_table(
        &k.ok(&["get", "svc", "web", "np", "-n", "snap", "-o", "wide"]),
        &[
            "NAME|TYPE|CLUSTER-IP|EXTERNAL-IP|PORT(S)|AGE|SELECTOR",
            "web|ClusterIP|10.96.100.10|<none>|80/TCP|5s|app=web",
            "np|NodePort|10.96.100.11|<none>|80:30080/TCP,53:30053/UDP|5s|app=web,tier=front",
        ],
    );
    // -A adds NAMESPACE from each row's object metadata; --show-labels and -L read labels.
    assert_table(
        &k.ok(&[
            "get",
            "svc",
            "-A",
            "-l",
            "snap=yes",
            "--sort-by=.metadata.name",
            "-L",
            "snap",
        ]),
        &[
            "NAMESPACE|NAME|TYPE|CLUSTER-IP|EXTERNAL-IP|PORT(S)|AGE|SNAP",
            "snap|ext|ExternalName|<none>|db.example.com|<none>|5s|yes",
            "snap|headless|ClusterIP|None|<none>|5432/TCP|5s|yes",
            "snap|lb|LoadBalancer|10.96.100.12|172.18.255.200|443:30443/TCP|5s|yes",
            "snap|np|NodePort|10.96.100.11|<none>|80:30080/TCP,53:30053/UDP|5s|yes",
            "snap|web|ClusterIP|10.96.100.10|<none>|80/TCP|5s|yes",
        ],
    );
    assert_table(
        &k.ok(&["get", "svc", "ext", "-n", "snap", "--show-labels"]),
        &[
            "NAME|TYPE|CLUSTER-IP|EXTERNAL-IP|PORT(S)|AGE|LABELS",
            "ext|ExternalName|<none>|db.example.com|<none>|5s|snap=yes",
        ],
    );
}

#[test]
fn workloads_print_as_a_real_cluster_prints_them() {
    let Some((ctx, sandbox)) = start("workloads_print_as_a_real_cluster_prints_them") else {
        return;
    };
    let k = Kubectl {
        sandbox: &sandbox,
        ctx: &ctx,
    };
    k.namespace("snap");
    // Pods bound to a node no kubelet runs, so their status is only what is patched in.
    k.apply(
        "pods.yaml",
        r#"
apiVersion: v1
kind: Pod
metadata: {name: run, namespace: snap, labels: {snap: "yes"}}
spec: {nodeName: node-b, containers: [{name: c, image: nginx:1.27}]}
---
apiVersion: v1
kind: Pod
metadata: {name: crash, namespace: snap, labels: {snap: "yes"}}
spec: {nodeName: node-b, containers: [{name: c, image: nginx:1.27}, {name: d, image: busybox:1.36}]}
---
apiVersion: v1
kind: Pod
metadata: {name: init, namespace: snap, labels: {snap: "yes"}}
spec:
  nodeName: node-b
  initContainers: [{name: i, image: busybox:1.36}]
  containers: [{name: c, image: nginx:1.27}]
---
apiVersion: v1
kind: Pod
metadata: {name: done, namespace: snap, labels: {snap: "yes"}}
spec: {nodeName: node-b, restartPolicy: Never, containers: [{name: c, image: busybox:1.36}]}
---
apiVersion: v1
kind: Pod
metadata: {name: waiting, namespace: snap, labels: {snap: "yes"}}
spec: {nodeName: node-b, containers: [{name: c, image: nginx:1.27}]}
"#,
    );
    k.status(
        "pod",
        "run",
        "snap",
        r#"{"status": {"phase": "Running", "podIP": "10.244.0.5", "podIPs": [{"ip": "10.244.0.5"}],
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "c", "image": "nginx:1.27", "imageID": "", "ready": true,
              "restartCount": 2, "started": true, "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}},
              "lastState": {"terminated": {"exitCode": 1, "finishedAt": "NOW"}}}]}}"#
            .replace("NOW", &rfc3339_now()),
    );
    k.status(
        "pod",
        "crash",
        "snap",
        r#"{"status": {"phase": "Running", "containerStatuses": [
            {"name": "c", "image": "nginx:1.27", "imageID": "", "ready": true, "restartCount": 0,
             "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}},
            {"name": "d", "image": "busybox:1.36", "imageID": "", "ready": false, "restartCount": 5,
             "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}}"#,
    );
    k.status(
        "pod",
        "init",
        "snap",
        r#"{"status": {"phase": "Pending", "initContainerStatuses": [
            {"name": "i", "image": "busybox:1.36", "imageID": "", "ready": false, "restartCount": 0,
             "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}}]}}"#,
    );
    k.status(
        "pod",
        "done",
        "snap",
        r#"{"status": {"phase": "Succeeded", "containerStatuses": [
            {"name": "c", "image": "busybox:1.36", "imageID": "", "ready": false, "restartCount": 0,
             "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}}"#,
    );
    assert_table(
        &k.ok(&["get", "pods", "-n", "snap", "-l", "snap=yes"]),
        &[
            "NAME|READY|STATUS|RESTARTS|AGE",
            "crash|1/2|CrashLoopBackOff|5|5s",
            "done|0/1|Completed|0|5s",
            "init|0/1|Init:0/1|0|5s",
            "run|1/1|Running|2 (5s ago)|5s",
            "waiting|0/1|Pending|0|5s",
        ],
    );
    assert_table(
        &k.ok(&["get", "pod", "run", "waiting", "-n", "snap", "-o", "wide"]),
        &[
            "NAME|READY|STATUS|RESTARTS|AGE|IP|NODE|NOMINATED NODE|READINESS GATES",
            "run|1/1|Running|2 (5s ago)|5s|10.244.0.5|node-b|<none>|<none>",
            "waiting|0/1|Pending|0|5s|<none>|node-b|<none>|<none>",
        ],
    );
    // A running pod being deleted waits for its kubelet: Terminating.
    k.ok(&["delete", "pod", "run", "-n", "snap", "--wait=false"]);
    assert_table(
        &k.ok(&["get", "pod", "run", "-n", "snap"]),
        &[
            "NAME|READY|STATUS|RESTARTS|AGE",
            "run|1/1|Terminating|2 (5s ago)|5s",
        ],
    );

    // Replica counts of zero read the same with or without controllers.
    k.apply(
        "workloads.yaml",
        r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: snap}
spec:
  replicas: 0
  selector: {matchLabels: {app: web, tier: front}}
  template:
    metadata: {labels: {app: web, tier: front}}
    spec: {containers: [{name: web, image: nginx:1.27}, {name: sidecar, image: busybox:1.36}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: snap}
spec:
  replicas: 0
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres:17}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: snap}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {nodeSelector: {pool: none}, containers: [{name: agent, image: busybox:1.36}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: snap}
spec:
  schedule: "0 0 30 2 *"
  timeZone: Etc/UTC
  suspend: true
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: job, image: busybox:1.36}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: snap}
spec:
  suspend: true
  template:
    spec: {restartPolicy: Never, containers: [{name: job, image: busybox:1.36}]}
"#,
    );
    assert_table(
        &k.ok(&["get", "deployments", "-n", "snap"]),
        &["NAME|READY|UP-TO-DATE|AVAILABLE|AGE", "web|0/0|0|0|5s"],
    );
    assert_table(
        &k.ok(&["get", "deploy", "web", "-n", "snap", "-o", "wide"]),
        &[
            "NAME|READY|UP-TO-DATE|AVAILABLE|AGE|CONTAINERS|IMAGES|SELECTOR",
            "web|0/0|0|0|5s|web,sidecar|nginx:1.27,busybox:1.36|app=web,tier=front",
        ],
    );
    assert_table(
        &k.ok(&["get", "statefulsets", "-n", "snap", "-o", "wide"]),
        &[
            "NAME|READY|AGE|CONTAINERS|IMAGES",
            "db|0/0|5s|db|postgres:17",
        ],
    );
    assert_table(
        &k.ok(&["get", "daemonsets", "-n", "snap"]),
        &[
            "NAME|DESIRED|CURRENT|READY|UP-TO-DATE|AVAILABLE|NODE SELECTOR|AGE",
            "agent|0|0|0|0|0|pool=none|5s",
        ],
    );
    assert_table(
        &k.ok(&["get", "cronjobs", "-n", "snap"]),
        &[
            "NAME|SCHEDULE|TIMEZONE|SUSPEND|ACTIVE|LAST SCHEDULE|AGE",
            "nightly|0 0 30 2 *|Etc/UTC|True|0|<none>|5s",
        ],
    );
    k.status(
        "job",
        "once",
        "snap",
        r#"{"status": {"succeeded": 1, "startTime": "2024-01-01T00:00:00Z",
            "completionTime": "2024-01-01T00:00:07Z",
            "conditions": [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]}}"#,
    );
    let jobs = k.ok(&["get", "jobs", "once", "-n", "snap"]);
    assert_table(
        &jobs,
        &[
            "NAME|STATUS|COMPLETIONS|DURATION|AGE",
            "once|Complete|1/1|7s|5s",
        ],
    );
    assert!(
        String::from_utf8_lossy(&jobs.stdout).contains(" 7s "),
        "the duration is the job's own"
    );
}

#[test]
fn config_networking_events_and_custom_resources_print_as_a_real_cluster_prints_them() {
    let Some((ctx, sandbox)) =
        start("config_networking_events_and_custom_resources_print_as_a_real_cluster_prints_them")
    else {
        return;
    };
    let k = Kubectl {
        sandbox: &sandbox,
        ctx: &ctx,
    };
    k.namespace("snap");
    k.namespace("snap-events");
    k.apply(
        "config.yaml",
        r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: snap, labels: {snap: "yes"}}
data: {a: "1", b: "2"}
binaryData: {c: AAE=}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: empty, namespace: snap, labels: {snap: "yes"}}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: snap, labels: {snap: "yes"}}
stringData: {user: admin, password: hunter2}
---
apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: snap, labels: {snap: "yes"}}
type: kubernetes.io/tls
data: {tls.crt: "", tls.key: ""}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: snap}
spec:
  ingressClassName: nginx
  tls: [{hosts: [a.example.com], secretName: tls}]
  rules:
  - host: a.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
  - host: b.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: snap}
spec:
  defaultBackend: {service: {name: web, port: {number: 80}}}
---
apiVersion: v1
kind: Event
metadata: {name: web.17a, namespace: snap-events}
involvedObject: {kind: Pod, name: web, namespace: snap-events, fieldPath: "spec.containers{c}"}
reason: Pulled
message: Container image "nginx:1.27" already present on machine
type: Normal
source: {component: kubelet, host: node-b}
firstTimestamp: "2024-01-01T00:00:00Z"
lastTimestamp: "2024-01-02T00:00:00Z"
count: 3
"#,
    );
    assert_table(
        &k.ok(&["get", "configmaps", "-n", "snap", "-l", "snap=yes"]),
        &["NAME|DATA|AGE", "empty|0|5s", "settings|3|5s"],
    );
    assert_table(
        &k.ok(&["get", "secrets", "-n", "snap", "-l", "snap=yes"]),
        &[
            "NAME|TYPE|DATA|AGE",
            "creds|Opaque|2|5s",
            "tls|kubernetes.io/tls|2|5s",
        ],
    );
    assert_table(
        &k.ok(&["get", "ingresses", "-n", "snap"]),
        &[
            "NAME|CLASS|HOSTS|ADDRESS|PORTS|AGE",
            "plain|<none>|*||80|5s",
            "web|nginx|a.example.com,b.example.com||80, 443|5s",
        ],
    );
    assert_table(
        &k.ok(&["get", "events", "-n", "snap-events"]),
        &[
            "LAST SEEN|TYPE|REASON|OBJECT|MESSAGE",
            "5s|Normal|Pulled|pod/web|Container image \"nginx:1.27\" already present on machine",
        ],
    );
    assert_table(
        &k.ok(&["get", "events", "-n", "snap-events", "-o", "wide"]),
        &[
            "LAST SEEN|TYPE|REASON|OBJECT|SUBOBJECT|SOURCE|MESSAGE|FIRST SEEN|COUNT|NAME",
            "5s|Normal|Pulled|pod/web|spec.containers{c}|kubelet, node-b|Container image \"nginx:1.27\" already present on machine|5s|3|web.17a",
        ],
    );

    k.apply(
        "crd.yaml",
        r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Shiny, type: boolean, jsonPath: .spec.shiny, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
"#,
    );
    assert_table(
        &k.ok(&["get", "crd", "widgets.example.com"]),
        &[
            "NAME|CREATED AT",
            "widgets.example.com|2026-01-01T00:00:00Z",
        ],
    );
    let created =
        String::from_utf8_lossy(&k.ok(&["get", "crd", "widgets.example.com"]).stdout).to_string();
    let stamp = created
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("");
    assert!(
        stamp.ends_with('Z') && stamp.contains('T'),
        "CREATED AT is a timestamp: {created}"
    );
    // The type is served once the CRD is Established; kubectl learned the API's types
    // (and cached them) before it existed, so its cache must pick the new type up.
    let served = (0..100).any(|_| {
        let ok = k
            .cmd(&["get", "widgets", "-n", "snap"])
            .output()
            .expect("kubectl")
            .status
            .success();
        if !ok {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        ok
    });
    if !served {
        // Establishing CRDs is the CRD controller's work; without it there is no type.
        eprintln!("note: widgets.example.com was never served: custom resource tables not checked");
        return;
    }
    k.apply(
        "widget.yaml",
        r#"
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: snap}
spec: {size: 3, color: blue, shiny: true}
"#,
    );
    assert_table(
        &k.ok(&["get", "widgets", "-n", "snap"]),
        &["NAME|SIZE|COLOR|READY|AGE", "w1|3|blue||5s"],
    );
    assert_table(
        &k.ok(&["get", "wd", "-n", "snap", "-o", "wide"]),
        &["NAME|SIZE|COLOR|READY|SHINY|AGE", "w1|3|blue||true|5s"],
    );
}

#[test]
fn bad_requests_fail_with_the_api_servers_words() {
    let Some((ctx, sandbox)) = start("bad_requests_fail_with_the_api_servers_words") else {
        return;
    };
    let k = Kubectl {
        sandbox: &sandbox,
        ctx: &ctx,
    };
    assert_eq!(
        k.fails(&["get", "nosuchkind"]),
        "error: the server doesn't have a resource type \"nosuchkind\""
    );
    let bad = write_file(
        ctx.dir(),
        "bad-name.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\ndata: {a: b}\n",
    );
    assert_eq!(
        k.fails(&["create", "-f", bad.to_str().unwrap()]),
        "The ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    );
    let bad_label = write_file(
        ctx.dir(),
        "bad-label.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok, labels: {\"a/b/c\": \"-x\"}}\n",
    );
    let err = k.fails(&["create", "-f", bad_label.to_str().unwrap()]);
    assert!(
        err.starts_with("The ConfigMap \"ok\" is invalid: \n* metadata.labels: Invalid value: \"a/b/c\": a qualified name must consist of")
            || err.starts_with("The ConfigMap \"ok\" is invalid: [metadata.labels: Invalid value: \"a/b/c\""),
        "{err}"
    );
    assert!(
        err.contains(
            "metadata.labels: Invalid value: \"-x\": a valid label must be an empty string"
        ),
        "{err}"
    );

    // A replace from a stale copy conflicts.
    k.apply(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"1\"}\n",
    );
    let stale = k.ok(&["get", "configmap", "cm", "-o", "yaml"]);
    k.ok(&[
        "patch",
        "configmap",
        "cm",
        "--type=merge",
        "-p",
        r#"{"data": {"a": "2"}}"#,
    ]);
    let stale_path = write_file(
        ctx.dir(),
        "stale.yaml",
        &String::from_utf8_lossy(&stale.stdout),
    );
    let path = stale_path.to_str().unwrap();
    assert_eq!(
        k.fails(&["replace", "-f", path]),
        format!(
            "Error from server (Conflict): error when replacing \"{path}\": Operation cannot be fulfilled on configmaps \"cm\": the object has been modified; please apply your changes to the latest version and try again"
        )
    );

    assert_eq!(
        k.fails(&["get", "pods", "-l", "bad selector!"]),
        "Error from server (BadRequest): Unable to find \"/v1, Resource=pods\" that match label selector \"bad selector!\", field selector \"\": unable to parse requirement: found 'selector', expected: in, notin, =, ==, !=, gt, lt"
    );
    assert_eq!(
        k.fails(&["get", "pods", "--field-selector", "spec.nope=x"]),
        "Error from server (BadRequest): Unable to find \"/v1, Resource=pods\" that match label selector \"\", field selector \"spec.nope=x\": field label not supported: spec.nope"
    );
    assert_eq!(
        k.fails(&["get", "configmap", "missing"]),
        "Error from server (NotFound): configmaps \"missing\" not found"
    );
    // Bodies the decoder refuses, sent as they are.
    let truncated = write_file(
        ctx.dir(),
        "truncated.json",
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x""#,
    );
    assert_eq!(
        k.fails(&[
            "create",
            "--raw",
            "/api/v1/namespaces/default/configmaps",
            "-f",
            truncated.to_str().unwrap()
        ]),
        "Error from server (BadRequest): the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"apiVersion\": \"v1\", \"kind\": \" ...)"
    );
    let other_kind = write_file(
        ctx.dir(),
        "secret.json",
        r#"{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}"#,
    );
    assert_eq!(
        k.fails(&[
            "create",
            "--raw",
            "/api/v1/namespaces/default/configmaps",
            "-f",
            other_kind.to_str().unwrap()
        ]),
        "Error from server (BadRequest): Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion"
    );
    assert_eq!(
        k.fails(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/configmaps?resourceVersion=abc"
        ]),
        "Error from server (BadRequest): invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
    );
    let no_name = write_file(
        ctx.dir(),
        "no-name.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n",
    );
    assert_eq!(
        k.fails(&["create", "-f", no_name.to_str().unwrap()]),
        "The ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required"
    );
}

#[test]
fn kubectl_get_all_and_discovery_list_what_a_real_cluster_lists() {
    let Some((ctx, sandbox)) =
        start("kubectl_get_all_and_discovery_list_what_a_real_cluster_lists")
    else {
        return;
    };
    let k = Kubectl {
        sandbox: &sandbox,
        ctx: &ctx,
    };
    let all = String::from_utf8_lossy(&k.ok(&["get", "all", "-n", "default"]).stdout).to_string();
    assert!(all.starts_with("NAME                 TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE\nservice/kubernetes   ClusterIP   10.96.0.1    <none>        443/TCP   "), "{all}");

    let versions = String::from_utf8_lossy(&k.ok(&["api-versions"]).stdout).to_string();
    for v in [
        "apps/v1",
        "autoscaling/v2",
        "autoscaling/v1",
        "batch/v1",
        "resource.k8s.io/v1",
        "v1",
    ] {
        assert!(versions.lines().any(|l| l == v), "{v} in:\n{versions}");
    }
    let resources =
        String::from_utf8_lossy(&k.ok(&["api-resources", "-o", "wide"]).stdout).to_string();
    let line = |name: &str, group: &str| {
        resources
            .lines()
            .find(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.first() == Some(&name) && w.iter().any(|x| x.starts_with(group))
            })
            .unwrap_or_else(|| panic!("{name} in:\n{resources}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        resources
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        "NAME SHORTNAMES APIVERSION NAMESPACED KIND VERBS CATEGORIES"
    );
    assert_eq!(
        line("deployments", "apps/"),
        "deployments deploy apps/v1 true Deployment create,delete,deletecollection,get,list,patch,update,watch all"
    );
    assert_eq!(
        line("namespaces", "v1"),
        "namespaces ns v1 false Namespace create,delete,get,list,patch,update,watch"
    );
    assert_eq!(line("bindings", "v1"), "bindings v1 true Binding create");
    assert_eq!(
        line("customresourcedefinitions", "apiextensions"),
        "customresourcedefinitions crd,crds apiextensions.k8s.io/v1 false CustomResourceDefinition create,delete,deletecollection,get,list,patch,update,watch api-extensions"
    );
    assert_eq!(
        line("resourceclaims", "resource.k8s.io"),
        "resourceclaims resource.k8s.io/v1 true ResourceClaim create,delete,deletecollection,get,list,patch,update,watch"
    );
}
