//! client-go's typed clients write built-in objects in Kubernetes' protobuf encoding:
//! helm's release Secrets, `kubectl create ...`, `kubectl auth can-i`. The sandbox reads
//! them into the same objects a JSON client's requests make, and answers in JSON, which
//! those clients read (single objects, lists and watch streams alike).

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};
use serde_json::Value;

fn out(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

fn kubectl(sandbox: &SandboxProcess, ctx: &TestContext, args: &[&str]) -> String {
    let mut c = sandbox.kubectl(ctx, "").expect("kubectl");
    out(&run_ok(c.args(args)))
}

fn helm(sandbox: &SandboxProcess, ctx: &TestContext, args: &[&str]) -> String {
    let mut c = sandbox.helm(ctx, "").expect("helm");
    out(&run_ok(c.args(args)))
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn helm_installs_upgrades_and_uninstalls_with_protobuf_release_secrets() {
    let test = "helm_installs_upgrades_and_uninstalls_with_protobuf_release_secrets";
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, test).is_none() || sandbox.kubectl(&ctx, test).is_none() {
        return;
    }
    let chart = ctx.demo_chart(&[(
        "templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-config\ndata:\n  greeting: {{ .Values.greeting | default \"hello\" | quote }}\n",
    )]);
    helm(
        &sandbox,
        &ctx,
        &["install", "demo", &chart, "-n", "default"],
    );
    let list = json(&helm(
        &sandbox,
        &ctx,
        &["list", "-n", "default", "-o", "json"],
    ));
    assert_eq!(list[0]["name"], "demo", "{list}");
    assert_eq!(list[0]["status"], "deployed", "{list}");
    assert_eq!(list[0]["revision"], "1", "{list}");

    // The release Secret helm wrote in protobuf, as stored.
    let secret = json(&kubectl(
        &sandbox,
        &ctx,
        &[
            "get",
            "secret",
            "sh.helm.release.v1.demo.v1",
            "-n",
            "default",
            "-o",
            "json",
        ],
    ));
    assert_eq!(secret["type"], "helm.sh/release.v1", "{secret}");
    assert_eq!(secret["metadata"]["labels"]["owner"], "helm", "{secret}");
    assert_eq!(
        secret["metadata"]["labels"]["status"], "deployed",
        "{secret}"
    );
    assert!(
        secret["data"]["release"]
            .as_str()
            .is_some_and(|r| r.len() > 100),
        "{secret}"
    );
    assert_eq!(
        kubectl(
            &sandbox,
            &ctx,
            &[
                "get",
                "configmap",
                "demo-config",
                "-o",
                "jsonpath={.data.greeting}"
            ]
        ),
        "hello"
    );

    // An upgrade updates the first release Secret (PUT, protobuf) and creates a second.
    helm(
        &sandbox,
        &ctx,
        &[
            "upgrade",
            "demo",
            &chart,
            "-n",
            "default",
            "--set",
            "greeting=hi",
        ],
    );
    let list = json(&helm(
        &sandbox,
        &ctx,
        &["list", "-n", "default", "-o", "json"],
    ));
    assert_eq!(list[0]["revision"], "2", "{list}");
    assert_eq!(
        kubectl(
            &sandbox,
            &ctx,
            &[
                "get",
                "secret",
                "sh.helm.release.v1.demo.v1",
                "-o",
                "jsonpath={.metadata.labels.status}"
            ]
        ),
        "superseded"
    );
    let history = json(&helm(&sandbox, &ctx, &["history", "demo", "-o", "json"]));
    assert_eq!(history.as_array().map(Vec::len), Some(2), "{history}");

    // Uninstalling deletes the release Secrets with protobuf DeleteOptions.
    helm(&sandbox, &ctx, &["uninstall", "demo", "-n", "default"]);
    assert_eq!(helm(&sandbox, &ctx, &["list", "-n", "default", "-q"]), "");
    assert_eq!(
        kubectl(
            &sandbox,
            &ctx,
            &["get", "secrets", "-l", "owner=helm", "-o", "name"]
        ),
        ""
    );
}

#[test]
fn kubectl_create_commands_write_in_protobuf() {
    let test = "kubectl_create_commands_write_in_protobuf";
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.kubectl(&ctx, test).is_none() {
        return;
    }
    let k = |args: &[&str]| kubectl(&sandbox, &ctx, args);

    assert_eq!(k(&["create", "namespace", "n"]), "namespace/n created");
    assert_eq!(
        k(&["get", "namespace", "n", "-o", "jsonpath={.status.phase}"]),
        "Active"
    );

    k(&["create", "configmap", "x", "-n", "n", "--from-literal=a=b"]);
    // Bytes that are not UTF-8 go to binaryData (a map of bytes fields).
    let blob = ctx.path("blob");
    std::fs::write(&blob, [0u8, 0xff, 0xfe, b'\n', 1, 2]).expect("write blob");
    let from_file = format!("--from-file=blob={}", blob.display());
    k(&["create", "configmap", "bin", "-n", "n", &from_file]);
    assert_eq!(
        k(&[
            "get",
            "configmap",
            "bin",
            "-n",
            "n",
            "-o",
            "jsonpath={.binaryData.blob}"
        ]),
        "AP/+CgEC"
    );
    assert_eq!(
        k(&[
            "get",
            "configmap",
            "x",
            "-n",
            "n",
            "-o",
            "jsonpath={.data.a}"
        ]),
        "b"
    );

    k(&[
        "create",
        "secret",
        "generic",
        "s",
        "-n",
        "n",
        "--from-literal=k=v",
    ]);
    // "v" in base64, stored as sent and decoded back by kubectl's template function.
    assert_eq!(
        k(&["get", "secret", "s", "-n", "n", "-o", "jsonpath={.data.k}"]),
        "dg=="
    );
    assert_eq!(
        k(&[
            "get",
            "secret",
            "s",
            "-n",
            "n",
            "-o",
            "go-template={{.data.k | base64decode}}"
        ]),
        "v"
    );
    assert_eq!(
        k(&["get", "secret", "s", "-n", "n", "-o", "jsonpath={.type}"]),
        "Opaque"
    );

    k(&[
        "create",
        "deployment",
        "web",
        "-n",
        "n",
        "--image=nginx:1.27",
        "--replicas=2",
    ]);
    let d = json(&k(&["get", "deployment", "web", "-n", "n", "-o", "json"]));
    assert_eq!(d["spec"]["replicas"], 2, "{d}");
    assert_eq!(d["spec"]["selector"]["matchLabels"]["app"], "web", "{d}");
    assert_eq!(
        d["spec"]["template"]["metadata"]["labels"]["app"], "web",
        "{d}"
    );
    let container = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["name"], "nginx", "{d}");
    assert_eq!(container["image"], "nginx:1.27", "{d}");
    // Defaults applied to what protobuf left out, as for a JSON create.
    assert_eq!(container["imagePullPolicy"], "IfNotPresent", "{d}");
    assert_eq!(d["spec"]["strategy"]["type"], "RollingUpdate", "{d}");
    assert_eq!(
        d["spec"]["template"]["spec"]["restartPolicy"], "Always",
        "{d}"
    );

    k(&["create", "job", "j", "-n", "n", "--image=busybox"]);
    let j = json(&k(&["get", "job", "j", "-n", "n", "-o", "json"]));
    assert_eq!(
        j["spec"]["template"]["spec"]["containers"][0]["image"], "busybox",
        "{j}"
    );
    assert_eq!(
        j["spec"]["template"]["spec"]["restartPolicy"], "Never",
        "{j}"
    );

    // kubectl expose: a Service whose targetPort is an IntOrString.
    k(&[
        "expose",
        "deployment",
        "web",
        "-n",
        "n",
        "--port=80",
        "--target-port=8080",
    ]);
    let svc = json(&k(&["get", "service", "web", "-n", "n", "-o", "json"]));
    assert_eq!(svc["spec"]["ports"][0]["port"], 80, "{svc}");
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080, "{svc}");
    assert_eq!(svc["spec"]["selector"]["app"], "web", "{svc}");

    k(&[
        "run",
        "p",
        "-n",
        "n",
        "--image=nginx:1.27",
        "--labels=run=p",
        "--port=8080",
    ]);
    let pod = json(&k(&["get", "pod", "p", "-n", "n", "-o", "json"]));
    assert_eq!(
        pod["spec"]["containers"][0]["ports"][0]["containerPort"], 8080,
        "{pod}"
    );
    assert_eq!(pod["metadata"]["labels"]["run"], "p", "{pod}");

    // A subject access review (create, answered), a token request (POST subresource).
    assert_eq!(k(&["auth", "can-i", "create", "pods"]), "yes");
    assert_eq!(
        k(&["auth", "can-i", "delete", "deployments", "-n", "n"]),
        "yes"
    );
    k(&["create", "serviceaccount", "bot", "-n", "n"]);
    assert!(
        k(&["create", "token", "bot", "-n", "n"]).starts_with("sandbox-token-"),
        "a token"
    );
}

/// Strips what differs between two stores of one object: identity, times, the field
/// manager's records, the apply annotation, its namespace and status.
fn comparable(object: &Value) -> Value {
    let uid = object["metadata"]["uid"]
        .as_str()
        .unwrap_or("-")
        .to_string();
    let ns = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or("-")
        .to_string();
    let text = serde_json::to_string(object)
        .expect("JSON")
        .replace(&uid, "UID")
        .replace(&format!("\"{ns}\""), "\"NS\"");
    let mut v: Value = serde_json::from_str(&text).expect("JSON");
    let meta = v["metadata"].as_object_mut().expect("metadata");
    for key in [
        "resourceVersion",
        "creationTimestamp",
        "managedFields",
        "uid",
    ] {
        meta.shift_remove(key);
    }
    if let Some(a) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
        a.shift_remove("kubectl.kubernetes.io/last-applied-configuration");
        a.shift_remove("deployment.kubernetes.io/revision");
        if a.is_empty() {
            meta.shift_remove("annotations");
        }
    }
    let obj = v.as_object_mut().expect("object");
    obj.shift_remove("status");
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.shift_remove("clusterIP");
        spec.shift_remove("clusterIPs");
    }
    v
}

#[test]
fn a_protobuf_create_stores_what_a_json_apply_of_the_same_object_stores() {
    let test = "a_protobuf_create_stores_what_a_json_apply_of_the_same_object_stores";
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.kubectl(&ctx, test).is_none() {
        return;
    }
    let k = |args: &[&str]| kubectl(&sandbox, &ctx, args);
    k(&["create", "namespace", "via-proto"]);
    k(&["create", "namespace", "via-json"]);
    let cases: &[(&str, &[&str])] = &[
        (
            "configmap/c",
            &[
                "create",
                "configmap",
                "c",
                "--from-literal=a=b",
                "--from-literal=empty=",
            ],
        ),
        (
            "secret/s",
            &[
                "create",
                "secret",
                "generic",
                "s",
                "--from-literal=k=v",
                "--type=example.com/t",
            ],
        ),
        (
            "deployment/web",
            &[
                "create",
                "deployment",
                "web",
                "--image=nginx:1.27",
                "--replicas=2",
                "--port=80",
            ],
        ),
        (
            "job/j",
            &["create", "job", "j", "--image=busybox", "--", "echo", "hi"],
        ),
        (
            "service/svc",
            &["create", "service", "clusterip", "svc", "--tcp=80:8080"],
        ),
        (
            "cronjob/cj",
            &[
                "create",
                "cronjob",
                "cj",
                "--image=busybox",
                "--schedule=*/5 * * * *",
            ],
        ),
        (
            "role/r",
            &[
                "create",
                "role",
                "r",
                "--verb=get,list",
                "--resource=pods,configmaps",
            ],
        ),
        (
            "poddisruptionbudget/pdb",
            &[
                "create",
                "poddisruptionbudget",
                "pdb",
                "--selector=app=web",
                "--min-available=50%",
            ],
        ),
        (
            "ingress/ing",
            &[
                "create",
                "ingress",
                "ing",
                "--rule=example.com/path*=svc:80",
            ],
        ),
    ];
    for (name, create) in cases {
        // The object kubectl builds, as JSON (no server involved), applied in one
        // namespace; the same command against the server (protobuf) in the other.
        // (Flags go before the verb's arguments: a Job's command follows `--`.)
        let with = |flags: &[&'static str]| -> Vec<&str> {
            let mut args = vec![create[0]];
            args.extend(flags);
            args.extend(&create[1..]);
            args
        };
        let dry = with(&["--dry-run=client", "-o", "json", "-n", "via-json"]);
        let file = write_file(
            ctx.dir(),
            &format!("{}.json", name.replace('/', "-")),
            &k(&dry),
        );
        k(&["apply", "-f", &file.display().to_string(), "-n", "via-json"]);
        k(&with(&["-n", "via-proto"]));
        let a = json(&k(&["get", name, "-n", "via-json", "-o", "json"]));
        let b = json(&k(&["get", name, "-n", "via-proto", "-o", "json"]));
        assert_eq!(
            comparable(&a),
            comparable(&b),
            "{name}\njson:  {a}\nproto: {b}"
        );
    }

    // A cluster-scoped object has one name: applied, read, deleted, created again.
    let create = [
        "create",
        "priorityclass",
        "high",
        "--value=1000",
        "--description=high",
    ];
    let mut dry = create.to_vec();
    dry.extend(["--dry-run=client", "-o", "json"]);
    let file = write_file(ctx.dir(), "priorityclass.json", &k(&dry));
    k(&["apply", "-f", &file.display().to_string()]);
    let applied = comparable(&json(&k(&["get", "priorityclass", "high", "-o", "json"])));
    k(&["delete", "priorityclass", "high"]);
    k(&create);
    let created = comparable(&json(&k(&["get", "priorityclass", "high", "-o", "json"])));
    assert_eq!(applied, created);
}

#[test]
fn typed_clients_read_json_lists_and_watch_streams() {
    let test = "typed_clients_read_json_lists_and_watch_streams";
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.kubectl(&ctx, test).is_none() {
        return;
    }
    let k = |args: &[&str]| kubectl(&sandbox, &ctx, args);
    k(&["create", "namespace", "w"]);
    let event = |name: &str, reason: &str| {
        let path = write_file(
            ctx.dir(),
            &format!("{name}.yaml"),
            &format!(
                "apiVersion: v1\nkind: Event\nmetadata:\n  name: {name}\n  namespace: w\ninvolvedObject:\n  kind: Pod\n  name: p\n  namespace: w\nreason: {reason}\nmessage: the {reason} event\ntype: Normal\nfirstTimestamp: \"2026-01-01T00:00:00Z\"\nlastTimestamp: \"2026-01-01T00:00:00Z\"\ncount: 1\n"
            ),
        );
        k(&["create", "-f", &path.display().to_string()]);
    };
    event("first", "Listed");

    // `kubectl events --watch` lists, then watches, with the typed client (protobuf
    // preferred, JSON accepted).
    let mut watch: Command = sandbox.kubectl(&ctx, "").expect("kubectl");
    let mut child = watch
        .args(["events", "--watch", "-n", "w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl events --watch");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let wait_for = |needle: &str, seen: &mut Vec<String>| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !seen.iter().any(|l| l.contains(needle)) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => seen.push(line),
                Err(_) => return false,
            }
        }
        true
    };
    let listed = wait_for("the Listed event", &mut seen);
    event("second", "Watched");
    let watched = listed && wait_for("the Watched event", &mut seen);
    let _ = child.kill();
    let status = child.wait().expect("wait");
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    assert!(
        listed && watched,
        "kubectl events --watch ({status}) printed:\n{}\nstderr:\n{stderr}",
        seen.join("\n")
    );
}

#[test]
fn bad_protobuf_bodies_get_400() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let client = reqwest::blocking::Client::new();
    let post = |path: &str, body: &[u8]| {
        let resp = client
            .post(format!("{}{path}", sandbox.url))
            .header("content-type", "application/vnd.kubernetes.protobuf")
            .header(
                "accept",
                "application/vnd.kubernetes.protobuf,application/json",
            )
            .body(body.to_vec())
            .send()
            .expect("request");
        let code = resp.status().as_u16();
        (code, resp.json::<Value>().expect("a Status"))
    };
    let cm = "/api/v1/namespaces/default/configmaps";
    let (code, status) = post(cm, b"not protobuf");
    assert_eq!(code, 400, "{status}");
    assert_eq!(status["reason"], "BadRequest", "{status}");
    assert_eq!(
        status["message"],
        "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (6e6f742070726f746f627566)"
    );
    // An envelope naming a kind no group has.
    let mut body = b"k8s\0".to_vec();
    body.extend([
        0x0a, 0x0a, 0x0a, 0x02, b'v', b'1', 0x12, 0x04, b'N', b'o', b'p', b'e',
    ]);
    let (code, status) = post(cm, &body);
    assert_eq!(code, 400, "{status}");
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Nope in version \"v1\" cannot be handled as a ConfigMap: no kind \"Nope\" is registered")),
        "{status}"
    );
    // A ConfigMap whose metadata is cut short.
    let mut body = b"k8s\0".to_vec();
    body.extend([0x0a, 0x0f, 0x0a, 0x02, b'v', b'1', 0x12, 0x09]);
    body.extend(b"ConfigMap");
    body.extend([0x12, 0x03, 0x0a, 0x05, b'x']);
    let (code, status) = post(cm, &body);
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: unexpected EOF"
    );
}
