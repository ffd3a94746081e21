//! Real charts from the corpus through the real helm against the sandbox: install with
//! `--wait`, upgrade, rollback, list, history and uninstall, with the objects each step
//! leaves checked through kubectl. The charts cover plain workloads (podinfo), a
//! LoadBalancer Service (nginx), CRDs (sealed-secrets) and hook Jobs (ingress-nginx).

use std::path::Path;
use std::process::Command;

use chartkit_tests::TestContext;
use chartkit_tests::corpus::corpus_or_skip;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};

fn out(command: &mut Command) -> String {
    String::from_utf8_lossy(&run_ok(command).stdout).into_owned()
}

/// The kinds a chart's namespaced objects are of, and the pods and ReplicaSets made
/// from them.
const KINDS: &str = "deployments,statefulsets,daemonsets,replicasets,pods,services,configmaps,secrets,serviceaccounts,roles,rolebindings,jobs,ingresses,persistentvolumeclaims,networkpolicies,poddisruptionbudgets";

struct Release<'a> {
    ctx: &'a TestContext,
    sandbox: &'a SandboxProcess,
    name: &'a str,
    namespace: String,
}

impl Release<'_> {
    fn helm(&self) -> Command {
        let mut helm = self.sandbox.helm(self.ctx, "").expect("helm");
        helm.args(["--namespace", &self.namespace]);
        helm
    }

    fn kubectl(&self, args: &[&str]) -> String {
        out(self
            .sandbox
            .kubectl(self.ctx, "")
            .expect("kubectl")
            .args(["--namespace", &self.namespace])
            .args(args))
    }

    /// The release's objects in its namespace (`kind/name`): what carries helm's
    /// release-name annotation, which every object helm applies gets (charts label
    /// their objects in different ways; helm's own records carry neither).
    fn objects(&self) -> Vec<String> {
        let json = self.kubectl(&["get", KINDS, "-o", "json"]);
        let list: serde_json::Value = serde_json::from_str(&json).expect("list json");
        let mut names: Vec<String> = list["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter(|o| o["metadata"]["annotations"]["meta.helm.sh/release-name"] == self.name)
            .map(|o| {
                format!(
                    "{}/{}",
                    o["kind"].as_str().unwrap_or(""),
                    o["metadata"]["name"].as_str().unwrap_or("")
                )
            })
            .collect();
        names.sort();
        names
    }

    /// `helm history` as (revision, status, description) triples.
    fn history(&self) -> Vec<(u64, String, String)> {
        let json = out(self.helm().args(["history", self.name, "-o", "json"]));
        let entries: Vec<serde_json::Value> = serde_json::from_str(&json).expect("history json");
        entries
            .iter()
            .map(|e| {
                (
                    e["revision"].as_u64().expect("revision"),
                    e["status"].as_str().expect("status").to_string(),
                    e["description"].as_str().expect("description").to_string(),
                )
            })
            .collect()
    }

    /// Every Deployment, StatefulSet and DaemonSet of the release has all its replicas
    /// ready and available, as `--wait` promised.
    fn assert_workloads_ready(&self) {
        let json = self.kubectl(&["get", "deployments,statefulsets,daemonsets", "-o", "json"]);
        let list: serde_json::Value = serde_json::from_str(&json).expect("list json");
        let items: Vec<&serde_json::Value> = list["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter(|o| o["metadata"]["annotations"]["meta.helm.sh/release-name"] == self.name)
            .collect();
        assert!(!items.is_empty(), "no workloads for {}", self.name);
        for item in items {
            let status = &item["status"];
            let name = &item["metadata"]["name"];
            let (want, ready) = match item["kind"].as_str() {
                Some("DaemonSet") => (&status["desiredNumberScheduled"], &status["numberReady"]),
                _ => (&item["spec"]["replicas"], &status["readyReplicas"]),
            };
            assert_eq!(ready, want, "{name} is not ready: {status}");
            assert_eq!(
                status["observedGeneration"], item["metadata"]["generation"],
                "{name}"
            );
        }
    }
}

/// Install with `--wait`, upgrade with `upgrade_args`, roll back to 1, uninstall; returns
/// the release between steps to `check` (with the step's name).
fn lifecycle(
    test: &str,
    package: &str,
    name: &str,
    upgrade_args: &[&str],
    check: impl Fn(&Release, &str),
) {
    let ctx = TestContext::new();
    let Some(corpus) = corpus_or_skip(test) else {
        return;
    };
    let chart = corpus.join("charts").join(package);
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, test).is_none() {
        return;
    }
    let release = Release {
        ctx: &ctx,
        sandbox: &sandbox,
        name,
        namespace: format!("ns-{name}"),
    };
    let chart: &Path = &chart;

    let o = out(release.helm().args(["install", name]).arg(chart).args([
        "--create-namespace",
        "--wait",
        "--timeout",
        "2m",
    ]));
    assert!(o.contains("STATUS: deployed"), "{o}");
    release.assert_workloads_ready();
    let installed = release.objects();
    assert!(!installed.is_empty(), "{name} made no objects");
    check(&release, "install");

    let o = out(release
        .helm()
        .args(["upgrade", name])
        .arg(chart)
        .args(upgrade_args)
        .args(["--wait", "--timeout", "2m"]));
    assert!(
        o.contains("STATUS: deployed") && o.contains("REVISION: 2"),
        "{o}"
    );
    release.assert_workloads_ready();
    check(&release, "upgrade");

    let o = out(release
        .helm()
        .args(["rollback", name, "1", "--wait", "--timeout", "2m"]));
    assert!(o.contains("Rollback was a success"), "{o}");
    release.assert_workloads_ready();
    check(&release, "rollback");
    assert_eq!(
        release.history(),
        vec![
            (1, "superseded".into(), "Install complete".into()),
            (2, "superseded".into(), "Upgrade complete".into()),
            (3, "deployed".into(), "Rollback to 1".into()),
        ]
    );
    // The rollback brings back the set of objects the install made.
    assert_eq!(release.objects(), installed);

    let list = out(release.helm().args(["list", "-o", "json"]));
    let list: serde_json::Value = serde_json::from_str(&list).expect("list json");
    assert_eq!(list[0]["name"], name, "{list}");
    assert_eq!(list[0]["revision"], "3", "{list}");
    assert_eq!(list[0]["status"], "deployed", "{list}");

    let o = out(release.helm().args(["uninstall", name, "--wait"]));
    assert!(
        o.contains(&format!("release \"{name}\" uninstalled")),
        "{o}"
    );
    assert_eq!(release.objects(), Vec::<String>::new());
    let list = out(release.helm().args(["list", "--uninstalled", "-o", "json"]));
    assert_eq!(list.trim(), "[]");
    check(&release, "uninstall");
}

#[test]
fn podinfo_installs_upgrades_rolls_back_and_uninstalls() {
    lifecycle(
        "podinfo_installs_upgrades_rolls_back_and_uninstalls",
        "podinfo-6.14.1.tgz",
        "podinfo",
        &["--set", "replicaCount=3"],
        |release, step| {
            if step == "uninstall" {
                return;
            }
            let replicas = release.kubectl(&[
                "get",
                "deployment",
                "podinfo",
                "-o",
                "jsonpath={.status.readyReplicas}",
            ]);
            match step {
                "install" | "rollback" => assert_eq!(replicas, "1", "{step}"),
                "upgrade" => assert_eq!(replicas, "3", "{step}"),
                _ => {}
            }
        },
    );
}

#[test]
fn nginx_gets_its_load_balancer_address() {
    lifecycle(
        "nginx_gets_its_load_balancer_address",
        "nginx-22.1.1.tgz",
        "nginx",
        &["--set", "service.type=ClusterIP"],
        |release, step| {
            if step == "uninstall" {
                return;
            }
            // A LoadBalancer's address comes from the cloud provider some time after
            // the Service is written, and helm's --wait does not wait for it (kstatus
            // holds a Service ready once it has a cluster IP), so look until it shows.
            let mut svc = String::new();
            for _ in 0..100 {
                svc = release.kubectl(&[
                    "get",
                    "service",
                    "nginx",
                    "-o",
                    "jsonpath={.spec.type} {.spec.clusterIP} {.status.loadBalancer.ingress[0].ip}",
                ]);
                if step == "upgrade" || !svc.ends_with(' ') {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            match step {
                "install" | "rollback" => {
                    let parts: Vec<&str> = svc.split(' ').collect();
                    assert_eq!(parts[0], "LoadBalancer", "{step}: {svc}");
                    assert!(parts[1].starts_with("10."), "{step}: {svc}");
                    assert!(parts[2].starts_with("172.18.255."), "{step}: {svc}");
                }
                "upgrade" => assert!(svc.starts_with("ClusterIP 10."), "{svc}"),
                _ => {}
            }
        },
    );
}

#[test]
fn sealed_secrets_installs_its_crd_and_helm_keeps_it() {
    lifecycle(
        "sealed_secrets_installs_its_crd_and_helm_keeps_it",
        "sealed-secrets-2.18.5.tgz",
        "sealed-secrets",
        &["--set", "fullnameOverride=sealed-secrets"],
        |release, step| {
            // The CRD is Established and serves its type at every step, and helm leaves
            // it behind on uninstall, as on a cluster.
            let established = release.kubectl(&[
                "get",
                "crd",
                "sealedsecrets.bitnami.com",
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Established\")].status}",
            ]);
            assert_eq!(established, "True", "{step}");
            let listed = out(release
                .sandbox
                .kubectl(release.ctx, "")
                .expect("kubectl")
                .args(["get", "sealedsecrets", "-A"]));
            assert_eq!(listed, "", "{step}");
        },
    );
}

#[test]
fn ingress_nginx_runs_its_hook_jobs_and_deletes_them() {
    lifecycle(
        "ingress_nginx_runs_its_hook_jobs_and_deletes_them",
        "ingress-nginx-4.15.1.tgz",
        "ingress-nginx",
        &["--set", "controller.replicaCount=2"],
        |release, step| {
            // The admission webhook's certificate Jobs are pre/post install and upgrade
            // hooks deleted once they succeed: they ran (their completion is in the
            // events) and are gone.
            let jobs = release.kubectl(&["get", "jobs", "-o", "name"]);
            assert_eq!(jobs, "", "{step}");
            if step == "install" || step == "upgrade" {
                let events = release.kubectl(&[
                    "get",
                    "events",
                    "--field-selector",
                    "involvedObject.kind=Job,reason=Completed",
                    "-o",
                    "jsonpath={range .items[*]}{.involvedObject.name}{\"\\n\"}{end}",
                ]);
                for job in [
                    "ingress-nginx-admission-create",
                    "ingress-nginx-admission-patch",
                ] {
                    assert!(events.lines().any(|l| l == job), "{step}: {events}");
                }
            }
        },
    );
}
