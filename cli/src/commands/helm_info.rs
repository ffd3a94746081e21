//! `chartkit env` and `chartkit version`, in helm's formats.

use std::process::ExitCode;
use std::rc::Rc;

use crate::cli::{GlobalArgs, KubeArgs};
use crate::cli_helm::{EnvArgs, VersionArgs};
use crate::commands::helm_env;
use crate::error::{Result, err};
use crate::output::{out, outln};

/// `helm env`: every setting as `NAME="value"` in name order, or one value.
pub fn env(args: EnvArgs, kube: &KubeArgs, global: &GlobalArgs) -> Result<ExitCode> {
    let settings = helm_env::settings(kube, global);
    match args.name {
        Some(name) => outln!("{}", settings.get(&name).map(String::as_str).unwrap_or(""))?,
        None => {
            for (name, value) in &settings {
                outln!("{name}=\"{value}\"")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The Kubernetes API version chartkit's types come from (k8s-openapi's feature).
const KUBE_CLIENT_VERSION: &str = "v1.34";

/// The helm release whose behaviour chartkit follows.
const HELM_COMPATIBLE: &str = "4.1.4";

/// chartkit's build facts under helm's names. The version is the helm release chartkit
/// is compatible with, carrying chartkit's own version as semver build metadata
/// (`v4.1.4+chartkit.0.1.0`): plugins run `$HELM_BIN version --short` and branch on
/// helm's major version (helm-secrets refuses anything but v2, v3 and v4), and a
/// chartkit that said `v0.1.0` would be refused by them. The commit is known when the
/// build sets `CHARTKIT_GIT_COMMIT` (the release scripts may); Go's version is empty, as
/// chartkit is not a Go program.
fn build_info() -> [(&'static str, String); 5] {
    [
        (
            "Version",
            format!("v{HELM_COMPATIBLE}+chartkit.{}", env!("CARGO_PKG_VERSION")),
        ),
        (
            "GitCommit",
            option_env!("CHARTKIT_GIT_COMMIT").unwrap_or("").to_owned(),
        ),
        (
            "GitTreeState",
            option_env!("CHARTKIT_GIT_TREE_STATE")
                .unwrap_or("")
                .to_owned(),
        ),
        ("GoVersion", String::new()),
        ("KubeClientVersion", KUBE_CLIENT_VERSION.to_owned()),
    ]
}

/// `helm version`: Go's `%#v` of the build information, `--short`'s `VERSION+gCOMMIT`,
/// or the user's template over it.
pub fn version(args: VersionArgs) -> Result<ExitCode> {
    let info = build_info();
    if let Some(text) = args.template.filter(|t| !t.is_empty()) {
        let mut set = chartkit_template::TemplateSet::new();
        set.add("_", &text).map_err(|e| err!("{e}"))?;
        let data: chartkit_template::Entries = info
            .iter()
            .map(|(k, v)| (Rc::from(*k), chartkit_template::Value::str(v)))
            .collect();
        let output = set
            .execute("_", chartkit_template::Value::map(data))
            .map_err(|e| err!("{e}"))?;
        out!("{output}")?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.short {
        let commit = &info[1].1;
        if commit.len() >= 7 {
            outln!("{}+g{}", info[0].1, &commit[..7])?;
        } else {
            outln!("{}", info[0].1)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let fields: Vec<String> = info.iter().map(|(k, v)| format!("{k}:\"{v}\"")).collect();
    outln!("version.BuildInfo{{{}}}", fields.join(", "))?;
    Ok(ExitCode::SUCCESS)
}
