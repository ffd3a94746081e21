//! Patching, apply (client-side and server-side), managed fields, field validation and
//! OpenAPI against the sandbox with the real kubectl: what it prints and what the objects
//! become are what a real API server of Kubernetes 1.34 yields.

use std::process::{Command, Output};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};
use serde_json::Value;

fn deployment(labels: &str, env: &str, ports: &str, replicas: u32) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels:
    app: web
{labels}spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.27
        env:
        - name: MODE
          value: fast
{env}        ports:
        - containerPort: 80
{ports}"#
    )
}

struct Kube<'a> {
    ctx: &'a TestContext,
    sandbox: &'a SandboxProcess,
}

impl Kube<'_> {
    fn cmd(&self) -> Command {
        self.sandbox.kubectl(self.ctx, "").expect("kubectl")
    }

    fn ok(&self, args: &[&str]) -> Output {
        run_ok(self.cmd().args(args))
    }

    fn fails(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().expect("run kubectl");
        assert!(
            !out.status.success(),
            "kubectl {args:?} succeeded:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json", "--show-managed-fields"]);
        serde_json::from_slice(&self.ok(&all).stdout).expect("kubectl printed JSON")
    }

    fn file(&self, name: &str, text: &str) -> String {
        write_file(self.ctx.dir(), name, text)
            .to_string_lossy()
            .into_owned()
    }
}

fn managers(object: &Value) -> Vec<(String, String)> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or("").to_string(),
                e["operation"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn fields_of<'v>(object: &'v Value, manager: &str, operation: &str) -> &'v Value {
    object["metadata"]["managedFields"]
        .as_array()
        .and_then(|l| {
            l.iter()
                .find(|e| e["manager"] == manager && e["operation"] == operation)
        })
        .map(|e| &e["fieldsV1"])
        .unwrap_or(&Value::Null)
}

#[test]
fn client_side_apply_then_server_side_apply_with_conflicts() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox
        .kubectl(
            &ctx,
            "client_side_apply_then_server_side_apply_with_conflicts",
        )
        .is_none()
    {
        return;
    }
    let k = Kube {
        ctx: &ctx,
        sandbox: &sandbox,
    };

    // Client-side apply creates, then patches with a three-way strategic merge patch that
    // kubectl computes from the OpenAPI v3 document.
    let v1 = k.file("v1.yaml", &deployment("    tier: frontend\n", "", "", 2));
    let out = k.ok(&["apply", "-f", &v1]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "deployment.apps/web created\n"
    );
    let v2 = k.file(
        "v2.yaml",
        &deployment(
            "",
            "        - name: LEVEL\n          value: debug\n",
            "        - containerPort: 9090\n          name: metrics\n",
            2,
        ),
    );
    let out = k.ok(&["apply", "-f", &v2]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "deployment.apps/web configured\n"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("warning"), "{stderr}");
    let d = k.json(&["get", "deployment", "web"]);
    assert_eq!(d["metadata"]["labels"], serde_json::json!({"app": "web"}));
    let c = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        c["env"],
        serde_json::json!([{"name": "MODE", "value": "fast"}, {"name": "LEVEL", "value": "debug"}])
    );
    assert_eq!(
        c["ports"],
        serde_json::json!([
            {"containerPort": 80, "protocol": "TCP"},
            {"containerPort": 9090, "name": "metrics", "protocol": "TCP"}
        ])
    );
    assert!(
        managers(&d).contains(&("kubectl-client-side-apply".into(), "Update".into())),
        "{:?}",
        managers(&d)
    );
    let csa = fields_of(&d, "kubectl-client-side-apply", "Update");
    assert_eq!(csa["f:spec"]["f:replicas"], serde_json::json!({}));
    assert!(
        csa["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"]["f:ports"]
            ["k:{\"containerPort\":9090,\"protocol\":\"TCP\"}"]
            .is_object(),
        "{csa}"
    );

    // Another manager changing replicas conflicts with the client-side apply's manager.
    let other = k.file(
        "other.yaml",
        &deployment(
            "",
            "        - name: LEVEL\n          value: debug\n",
            "        - containerPort: 9090\n          name: metrics\n",
            5,
        ),
    );
    let stderr = k.fails(&[
        "apply",
        "--server-side",
        "--field-manager",
        "other",
        "-f",
        &other,
    ]);
    assert!(
        stderr.starts_with(
            "error: Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using apps/v1: .spec.replicas\nPlease review the fields above--they currently have other managers."
        ),
        "{stderr}"
    );
    let out = k.ok(&[
        "apply",
        "--server-side",
        "--field-manager",
        "other",
        "--force-conflicts",
        "-f",
        &other,
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "deployment.apps/web serverside-applied\n"
    );
    let d = k.json(&["get", "deployment", "web"]);
    assert_eq!(d["spec"]["replicas"], 5);
    assert_eq!(
        fields_of(&d, "other", "Apply")["f:spec"]["f:replicas"],
        serde_json::json!({})
    );
    assert!(
        fields_of(&d, "kubectl-client-side-apply", "Update")["f:spec"]
            .get("f:replicas")
            .is_none()
    );

    // kubectl's own server-side apply takes over what its client-side apply managed.
    let out = k.ok(&["apply", "--server-side", "--force-conflicts", "-f", &other]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "deployment.apps/web serverside-applied\n"
    );
    let d = k.json(&["get", "deployment", "web"]);
    let owners = managers(&d);
    assert!(
        owners.contains(&("kubectl".into(), "Apply".into())),
        "{owners:?}"
    );
    assert!(
        !owners.iter().any(|(m, _)| m == "kubectl-client-side-apply"),
        "{owners:?}"
    );
}

#[test]
fn patches_of_every_type_and_removal_of_unapplied_fields() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox
        .kubectl(
            &ctx,
            "patches_of_every_type_and_removal_of_unapplied_fields",
        )
        .is_none()
    {
        return;
    }
    let k = Kube {
        ctx: &ctx,
        sandbox: &sandbox,
    };
    let v1 = k.file("d.yaml", &deployment("", "", "", 1));
    k.ok(&["apply", "-f", &v1]);

    let out = k.ok(&[
        "patch",
        "deployment",
        "web",
        "--type",
        "json",
        "-p",
        r#"[{"op":"replace","path":"/spec/replicas","value":3}]"#,
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "deployment.apps/web patched\n"
    );
    k.ok(&[
        "patch",
        "deployment",
        "web",
        "--type",
        "merge",
        "-p",
        r#"{"metadata":{"labels":{"team":"a"}}}"#,
    ]);
    // The default type is a strategic merge patch: containers merge by name.
    k.ok(&[
        "patch",
        "deployment",
        "web",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}}}"#,
    ]);
    let d = k.json(&["get", "deployment", "web"]);
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(d["metadata"]["labels"]["team"], "a");
    let names: Vec<&str> = d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sidecar", "web"]);
    assert_eq!(
        fields_of(&d, "kubectl-patch", "Update")["f:spec"]["f:replicas"],
        serde_json::json!({})
    );
    k.ok(&[
        "patch",
        "deployment",
        "web",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}"#,
    ]);
    let d = k.json(&["get", "deployment", "web"]);
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let stderr = k.fails(&[
        "patch",
        "deployment",
        "web",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}"#,
    ]);
    assert_eq!(
        stderr,
        "Error from server: map: map[image:x] does not contain declared merge key: name\n"
    );

    // Server-side apply removes what its manager stops applying.
    let cm = |data: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: default\ndata:\n{data}"
        )
    };
    let first = k.file("cm1.yaml", &cm("  a: \"1\"\n  b: \"2\"\n"));
    let out = k.ok(&["apply", "--server-side", "-f", &first]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "configmap/settings serverside-applied\n"
    );
    let second = k.file("cm2.yaml", &cm("  a: \"1\"\n"));
    k.ok(&["apply", "--server-side", "-f", &second]);
    let c = k.json(&["get", "configmap", "settings"]);
    assert_eq!(c["data"], serde_json::json!({"a": "1"}));
    assert_eq!(
        fields_of(&c, "kubectl", "Apply"),
        &serde_json::json!({"f:data": {"f:a": {}}})
    );
}

#[test]
fn explain_and_strict_field_validation() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox
        .kubectl(&ctx, "explain_and_strict_field_validation")
        .is_none()
    {
        return;
    }
    let k = Kube {
        ctx: &ctx,
        sandbox: &sandbox,
    };
    let out = k.ok(&["explain", "deployment.spec.template.spec.containers"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\nFIELD: containers <[]Container>\n\n\nDESCRIPTION:\n    List of containers belonging to the pod."),
        "{text}"
    );
    assert!(text.contains("\nFIELDS:\n  args\t<[]string>\n"), "{text}");
    assert!(text.contains("\n  name\t<string> -required-\n"), "{text}");
    assert!(text.contains("\n  ports\t<[]ContainerPort>\n"), "{text}");

    let bad = k.file(
        "bad.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  namespace: default\nspec:\n  foo: 1\n",
    );
    let stderr = k.fails(&["apply", "--validate=strict", "-f", &bad]);
    assert_eq!(
        stderr,
        format!(
            "Error from server (BadRequest): error when creating \"{bad}\": ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"spec\"\n"
        )
    );
    let out = k.ok(&["apply", "--validate=warn", "-f", &bad]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Warning: unknown field \"spec\"\n"
    );
    let stderr = k.fails(&["apply", "--server-side", "-f", &bad]);
    assert_eq!(
        stderr,
        "Error from server: failed to create typed patch object (default/bad; /v1, Kind=ConfigMap): .spec: field not declared in schema\n"
    );
}
