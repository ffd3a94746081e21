//! Command-line definitions. Help text is written once, here, in doc comments.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::env;

/// A fast, offline-first Helm chart toolkit and chart repository server.
#[derive(Debug, Parser)]
#[command(name = "chartkit", version, about, long_about = None)]
pub struct Cli {
    /// Work from the cache only: no command opens a network connection (also
    /// CHARTKIT_OFFLINE=1).
    #[arg(long, global = true)]
    pub offline: bool,
    #[command(flatten)]
    pub kube: KubeArgs,
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
    /// Set when the command was parsed alone (the fast path): `kube` is then empty, and
    /// its variables (`HELM_KUBECONTEXT`...) are read only if something needs them
    /// ([`KubeArgs::from_env`]).
    #[arg(skip)]
    pub kube_unread: bool,
}

impl Cli {
    /// Parses the process's arguments. Building clap's description of every subcommand
    /// costs about a quarter of a millisecond, as much as rendering a small chart, so the
    /// commands run most often are first parsed against their own subcommand alone.
    /// Anything that does not parse cleanly that way (help, errors, every other command)
    /// goes through the full parser, so what users see is unchanged.
    pub fn from_args() -> Result<Cli, clap::Error> {
        Cli::from_arg_list(std::env::args_os().collect())
    }

    pub(crate) fn from_arg_list(args: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
        match fast_parse(&args) {
            Some(command) => Ok(Cli {
                offline: false,
                kube: KubeArgs::default(),
                global: GlobalArgs::default(),
                command,
                kube_unread: true,
            }),
            None => Cli::try_parse_from(args),
        }
    }
}

/// How to reach the cluster: helm's global Kubernetes flags, each with helm's variable as
/// its fallback. `template` and `lint` keep their own `-n/--namespace` (the release's
/// namespace to render for, default `default`), which shadows this one after their name.
#[derive(Debug, Default, Clone, Args)]
pub struct KubeArgs {
    /// Path to the kubeconfig file (default: the files in $KUBECONFIG, else ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Name of the kubeconfig context to use.
    #[arg(long = "kube-context", global = true, env = env::HELM_KUBECONTEXT, value_name = "NAME")]
    pub kube_context: Option<String>,
    /// Namespace scope for this request (default: the context's namespace).
    #[arg(short = 'n', long, global = true, env = env::HELM_NAMESPACE)]
    pub namespace: Option<String>,
    /// Bearer token used for authentication.
    #[arg(long = "kube-token", global = true, env = env::HELM_KUBETOKEN, hide_env_values = true)]
    pub kube_token: Option<String>,
    /// The address and port of the Kubernetes API server.
    #[arg(long = "kube-apiserver", global = true, env = env::HELM_KUBEAPISERVER, value_name = "URL")]
    pub kube_apiserver: Option<String>,
    /// Username to impersonate for the operation.
    #[arg(long = "kube-as-user", global = true, env = env::HELM_KUBEASUSER)]
    pub kube_as_user: Option<String>,
    /// Group to impersonate for the operation (repeatable).
    #[arg(long = "kube-as-group", global = true, env = env::HELM_KUBEASGROUPS, value_delimiter = ',')]
    pub kube_as_group: Vec<String>,
    /// The certificate authority file for the Kubernetes API server connection.
    // Empty is allowed (and means none): helm hands plugins HELM_KUBECAFILE="", and a
    // plugin that runs $HELM_BIN must not fail on it.
    #[arg(long = "kube-ca-file", global = true, env = env::HELM_KUBECAFILE, value_name = "FILE", value_parser = path_or_empty)]
    pub kube_ca_file: Option<PathBuf>,
    /// Server name to use for certificate verification (default: the server's host).
    #[arg(long = "kube-tls-server-name", global = true, env = env::HELM_KUBETLS_SERVER_NAME)]
    pub kube_tls_server_name: Option<String>,
    /// Do not check the Kubernetes API server's certificate (insecure).
    #[arg(long = "kube-insecure-skip-tls-verify", global = true, env = env::HELM_KUBEINSECURE_SKIP_TLS_VERIFY)]
    pub kube_insecure_skip_tls_verify: bool,
}

impl KubeArgs {
    /// The Kubernetes flags' values from their environment variables alone, for a
    /// command parsed without them.
    pub fn from_env() -> KubeArgs {
        let command = KubeArgs::augment_args(clap::Command::new("chartkit"));
        command
            .try_get_matches_from(["chartkit"])
            .ok()
            .and_then(|m| <KubeArgs as clap::FromArgMatches>::from_arg_matches(&m).ok())
            .unwrap_or_default()
    }
}

/// helm's other global flags, accepted everywhere so helm's scripts run unchanged.
#[derive(Debug, Default, Clone, Args)]
pub struct GlobalArgs {
    /// install and upgrade print the release's values and manifest too, as helm's
    /// --debug does, and --wait writes a line per change to stderr when it is not a
    /// terminal (where the live view is always shown).
    #[arg(long, global = true, env = env::HELM_DEBUG)]
    pub debug: bool,
    /// Accepted for helm's scripts and ignored: chartkit does not throttle its requests
    /// to the Kubernetes API (kube-rs has no client-side rate limiter to give it to).
    #[arg(long = "burst-limit", global = true, value_name = "N")]
    pub burst_limit: Option<i32>,
    /// Accepted for helm's scripts and ignored, as --burst-limit is.
    #[arg(long, global = true, value_name = "QPS")]
    pub qps: Option<f32>,
    /// Colour the NAMESPACE and STATUS lines of install, upgrade and status tables:
    /// never, auto (when stdout is a terminal) or always (default: HELM_COLOR, else
    /// auto). A non-empty NO_COLOR wins.
    #[arg(
        long,
        visible_alias = "colour",
        global = true,
        value_name = "MODE",
        value_parser = color_mode
    )]
    pub color: Option<String>,
    /// The repository list (helm's repositories.yaml; default: HELM_REPOSITORY_CONFIG,
    /// else CHARTKIT_CONFIG_HOME/repositories.yaml when that is set, else helm's own
    /// under HELM_CONFIG_HOME, XDG_CONFIG_HOME/helm or ~/.config/helm).
    #[arg(long = "repository-config", global = true, value_name = "FILE")]
    pub repository_config: Option<PathBuf>,
    /// The directory of downloaded repository indexes, helm's layout (default:
    /// HELM_REPOSITORY_CACHE, else chartkit's cache when CHARTKIT_CONFIG_HOME or
    /// CHARTKIT_CACHE_HOME is set, else helm's own under HELM_CACHE_HOME,
    /// XDG_CACHE_HOME/helm or ~/.cache/helm).
    #[arg(long = "repository-cache", global = true, value_name = "DIR")]
    pub repository_cache: Option<PathBuf>,
    /// helm's registry credentials file, for OCI registries (default:
    /// HELM_REGISTRY_CONFIG, else registry/config.json in helm's configuration).
    #[arg(long = "registry-config", global = true, value_name = "FILE")]
    pub registry_config: Option<PathBuf>,
    /// The largest repository index a command downloads (`repo add`, `repo update`,
    /// and any command that fetches one: `pull --repo`, `dependency update`...), in
    /// bytes or with a unit: 512MiB, 2GiB (default: CHARTKIT_MAX_INDEX_SIZE, else
    /// 512MiB). A larger index is refused and nothing of it is kept.
    #[arg(long = "max-index-size", global = true, value_name = "SIZE", value_parser = byte_size)]
    pub max_index_size: Option<u64>,
}

/// A path, where empty is accepted (clap's own path parser refuses it).
fn path_or_empty(text: &str) -> Result<PathBuf, String> {
    Ok(PathBuf::from(text))
}

/// A size in bytes, or with a binary unit (`KiB`, `MiB`, `GiB`, also `Ki`, `K`...).
pub fn byte_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let digits = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "ki" | "kib" => 10,
        "m" | "mi" | "mib" => 20,
        "g" | "gi" | "gib" => 30,
        "t" | "ti" | "tib" => 40,
        _ => {
            return Err(format!(
                "invalid size `{text}`: use bytes or a unit such as 512MiB or 2GiB"
            ));
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("invalid size `{text}`: use bytes or a unit such as 512MiB or 2GiB"))
}

/// helm's colour modes, refused in helm's words.
/// One path component as OCI names allow it (lower case, digits, `._-`).
fn oci_namespace(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
        && text.as_bytes()[0].is_ascii_alphanumeric();
    if ok {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "`{text}` is not one OCI name component (lower-case letters, digits, `.`, `_`, `-`)"
        ))
    }
}

fn color_mode(text: &str) -> Result<String, String> {
    match text {
        "never" | "auto" | "always" => Ok(text.to_string()),
        _ => Err(format!(
            "invalid color mode {text:?}: must be one of: never, auto, always"
        )),
    }
}

/// `template`, `lint` and `package` parsed on their own, when that succeeds.
fn fast_parse(args: &[std::ffi::OsString]) -> Option<Command> {
    match args.get(1).and_then(|a| a.to_str()) {
        Some("template") => parse_alone(args, "template").map(Command::Template),
        Some("lint") => parse_alone(args, "lint").map(Command::Lint),
        Some("package") => parse_alone(args, "package").map(Command::Package),
        _ => None,
    }
}

/// `serve ARGS` parsed with only serve's arguments known: the ChartMuseum personality's
/// translation into serve's own flags.
pub fn parse_serve_args(args: impl IntoIterator<Item = String>) -> Result<ServeArgs, clap::Error> {
    use clap::FromArgMatches;
    let matches =
        ServeArgs::augment_args(clap::Command::new("serve")).try_get_matches_from(args)?;
    ServeArgs::from_arg_matches(&matches)
}

/// `args` parsed as `chartkit NAME ...` with only NAME's arguments known, or `None` when
/// that fails for any reason.
fn parse_alone<A: Args + clap::FromArgMatches>(
    args: &[std::ffi::OsString],
    name: &'static str,
) -> Option<A> {
    let command =
        clap::Command::new("chartkit").subcommand(A::augment_args(clap::Command::new(name)));
    let matches = command.try_get_matches_from(args).ok()?;
    let (_, sub_matches) = matches.subcommand().filter(|(n, _)| *n == name)?;
    A::from_arg_matches(sub_matches).ok()
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a new chart: Helm's starter (the files `helm create` writes), or --starter.
    Create(CreateArgs),
    /// Package chart directories into versioned chart archives.
    Package(PackageArgs),
    /// Examine charts for possible issues.
    Lint(LintArgs),
    /// Render chart templates locally and print the manifests, as `helm template` does.
    Template(TemplateArgs),
    /// Show information about a chart.
    #[command(subcommand, alias = "inspect")]
    Show(ShowCommand),
    /// Verify that a packaged chart is signed by a trusted key and unmodified.
    Verify(VerifyArgs),
    /// Create and list OpenPGP keys for signing charts.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Work with chart repositories.
    #[command(subcommand)]
    Repo(RepoCommand),
    /// Serve a chart repository over HTTP (Helm's protocol and ChartMuseum's API).
    ///
    /// Serves the packages in DIR (default: the current directory), or in an S3 bucket given
    /// as s3://BUCKET[/PREFIX]. index.yaml is built at start and kept current as charts are
    /// uploaded, deleted, or added by other replicas on the same storage.
    Serve(ServeArgs),
    /// Upload a chart package to a ChartMuseum-compatible repository (such as `chartkit
    /// serve`), or to an OCI registry (`oci://HOST/PATH`) with Helm's manifest.
    Push(PushArgs),
    /// Search for charts.
    #[command(subcommand)]
    Search(SearchCommand),
    /// Download a chart from a repository, checked against the repository's digest.
    ///
    /// CHART is REPO/NAME (a repository added with `chartkit repo add`), a package URL,
    /// a chart name with --repo URL, or oci://HOST/PATH/NAME[:TAG][@DIGEST] in a registry. Packages are kept in chartkit's cache by their
    /// sha256, so a version is downloaded once and later pulls work offline.
    Pull(PullArgs),
    /// Work with KubeVela addons kept in chart repositories (versioned addon registries).
    ///
    /// `chartkit package` packs an addon directory (metadata.yaml, no Chart.yaml) into a
    /// package that is both a chart and an addon; `chartkit lint` checks its metadata.
    #[command(subcommand)]
    Addon(AddonCommand),
    /// Manage a chart's dependencies: list them, resolve them into Chart.lock, vendor
    /// their packages into charts/.
    #[command(subcommand, visible_alias = "dep", alias = "dependencies")]
    Dependency(DependencyCommand),
    /// Log in to or out of an OCI registry; the credentials go to helm's registry config,
    /// so a login by either tool serves both.
    #[command(subcommand)]
    Registry(RegistryCommand),
    /// Copy charts (with their .prov files, and optionally their dependencies) from a
    /// repository or an OCI registry into a directory with an index.yaml (for `chartkit
    /// serve DIR`) or into another registry, where the original cannot be reached.
    /// Everything is fetched before anything is written; re-running copies only what is
    /// new.
    Mirror(MirrorArgs),
    /// Run a Kubernetes API server on this machine that kubectl and helm accept as a
    /// cluster: objects are kept and controllers simulated, no container runs.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// List releases (the latest revision of each), as `helm list` does.
    #[command(visible_alias = "ls")]
    List(ListArgs),
    /// Fetch a release's history.
    #[command(visible_alias = "hist")]
    History(HistoryArgs),
    /// Display the status of the named release.
    Status(StatusArgs),
    /// Download extended information of a named release.
    #[command(subcommand)]
    Get(GetCommand),
    /// Install a chart into the cluster as a release, as `helm install` does.
    Install(InstallArgs),
    /// Upgrade a release to a new chart or new values.
    Upgrade(UpgradeArgs),
    /// Uninstall a release.
    #[command(visible_alias = "un", alias = "delete", alias = "del")]
    Uninstall(UninstallArgs),
    /// Roll a release back to a previous revision.
    Rollback(RollbackArgs),
    /// Run a release's tests (its `helm.sh/hook: test` Pods and Jobs).
    Test(TestArgs),
    /// Show what an upgrade or a rollback would change, object by object, as the
    /// helm-diff plugin shows it, or what changed between two revisions.
    ///
    /// The objects are prepared as the operation prepares them and sent to the API
    /// server as a dry run (server-side apply with dryRun=All, or the client-side merge
    /// the release uses), so defaults and admission changes show; objects the chart drops
    /// are shown as the cluster has them. Nothing is written.
    #[command(subcommand)]
    Diff(DiffCommand),
    /// Install, list or uninstall Helm plugins, in helm's plugin directory (HELM_PLUGINS),
    /// so that helm and chartkit share them.
    ///
    /// A plugin's command (`chartkit NAME ARGS...`) and its hooks run with no time limit,
    /// as in helm; Ctrl-C, SIGTERM, SIGHUP and SIGQUIT sent to chartkit are passed on to
    /// the plugin, chartkit waits for it to end and exits with its status (128 + the
    /// signal when one ended it), and an install whose hook was interrupted is undone.
    #[command(subcommand)]
    Plugin(crate::cli_helm::PluginCommand),
    /// Print the environment helm (and every plugin) works with: `HELM_*` settings and
    /// their values, or one of them.
    Env(crate::cli_helm::EnvArgs),
    /// Print chartkit's version, in helm's format.
    Version(crate::cli_helm::VersionArgs),
    /// Write a shell completion script (bash, zsh, fish, powershell); it completes
    /// commands, flags, and release names from the cluster.
    Completion(crate::cli_helm::CompletionArgs),
    /// Candidates for a completion script (helm's `__complete` protocol).
    #[command(name = "__complete", hide = true)]
    Complete(crate::cli_helm::CompleteArgs),
    /// `chartkit NAME ARGS...` runs the installed cli/v1 plugin NAME with ARGS and the
    /// environment helm gives plugins.
    #[command(external_subcommand)]
    External(Vec<OsString>),
}

#[derive(Debug, Subcommand)]
pub enum DiffCommand {
    /// Show a diff explaining what an upgrade would change.
    Upgrade(Box<DiffUpgradeArgs>),
    /// Show a diff explaining what a rollback would change (default: to the revision
    /// before the newest).
    Rollback(DiffRollbackArgs),
    /// Show the diff between the manifests of two revisions (one revision: between it
    /// and the newest), from the release records alone.
    Revision(DiffRevisionArgs),
}

/// helm-diff's output flags, shared by the diff commands.
#[derive(Debug, Args)]
pub struct DiffOutputArgs {
    /// Lines of context around changes; -1 (the default, as helm-diff's) prints each
    /// changed object whole. Default: HELM_DIFF_OUTPUT_CONTEXT, else -1.
    #[arg(
        short = 'C',
        long = "context",
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub context: Option<i64>,
    /// `diff` (each changed object's lines), `simple` (a line per object and a plan
    /// line) or `json` (a list of {api, kind, namespace, name, change}).
    #[arg(long, default_value = "diff", value_parser = ["diff", "simple", "json"])]
    pub output: String,
    /// Exit with status 2 when there are changes (0 when none).
    #[arg(long = "detailed-exitcode")]
    pub detailed_exitcode: bool,
    /// No colours, even on a terminal (they are used only on one, and not when TERM is
    /// dumb; HELM_DIFF_COLOR=true|false and --color=always|never decide otherwise).
    #[arg(long = "no-color")]
    pub no_color: bool,
    /// Show Secret values as the objects have them instead of masked.
    #[arg(long = "show-secrets")]
    pub show_secrets: bool,
    /// Show Secret values decoded (under stringData) instead of masked.
    #[arg(long = "show-secrets-decoded")]
    pub show_secrets_decoded: bool,
    /// Report changes to Secrets without their lines (same as --suppress Secret).
    #[arg(short = 'q', long = "suppress-secrets")]
    pub suppress_secrets: bool,
    /// Report changes to objects of this kind without their lines (repeatable).
    #[arg(long = "suppress", value_name = "KIND")]
    pub suppress: Vec<String>,
    /// Leave out of the diff the lines that match this regular expression (Go's syntax;
    /// repeatable).
    #[arg(long = "suppress-output-line-regex", value_name = "REGEX")]
    pub suppress_output_line_regex: Vec<String>,
    /// Compare the release's test hooks too.
    #[arg(long = "include-tests")]
    pub include_tests: bool,
}

#[derive(Debug, Args)]
pub struct DiffUpgradeArgs {
    /// The release.
    pub release: String,
    /// The chart: a directory, a package, REPO/NAME, a package URL, or NAME with --repo.
    pub chart: String,
    #[command(flatten)]
    pub source: ChartSourceArgs,
    /// Fetch the dependencies Chart.yaml names into charts/ first when some are
    /// missing (a chart directory only), as `chartkit dependency update` does.
    #[arg(long = "dependency-update")]
    pub dependency_update: bool,
    #[command(flatten)]
    pub values: ValueArgs,
    /// Show a release that does not exist yet as installed (as `upgrade --install`).
    #[arg(short = 'i', long, alias = "allow-unreleased")]
    pub install: bool,
    /// Merge the new values over the last release's.
    #[arg(long = "reuse-values")]
    pub reuse_values: bool,
    /// Ignore the last release's values; use the chart's and the new ones only.
    #[arg(long = "reset-values")]
    pub reset_values: bool,
    /// The chart's defaults, then the last release's values, then the new ones.
    #[arg(long = "reset-then-reuse-values")]
    pub reset_then_reuse_values: bool,
    /// Leave the chart's hooks out of the diff.
    #[arg(long = "no-hooks")]
    pub no_hooks: bool,
    #[command(flatten)]
    pub writing: WritingArgs,
    /// Adopt objects that already exist, whatever release (if any) they belong to.
    #[arg(long = "take-ownership")]
    pub take_ownership: bool,
    /// Labels the upgrade would add to the record (checked as upgrade checks them).
    #[arg(short = 'l', long, value_delimiter = ',')]
    pub labels: Vec<String>,
    #[command(flatten)]
    pub render: RenderArgs,
    #[command(flatten)]
    pub ignored: DiffIgnoredUpgradeArgs,
    #[command(flatten)]
    pub diff: DiffOutputArgs,
}

/// `upgrade`'s flags that change how it runs but not what it writes, accepted so that
/// `chartkit diff upgrade` takes the same command line as `chartkit upgrade`.
#[derive(Debug, Args)]
pub struct DiffIgnoredUpgradeArgs {
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Accepted and ignored (the release namespace must exist for the dry run).
    #[arg(long = "create-namespace")]
    pub create_namespace: bool,
    /// Accepted and ignored.
    #[arg(long, alias = "rollback-on-failure")]
    pub atomic: bool,
    /// Accepted and ignored.
    #[arg(long = "cleanup-on-fail")]
    pub cleanup_on_fail: bool,
    /// Accepted and ignored.
    #[arg(long = "history-max", alias = "max-history")]
    pub history_max: Option<usize>,
    /// Accepted and ignored.
    #[arg(long)]
    pub description: Option<String>,
    /// Accepted and ignored (CRDs are not compared).
    #[arg(long = "skip-crds")]
    pub skip_crds: bool,
    /// Accepted and ignored (CRDs are not compared).
    #[arg(long = "upgrade-crds")]
    pub upgrade_crds: bool,
}

#[derive(Debug, Args)]
pub struct DiffRollbackArgs {
    /// The release.
    pub release: String,
    /// The revision to go back to (default: the one before the newest).
    pub revision: Option<i64>,
    #[command(flatten)]
    pub writing: WritingArgs,
    #[command(flatten)]
    pub diff: DiffOutputArgs,
}

#[derive(Debug, Args)]
pub struct DiffRevisionArgs {
    /// The release.
    pub release: String,
    /// One revision (compared with the newest) or two (the older first whatever the
    /// order given).
    #[arg(required = true, num_args = 1..=2, value_name = "REVISION")]
    pub revisions: Vec<i64>,
    #[command(flatten)]
    pub diff: DiffOutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Start a sandbox, write its context into the kubeconfig, and serve until stopped
    /// (Ctrl-C), or in the background with --background.
    Up(Box<SandboxUpArgs>),
    /// Stop the sandbox started with `sandbox up --background`.
    Down,
    /// Say whether a background sandbox is running, and where.
    Status,
}

#[derive(Debug, Args)]
pub struct SandboxUpArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:0")]
    pub addr: std::net::SocketAddr,
    /// Kubeconfig to merge the `chartkit-sandbox` context into (default: the first file
    /// in $KUBECONFIG, else ~/.kube/config). Other contexts are left as they are.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Keep the cluster's state in DIR, crash-safely, and start from it next time.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Serve HTTPS with a CA made for this sandbox, and require a bearer token (both go
    /// into the kubeconfig).
    #[arg(long)]
    pub tls: bool,
    /// Run in the background; stop it with `chartkit sandbox down`.
    #[arg(long, short = 'b')]
    pub background: bool,
    /// How long a pod takes to become ready once scheduled, e.g. 500ms, 2s.
    #[arg(long, value_name = "DURATION", default_value = "500ms")]
    pub pod_ready_delay: String,
    /// How long a Job's (or a test hook's) pods run before they succeed, e.g. 0s, 2s.
    #[arg(long, value_name = "DURATION")]
    pub job_duration: Option<String>,
    /// Names of the simulated nodes, comma-separated (DaemonSets run a pod on each).
    #[arg(long, value_delimiter = ',', default_value = "sandbox-node")]
    pub nodes: Vec<String>,
    /// Append one JSON line per request (verb, requestURI, userAgent, response code) to
    /// FILE, as the API server's audit log does.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Internal: the process `--background` starts, which reports its address there.
    #[arg(long, hide = true)]
    pub state_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum RegistryCommand {
    /// Check credentials against a registry and store them (helm's registry config, or a
    /// docker-credential helper it names).
    Login(RegistryLoginArgs),
    /// Remove a registry's stored credentials.
    Logout(RegistryLogoutArgs),
}

#[derive(Debug, Args)]
pub struct RegistryLoginArgs {
    /// The registry's host (and port), e.g. `ghcr.io` or `127.0.0.1:5000`.
    pub host: String,
    /// Registry username.
    #[arg(short = 'u', long)]
    pub username: Option<String>,
    /// Registry password or identity token (prefer --password-stdin).
    #[arg(short = 'p', long)]
    pub password: Option<String>,
    /// Read the password or identity token from stdin.
    #[arg(long = "password-stdin", conflicts_with = "password")]
    pub password_stdin: bool,
    /// Skip verifying the registry's certificate.
    #[arg(long)]
    pub insecure: bool,
    /// CA bundle (PEM) to verify the registry's certificate.
    #[arg(long = "ca-file")]
    pub ca_file: Option<PathBuf>,
    /// Client certificate (PEM) for registries that ask for one.
    #[arg(long = "cert-file")]
    pub cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long = "key-file")]
    pub key_file: Option<PathBuf>,
    /// Talk to the registry over plain http://.
    #[arg(long = "plain-http")]
    pub plain_http: bool,
}

#[derive(Debug, Args)]
pub struct RegistryLogoutArgs {
    /// The registry's host (and port).
    pub host: String,
}

#[derive(Debug, Subcommand)]
pub enum DependencyCommand {
    /// List the dependencies of a chart and the state of each in charts/.
    ///
    /// Statuses are helm's: ok, missing, wrong version, misnamed, unpacked, invalid
    /// version, corrupt, too many matches. Nothing is fetched.
    #[command(visible_alias = "ls")]
    List(DependencyListArgs),
    /// Resolve the dependencies in Chart.yaml against their repositories, vendor the
    /// packages into charts/ and write Chart.lock (helm's format and digest).
    ///
    /// Repositories are named by URL (configured or not), `@NAME`/`alias:NAME`, or
    /// `file://PATH` (packaged on the fly). Indexes are refreshed with conditional
    /// requests; packages come from the content cache when it has them.
    #[command(visible_alias = "up")]
    Update(DependencyFetchArgs),
    /// Rebuild charts/ from Chart.lock, fetching only what the cache does not hold.
    ///
    /// With every locked package cached, no connection is made. Without a lock this is
    /// `dependency update`. A lock whose digest does not match Chart.yaml is refused.
    Build(DependencyFetchArgs),
}

#[derive(Debug, Args)]
pub struct DependencyFetchArgs {
    /// The chart directory.
    #[arg(default_value = ".")]
    pub chart: PathBuf,
    /// Verify each package against its .prov signature (update: every package must have
    /// one; build: those that have one, with a warning for the others).
    #[arg(long)]
    pub verify: bool,
    /// Public keys trusted for --verify. Default, as helm's: $GNUPGHOME/pubring.gpg, else
    /// ~/.gnupg/pubring.gpg.
    #[arg(long)]
    pub keyring: Option<PathBuf>,
    /// Use the cached repository indexes as they are (an index never downloaded is still
    /// fetched).
    #[arg(long = "skip-refresh")]
    pub skip_refresh: bool,
    /// How OCI registries (`repository: oci://...`) are reached: credentials over the
    /// stored login, TLS files, --plain-http.
    #[command(flatten)]
    pub access: RepoAccessArgs,
}

#[derive(Debug, Args)]
pub struct MirrorArgs {
    /// What to copy: a configured repository's name or a repository URL (all its
    /// charts), `REPO/NAME` (one chart), or `oci://HOST/PATH/NAME` (a chart in a
    /// registry: every version tag, or the one `:TAG` or `@sha256:DIGEST` names).
    #[arg(value_name = "REPO[/NAME]|oci://HOST/PATH/NAME")]
    pub source: String,
    /// Copy only versions in this range (helm's semver constraints); default: all.
    #[arg(long)]
    pub versions: Option<String>,
    /// Also copy the charts the copied charts' dependencies resolve to, transitively,
    /// from whichever repositories or registries (`oci://`) they are in.
    #[arg(long = "with-dependencies")]
    pub with_dependencies: bool,
    /// Where to copy: a directory (created if missing; gets an index.yaml with relative
    /// URLs), or `oci://HOST/PATH`, a registry each chart is pushed to as `push` pushes
    /// it (Helm's manifest, with its `.prov`).
    #[arg(long, value_name = "DIR|oci://HOST/PATH")]
    pub to: String,
    // Credentials and TLS for the registries (source and target), as pull and push
    // take them; without --username, what `registry login` stored.
    #[command(flatten)]
    pub access: RepoAccessArgs,
}

#[derive(Debug, Args)]
pub struct DependencyListArgs {
    /// The chart (a directory or a packaged chart).
    #[arg(default_value = ".")]
    pub chart: PathBuf,
    /// Widest a table column may be (0: no limit).
    #[arg(long = "max-col-width", default_value_t = 80)]
    pub max_col_width: usize,
}

#[derive(Debug, Subcommand)]
pub enum SearchCommand {
    /// Search the indexes of the repositories added with `chartkit repo add`, as
    /// `helm search repo` does: the keyword is looked for in chart names, then
    /// descriptions and keywords. Without a keyword, every chart is listed.
    Repo(SearchRepoArgs),
    /// Search Artifact Hub (or another hub with its Monocular-compatible API) for charts,
    /// as `helm search hub` does.
    Hub(crate::cli_helm::SearchHubArgs),
}

#[derive(Debug, Args)]
pub struct SearchRepoArgs {
    /// The keyword (several words are searched for as one phrase).
    pub keyword: Vec<String>,
    /// Show every version that matches, not only the newest.
    #[arg(short = 'l', long)]
    pub versions: bool,
    /// A version range (Helm's semver constraints), e.g. `^1.2`.
    #[arg(long)]
    pub version: Option<String>,
    /// Include pre-releases (`>0.0.0-0`); ignored with --version.
    #[arg(long)]
    pub devel: bool,
    /// The keyword is a regular expression (Go's syntax).
    #[arg(short = 'r', long)]
    pub regexp: bool,
    /// Widest a table column may be; longer text is cut with `...` (0: no limit).
    #[arg(long = "max-col-width", default_value_t = 50)]
    pub max_col_width: usize,
    /// Output format: `table`, `json` or `yaml`.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// Fail (exit status 1, nothing printed) when no chart matches.
    #[arg(long = "fail-on-no-result")]
    pub fail_on_no_result: bool,
}

/// Credentials and TLS settings for a repository, as helm's flags name them.
#[derive(Debug, Args, Default, Clone)]
pub struct RepoAccessArgs {
    /// Username for basic auth.
    #[arg(long, env = env::REPO_USERNAME)]
    pub username: Option<String>,
    /// Password for basic auth.
    #[arg(long, env = env::REPO_PASSWORD, hide_env_values = true)]
    pub password: Option<String>,
    /// Bearer token (instead of a username and password).
    #[arg(long, env = env::REPO_TOKEN, hide_env_values = true)]
    pub token: Option<String>,
    /// Send the credentials to every host, not only the repository's (chart URLs may
    /// point elsewhere).
    #[arg(long = "pass-credentials")]
    pub pass_credentials: bool,
    /// CA bundle (PEM) to verify the server's certificate.
    #[arg(long = "ca-file")]
    pub ca_file: Option<PathBuf>,
    /// Client certificate (PEM) for servers that ask for one.
    #[arg(long = "cert-file")]
    pub cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long = "key-file")]
    pub key_file: Option<PathBuf>,
    /// Skip verifying the server's certificate.
    #[arg(long = "insecure-skip-tls-verify")]
    pub insecure_skip_tls_verify: bool,
    /// Talk to an OCI registry over plain http:// (http:// repository URLs are fetched
    /// as given either way).
    #[arg(long = "plain-http")]
    pub plain_http: bool,
}

#[derive(Debug, Args)]
pub struct PullArgs {
    /// REPO/NAME, a package URL, a chart name with --repo, or oci://HOST/PATH/NAME; several
    /// (each with the same flags) are fetched concurrently and reported in this order.
    #[arg(value_name = "CHART", required = true)]
    pub charts: Vec<String>,
    /// Repository URL to find CHART in (it need not be added).
    #[arg(long)]
    pub repo: Option<String>,
    /// A version or version range (Helm's semver constraints); an exact version wins.
    #[arg(long)]
    pub version: Option<String>,
    /// Include pre-releases (`>0.0.0-0`); ignored with --version.
    #[arg(long)]
    pub devel: bool,
    /// Directory to write the package (or the unpacked chart) to.
    #[arg(short = 'd', long = "destination", default_value = ".")]
    pub destination: PathBuf,
    /// Unpack the chart after downloading it.
    #[arg(long)]
    pub untar: bool,
    /// With --untar, the directory (under --destination) to unpack into.
    #[arg(long, default_value = ".", requires = "untar")]
    pub untardir: PathBuf,
    /// Download the provenance file (.prov) too.
    #[arg(long)]
    pub prov: bool,
    /// Verify the package against its provenance file before writing it.
    #[arg(long)]
    pub verify: bool,
    /// Public keys trusted for --verify (default, as helm's: GnuPG's pubring.gpg).
    #[arg(long)]
    pub keyring: Option<PathBuf>,
    #[command(flatten)]
    pub access: RepoAccessArgs,
    /// Seconds to wait for each download.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
}

#[derive(Debug, Subcommand)]
pub enum AddonCommand {
    /// Pick versions for an addon and all its dependencies from a repository index.
    ///
    /// Every dependency range and, when the cluster's versions are given, every
    /// `system.kubernetes`/`system.vela` requirement is met; newer versions are preferred.
    /// When no choice works, says which requirement cannot be met and why.
    Resolve(AddonResolveArgs),
}

#[derive(Debug, Args)]
pub struct AddonResolveArgs {
    /// The addon's name.
    pub name: String,
    /// A version or version range for the addon (default: its newest release).
    #[arg(long)]
    pub version: Option<String>,
    /// The cluster's Kubernetes version, checked against `system.kubernetes`.
    #[arg(long = "kube-version", value_name = "VERSION")]
    pub kube_version: Option<String>,
    /// The cluster's KubeVela version, checked against `system.vela`.
    #[arg(long = "vela-version", value_name = "VERSION")]
    pub vela_version: Option<String>,
    /// A local index file (YAML or JSON) to resolve from.
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "repo",
        conflicts_with = "repo"
    )]
    pub index: Option<PathBuf>,
    /// The addon repository: a name added with `chartkit repo add` (its cached index), or
    /// a URL (its index.yaml is fetched and cached).
    #[arg(long, value_name = "NAME|URL")]
    pub repo: Option<String>,
    /// Output format: `table`, `json` or `yaml`.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Directory of chart packages, or s3://BUCKET[/PREFIX] (credentials, region and
    /// endpoint from the AWS_* environment variables; AWS_ENDPOINT_URL for MinIO and the like),
    /// gs://BUCKET[/PREFIX] (GOOGLE_APPLICATION_CREDENTIALS; STORAGE_EMULATOR_HOST for an
    /// emulator) or az://CONTAINER[/PREFIX] (AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_ACCESS_KEY;
    /// AZURE_STORAGE_ENDPOINT for Azurite).
    #[arg(default_value = ".")]
    pub storage: String,
    /// Address to listen on, HOST:PORT; the host is an IP address or a name such as
    /// localhost (the first of its addresses that can be bound is used; [::1]:PORT for
    /// IPv6). Port 0 picks a free port.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8879")]
    pub addr: String,
    /// Absolute URL of the repository, used for chart URLs in index.yaml (relative by default).
    #[arg(long)]
    pub url: Option<String>,
    /// Let an upload replace an existing chart version.
    #[arg(long = "allow-overwrite")]
    pub allow_overwrite: bool,
    /// The first component of the charts' OCI names: `oci://HOST/NAMESPACE/NAME`.
    #[arg(long = "oci-namespace", default_value = "charts", value_parser = oci_namespace)]
    pub oci_namespace: String,
    /// Also keep OCI artifacts that are not charts (signatures, SBOMs) beside the charts.
    #[arg(long = "oci-artifacts")]
    pub oci_artifacts: bool,
    /// Refuse deletions: DELETE /api/charts/NAME/VERSION answers 404 as ChartMuseum's
    /// does, and the registry's manifest and blob DELETEs 405 UNSUPPORTED.
    #[arg(long = "disable-delete")]
    pub disable_delete: bool,
    /// Serve every route under this path (`/charts`: /charts/index.yaml,
    /// /charts/api/charts...), as ChartMuseum's --context-path does.
    #[arg(long = "context-path", value_name = "PATH")]
    pub context_path: Option<String>,
    /// Serve none of ChartMuseum's /api/ routes (they answer 404, as ChartMuseum's do).
    #[arg(long = "disable-api")]
    pub disable_api: bool,
    /// Ignore `?force` on uploads (by default it replaces an existing version, as in
    /// ChartMuseum).
    #[arg(long = "disable-force-overwrite")]
    pub disable_force_overwrite: bool,
    /// Serve a repository per path of N segments (ChartMuseum's multi-tenancy):
    /// /ORG/REPO/index.yaml, /api/ORG/REPO/charts..., oci://HOST/ORG/REPO/NAME at 2, each
    /// with its own index, kept under ORG/REPO/ in the storage. 0: one repository.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub depth: usize,
    /// Serve a repository at whatever path precedes a route (/a/index.yaml,
    /// /a/b/c/index.yaml, /index.yaml), as ChartMuseum's --depth-dynamic matches it.
    #[arg(long = "depth-dynamic")]
    pub depth_dynamic: bool,
    /// Read ChartMuseum's flags, environment variables and --config file instead of
    /// chartkit's (as when the binary is run as `chartmuseum`); must come right after
    /// `serve`.
    #[arg(long = "chartmuseum")]
    pub chartmuseum: bool,
    /// Seconds between the registry's garbage collections (the first is at start): blobs
    /// no manifest references, manifests of deleted chart versions, abandoned uploads.
    #[arg(
        long = "oci-gc-interval",
        value_name = "SECONDS",
        default_value_t = 600.0
    )]
    pub oci_gc_interval: f64,
    /// Seconds a registry file is kept whatever references it (a push uploads its blobs
    /// before the manifest naming them); upload sessions idle this long (at most 15
    /// minutes) are dropped.
    #[arg(
        long = "oci-gc-grace",
        value_name = "SECONDS",
        default_value_t = 3600.0
    )]
    pub oci_gc_grace: f64,
    /// Largest upload accepted, in bytes.
    #[arg(long = "max-upload-size", default_value_t = 20 * 1024 * 1024)]
    pub max_upload_size: usize,
    /// Uploads received and checked at once; others wait up to 10 seconds, then get 503.
    /// Memory for uploads stays below this many times --max-upload-size plus the chart
    /// size limit.
    #[arg(long = "max-concurrent-uploads", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub max_concurrent_uploads: u16,
    /// The most bytes one chart version may add to index.yaml (its entry as JSON); larger
    /// uploads get 400. Keeps a few small uploads from making the index huge.
    #[arg(long = "max-index-entry-size", default_value_t = 64 * 1024)]
    pub max_index_entry_size: usize,
    /// Most chart packages and provenance files the storage may hold: an upload that would
    /// store more gets 507 Insufficient Storage, as from ChartMuseum (replacing a stored
    /// file is still allowed).
    #[arg(long = "max-storage-objects", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_storage_objects: Option<u64>,
    /// Versions kept of each chart: after an upload, the versions uploaded longest ago are
    /// deleted (with their .prov) until N are left, as ChartMuseum's --per-chart-limit.
    #[arg(long = "per-chart-limit", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub per_chart_limit: Option<u64>,
    /// Packages read from storage at once when reading it for changes [default: 32].
    #[arg(long = "index-limit", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub index_limit: Option<u64>,
    /// Artifact Hub's ID for this repository, served as /artifacthub-repo.yml (which
    /// answers 404 without one).
    #[arg(long = "artifact-hub-repo-id", value_name = "ID")]
    pub artifact_hub_repo_id: Option<String>,
    /// Serve no /metrics (it answers 404).
    #[arg(long = "disable-metrics")]
    pub disable_metrics: bool,
    /// Serve /metrics without credentials even with --auth-reads, as ChartMuseum does (for
    /// scrapers that send none).
    #[arg(long = "metrics-without-auth")]
    pub metrics_without_auth: bool,
    /// A multipart field an upload's package may come in besides `chart`, as ChartMuseum's
    /// --chart-post-form-field-name.
    #[arg(
        long = "chart-form-field",
        value_name = "NAME",
        default_value = "chart"
    )]
    pub chart_form_field: String,
    /// A multipart field an upload's .prov may come in besides `prov`.
    #[arg(long = "prov-form-field", value_name = "NAME", default_value = "prov")]
    pub prov_form_field: String,
    /// Serve index.yaml as JSON, as ChartMuseum's --json-index (helm reads it as well, and
    /// faster for a large repository).
    #[arg(long = "json-index")]
    pub json_index: bool,
    /// Accept only charts with a .prov signed by a key in --keyring.
    #[arg(long = "require-signature", requires = "keyring")]
    pub require_signature: bool,
    /// Public keys trusted (armored or binary): uploads must be signed by one of them with
    /// --require-signature, and the web view shows versions they sign as verified.
    #[arg(long)]
    pub keyring: Option<PathBuf>,
    /// Serve no web pages: `/` answers with the plain-text banner only, and `/charts/NAME`
    /// is not found.
    #[arg(long = "disable-web")]
    pub disable_web: bool,
    /// The repository name the web view's install commands use (`helm repo add NAME URL`);
    /// by default the first label of the host name the browser used.
    #[arg(long = "web-repo-name", value_name = "NAME")]
    pub web_repo_name: Option<String>,
    /// htpasswd file with bcrypt hashes (`htpasswd -B`); uploads and deletes then need basic auth.
    #[arg(long = "basic-auth-file")]
    pub basic_auth_file: Option<PathBuf>,
    /// File of bearer tokens, one per line; uploads and deletes then need one of them.
    #[arg(long = "bearer-token-file")]
    pub bearer_token_file: Option<PathBuf>,
    /// Require authentication for reads too (everything but /health and /ready).
    #[arg(long = "auth-reads")]
    pub auth_reads: bool,
    /// PEM certificate chain; serves HTTPS with --tls-key.
    #[arg(long = "tls-cert", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key for --tls-cert.
    #[arg(long = "tls-key", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// PEM CA certificates: clients must present a certificate they signed (with --tls-cert).
    #[arg(long = "tls-client-ca", value_name = "FILE", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
    /// PEM certificate or RSA public key of an authorization server: requests then need
    /// its JWTs (ChartMuseum's bearer auth), granting `pull` (reads, with --auth-reads) or
    /// `push` (writes) on `repo`.
    #[arg(
        long = "auth-jwt-cert",
        value_name = "FILE",
        requires_all = ["auth_jwt_realm", "auth_jwt_service"],
        conflicts_with_all = ["basic_auth_file", "bearer_token_file"]
    )]
    pub auth_jwt_cert: Option<PathBuf>,
    /// Where clients get tokens, named in the 401 challenge (with --auth-jwt-cert).
    #[arg(
        long = "auth-jwt-realm",
        value_name = "URL",
        requires = "auth_jwt_cert"
    )]
    pub auth_jwt_realm: Option<String>,
    /// The service tokens are issued for, named in the 401 challenge (with --auth-jwt-cert).
    #[arg(
        long = "auth-jwt-service",
        value_name = "NAME",
        requires = "auth_jwt_cert"
    )]
    pub auth_jwt_service: Option<String>,
    /// JMESPath expression finding the granted actions in a token's claims (default:
    /// ChartMuseum's, `access[?name=='$NAMESPACE' && type=='$ACCESS_ENTRY_TYPE'].actions[]`).
    #[arg(
        long = "auth-jwt-search-path",
        value_name = "EXPR",
        requires = "auth_jwt_cert"
    )]
    pub auth_jwt_search_path: Option<String>,
    /// Send `Access-Control-Allow-Origin: ORIGIN` with the answers of the /api/ routes.
    #[arg(long = "cors-allow-origin", value_name = "ORIGIN")]
    pub cors_allow_origin: Option<String>,
    /// Log format: `text`, or `json` for ChartMuseum's JSON lines (one per request, with
    /// its field names).
    #[arg(long = "log-format", value_enum, default_value_t = ServeLogFormat::Text)]
    pub log_format: ServeLogFormat,
    /// Log successful /health requests too (with --log-format json).
    #[arg(long = "log-health")]
    pub log_health: bool,
    /// Log request latency as whole nanoseconds rather than Go's duration text (with
    /// --log-format json).
    #[arg(long = "log-latency-integer")]
    pub log_latency_integer: bool,
    /// Seconds between checks of the storage for changes made elsewhere.
    #[arg(long = "refresh-interval", default_value_t = 5.0)]
    pub refresh_interval: f64,
    /// Seconds a client may take to send a request line and headers, counted from the
    /// connection's start (after TLS), or on a kept-alive connection from the request's
    /// first byte; slower connections are closed.
    #[arg(
        long = "read-header-timeout",
        value_name = "SECONDS",
        default_value_t = 10.0
    )]
    pub read_header_timeout: f64,
    /// Seconds a client may take to send a request body, counted from the end of its
    /// headers; an upload that has not all arrived by then gets 408.
    #[arg(long = "read-timeout", value_name = "SECONDS", default_value_t = 60.0)]
    pub read_timeout: f64,
    /// Seconds a connection may stay open with no request in flight.
    #[arg(long = "idle-timeout", value_name = "SECONDS", default_value_t = 120.0)]
    pub idle_timeout: f64,
    /// Seconds a client may take to finish the TLS handshake (with --tls-cert).
    #[arg(
        long = "tls-handshake-timeout",
        value_name = "SECONDS",
        default_value_t = 10.0
    )]
    pub tls_handshake_timeout: f64,
    /// Most connections open at once. At the limit the connection idle longest is closed
    /// to make room; when none is idle, new ones wait. Default: the open-file limit (whose
    /// soft value is raised to the hard one at start) less up to 576 descriptors kept for
    /// storage, at most 65536.
    #[arg(long = "max-connections", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,
}

/// `chartkit serve --log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServeLogFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// The chart package (.tgz); several (pushed concurrently, reported in this order)
    /// only to an OCI registry.
    #[arg(value_name = "CHART", required = true, num_args = 1..)]
    pub charts: Vec<PathBuf>,
    /// Repository URL, or the name of a repository added with `chartkit repo add` or
    /// `helm repo add`.
    pub repo: String,
    /// Upload CHART.prov with the package.
    #[arg(long)]
    pub prov: bool,
    /// Username for basic auth (default: the one `helm repo add` stored).
    #[arg(long, env = env::REPO_USERNAME)]
    pub username: Option<String>,
    /// Password for basic auth.
    #[arg(long, env = env::REPO_PASSWORD, hide_env_values = true)]
    pub password: Option<String>,
    /// Bearer token.
    #[arg(long, env = env::REPO_TOKEN, hide_env_values = true)]
    pub token: Option<String>,
    /// CA bundle (PEM) to verify the server's certificate.
    #[arg(long = "ca-file")]
    pub ca_file: Option<PathBuf>,
    /// Skip verifying the server's certificate.
    #[arg(long = "insecure-skip-tls-verify")]
    pub insecure_skip_tls_verify: bool,
    /// Client certificate (PEM) for an OCI registry that asks for one.
    #[arg(long = "cert-file")]
    pub cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long = "key-file")]
    pub key_file: Option<PathBuf>,
    /// Talk to an OCI registry over plain http://.
    #[arg(long = "plain-http")]
    pub plain_http: bool,
    /// Seconds to wait for the server.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
}

#[derive(Debug, Subcommand)]
pub enum RepoCommand {
    /// Generate an index file for a directory of packaged charts (`*.tgz` and `*/*.tgz`).
    ///
    /// Writes DIR/index.yaml atomically. Packages unchanged since the last run keep their
    /// entry and `created` time and are not read again.
    Index(RepoIndexArgs),
    /// Add a chart repository: its index is downloaded and checked first.
    Add(RepoAddArgs),
    /// List the chart repositories.
    #[command(visible_alias = "ls")]
    List(RepoListArgs),
    /// Remove chart repositories (and their cached indexes).
    #[command(visible_alias = "rm")]
    Remove(RepoRemoveArgs),
    /// Get the latest indexes of chart repositories, all at once.
    ///
    /// An index that has not changed since the last update is not downloaded again
    /// (the server is asked with If-None-Match/If-Modified-Since).
    #[command(visible_alias = "up")]
    Update(RepoUpdateArgs),
    /// Add the repositories from Helm's repositories.yaml (HELM_REPOSITORY_CONFIG, else
    /// HELM_CONFIG_HOME/repositories.yaml, else Helm's default) that chartkit does not
    /// have yet. Only useful when chartkit keeps its own list (CHARTKIT_CONFIG_HOME or
    /// --repository-config): by default chartkit uses Helm's list itself.
    ImportHelm(RepoImportHelmArgs),
    /// Choose chart versions from an index file, as `helm search repo` and `helm pull` do.
    ///
    /// Prints what `helm search repo -o json` prints (or `-o table`, `-o yaml`). The parsed
    /// index is cached in chartkit's cache directory (CHARTKIT_CACHE_HOME, else
    /// XDG_CACHE_HOME/chartkit, else ~/.cache/chartkit) and reused while the index is
    /// unchanged.
    Query(RepoQueryArgs),
}

#[derive(Debug, Args)]
pub struct RepoAddArgs {
    /// Name for the repository.
    pub name: String,
    /// Its URL (the directory holding index.yaml).
    pub url: String,
    /// Read the password from stdin.
    #[arg(long = "password-stdin", conflicts_with = "password")]
    pub password_stdin: bool,
    /// Replace the repository if one of that name exists with other settings.
    #[arg(long = "force-update")]
    pub force_update: bool,
    #[command(flatten)]
    pub access: RepoAccessArgs,
    /// Seconds to wait for the index download.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct RepoListArgs {
    /// Output format: `table`, `json` or `yaml`.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// Leave the header out of the table.
    #[arg(long = "no-headers")]
    pub no_headers: bool,
}

#[derive(Debug, Args)]
pub struct RepoRemoveArgs {
    /// Names of the repositories to remove.
    #[arg(required = true)]
    pub names: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RepoUpdateArgs {
    /// Only these repositories (default: all).
    pub names: Vec<String>,
    /// Seconds to wait for each download.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct RepoImportHelmArgs {
    /// Replace chartkit's repositories of the same names with Helm's.
    #[arg(long = "force-update")]
    pub force_update: bool,
}

#[derive(Debug, Args)]
pub struct RepoIndexArgs {
    /// Directory holding the chart packages.
    pub dir: PathBuf,
    /// URL of the chart repository; chart URLs are made from it.
    #[arg(long, default_value = "")]
    pub url: String,
    /// Merge the generated index into this index file (created if missing).
    #[arg(long)]
    pub merge: Option<PathBuf>,
    /// Write the index as JSON (the file is still index.yaml).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RepoQueryArgs {
    /// The index file (YAML or JSON).
    pub index: PathBuf,
    /// Chart name.
    pub chart: String,
    /// A version or version range (Helm's semver constraints).
    #[arg(long)]
    pub version: Option<String>,
    /// Include pre-releases (like `--version '>0.0.0-0'`); ignored with --version.
    #[arg(long)]
    pub devel: bool,
    /// List every matching version, newest first, instead of the newest only.
    #[arg(short = 'l', long)]
    pub versions: bool,
    /// Choose as `helm pull --version` does (an exact version text wins) and print the
    /// full entry (as JSON).
    #[arg(long, conflicts_with_all = ["output", "max_col_width"])]
    pub pull: bool,
    /// Output format: `table`, `json` or `yaml`, each as `helm search repo -o` prints it
    /// (chartkit's default is json).
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Json)]
    pub output: OutputFormat,
    /// Widest a table column may be; longer text is cut with `...` (0: no limit).
    #[arg(long = "max-col-width", default_value_t = 50)]
    pub max_col_width: usize,
}

/// The formats of helm's `-o/--output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
    Yaml,
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Directory to create; the chart is named after its last component.
    pub name: PathBuf,
    /// A starter chart to copy instead of Helm's: a name under $HELM_DATA_HOME/starters
    /// (default ~/.local/share/helm/starters) or an absolute path. `<CHARTNAME>` in its
    /// templates and values.yaml becomes the new chart's name.
    #[arg(short = 'p', long)]
    pub starter: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PackageArgs {
    /// Chart directories to package.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Directory to write the packages to.
    #[arg(short = 'd', long = "destination", default_value = ".")]
    pub destination: PathBuf,
    /// Set the chart version (a semantic version).
    #[arg(long)]
    pub version: Option<String>,
    /// Set the app version.
    #[arg(long = "app-version")]
    pub app_version: Option<String>,
    /// Sign the package, writing NAME-VERSION.tgz.prov beside it.
    #[arg(long, requires = "key")]
    pub sign: bool,
    /// Key to sign with: a name, an email or a fingerprint from the keyring.
    #[arg(long, requires = "sign")]
    pub key: Option<String>,
    /// Keyring holding the secret key (armored or binary, e.g. `gpg --export-secret-keys`).
    /// Default, as helm's: $GNUPGHOME/pubring.gpg, else ~/.gnupg/pubring.gpg.
    #[arg(long, requires = "sign")]
    pub keyring: Option<PathBuf>,
    /// File whose first line is the secret key's passphrase; `-` reads it from stdin.
    #[arg(long = "passphrase-file", requires = "sign")]
    pub passphrase_file: Option<PathBuf>,
    /// Update dependencies from Chart.yaml into charts/ before packaging (as
    /// `chartkit dependency update`).
    #[arg(short = 'u', long = "dependency-update")]
    pub dependency_update: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The packaged chart (.tgz); its provenance file is CHART.prov.
    pub chart: PathBuf,
    /// Keyring with the public keys of trusted signers (armored or binary). Default, as
    /// helm's: $GNUPGHOME/pubring.gpg, else ~/.gnupg/pubring.gpg.
    #[arg(long)]
    pub keyring: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Generate an Ed25519 signing key: DIR/secret.asc (mode 0600) and DIR/public.asc.
    Generate(KeyGenerateArgs),
    /// List the keys in a keyring.
    List(KeyListArgs),
}

#[derive(Debug, Args)]
pub struct KeyGenerateArgs {
    /// Name in the key's user id.
    #[arg(long)]
    pub name: String,
    /// Email in the key's user id.
    #[arg(long)]
    pub email: String,
    /// Protect the secret key with the passphrase on this file's first line; `-` reads
    /// it from stdin.
    #[arg(long = "passphrase-file")]
    pub passphrase_file: Option<PathBuf>,
    /// Directory to write secret.asc and public.asc to (created if missing).
    #[arg(short = 'o', long = "output", default_value = ".")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct KeyListArgs {
    /// Keyring file to list (armored or binary, public or secret).
    #[arg(long)]
    pub keyring: PathBuf,
}

/// The value flags shared by template and lint, applied in Helm 4's order: `-f` files,
/// then `--set-json`, `--set`, `--set-string`, `--set-file`, `--set-literal`.
#[derive(Debug, Args, Default)]
pub struct ValueArgs {
    /// Values files (YAML), `-` for stdin; later files win. Comma-separated lists allowed.
    #[arg(short = 'f', long = "values", value_delimiter = ',')]
    pub values: Vec<String>,
    /// Set values: `a.b=1,list[0]=x`; true/false/null and integers are typed.
    #[arg(long = "set")]
    pub set: Vec<String>,
    /// Set values as strings.
    #[arg(long = "set-string")]
    pub set_string: Vec<String>,
    /// Set values from files: `key=path`.
    #[arg(long = "set-file")]
    pub set_file: Vec<String>,
    /// Set JSON values: `key=<json>` or a whole JSON object.
    #[arg(long = "set-json")]
    pub set_json: Vec<String>,
    /// Set one value verbatim: everything after the first `=` is the string.
    #[arg(long = "set-literal")]
    pub set_literal: Vec<String>,
}

#[derive(Debug, Args)]
#[command(override_usage = "chartkit template [OPTIONS] [NAME] CHART")]
pub struct TemplateArgs {
    /// `[NAME] CHART`: the release name (default `release-name`), then a chart directory,
    /// packaged chart (.tgz), REPO/NAME, package URL, or NAME with --repo.
    // One list, so that flags may come between the two as helm allows
    // (`template rel --include-crds ./chart`).
    #[arg(value_name = "CHART", required = true)]
    pub positionals: Vec<String>,
    #[command(flatten)]
    pub values: ValueArgs,
    /// Namespace of the release.
    #[arg(short = 'n', long, default_value = "default")]
    pub namespace: String,
    /// Kubernetes version for .Capabilities.KubeVersion (default v1.35.0).
    #[arg(long = "kube-version")]
    pub kube_version: Option<String>,
    /// Extra API versions for .Capabilities.APIVersions (repeatable, comma-separated).
    #[arg(short = 'a', long = "api-versions", value_delimiter = ',')]
    pub api_versions: Vec<String>,
    /// Include the chart's crds/ files in the output.
    #[arg(long = "include-crds")]
    pub include_crds: bool,
    /// Accepted for compatibility; CRDs are only printed with --include-crds.
    #[arg(long = "skip-crds", hide = true)]
    pub skip_crds: bool,
    /// Leave test hooks out of the output.
    #[arg(long = "skip-tests")]
    pub skip_tests: bool,
    /// Leave all hooks out of the output.
    #[arg(long = "no-hooks")]
    pub no_hooks: bool,
    /// Set .Release.IsUpgrade instead of .Release.IsInstall.
    #[arg(long = "is-upgrade")]
    pub is_upgrade: bool,
    /// Only print documents rendered from these templates (paths or globs such as
    /// `templates/*.yaml`).
    #[arg(short = 's', long = "show-only")]
    pub show_only: Vec<String>,
    /// Write each template's documents to files under this directory instead of stdout.
    #[arg(long = "output-dir")]
    pub output_dir: Option<std::path::PathBuf>,
    /// With --output-dir, put files under a directory named after the release.
    #[arg(long = "release-name")]
    pub use_release_name: bool,
    /// Do not validate values against values.schema.json.
    #[arg(long = "skip-schema-validation")]
    pub skip_schema_validation: bool,
    /// Render for the cluster (its version and API groups, as install does; --kube-version
    /// and --api-versions are ignored) and check the manifests against it: kinds it does
    /// not serve, objects another owner holds, and fields its schemas refuse (a server-side
    /// dry run). Uses the Kubernetes flags, with this command's --namespace.
    #[arg(long)]
    pub validate: bool,
    /// When the output is not valid YAML, print it anyway (each template's output under
    /// its `# Source:` line) before the error, to find the broken document.
    #[arg(long)]
    pub debug: bool,
    /// Accepted as helm accepts it: `helm template` keeps the name `release-name` with it,
    /// and refuses it together with a NAME.
    #[arg(short = 'g', long = "generate-name")]
    pub generate_name: bool,
    /// Render subcharts' NOTES.txt too (notes are never printed by template).
    #[arg(long = "render-subchart-notes")]
    pub render_subchart_notes: bool,
    /// Run `dependency update` first when dependencies are missing from charts/.
    #[arg(long = "dependency-update")]
    pub dependency_update: bool,
    #[command(flatten)]
    pub source: ChartSourceArgs,
    #[command(flatten)]
    pub install: TemplateInstallArgs,
    #[command(flatten)]
    pub post_render: crate::cli_helm::PostRenderArgs,
}

/// The flags `helm template` shares with `helm install` and that change nothing in what
/// it prints (it renders as a client-side dry run), accepted and checked as helm checks
/// them, so scripts that pass install's flags to template keep working.
#[derive(Debug, Args)]
pub struct TemplateInstallArgs {
    /// `client` (the default), or `server` to render for the cluster and check the
    /// manifests against it, as --validate does. A bare --dry-run is `client`.
    #[arg(
        long = "dry-run",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "unset",
        value_name = "MODE",
        conflicts_with = "validate"
    )]
    pub dry_run: Option<String>,
    /// A Go template (with Sprig's functions, no data) whose output is the release
    /// name, instead of NAME.
    #[arg(long = "name-template", value_name = "TEMPLATE")]
    pub name_template: Option<String>,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Labels for the release record (`k=v,k2=v2`): checked as install checks them.
    #[arg(short = 'l', long, value_delimiter = ',')]
    pub labels: Vec<String>,
    #[command(flatten)]
    pub writing: WritingArgs,
    /// Accepted as install's; nothing is written.
    #[arg(long = "create-namespace", hide = true)]
    pub create_namespace: bool,
    /// Accepted as install's; there is no release record.
    #[arg(long, hide = true)]
    pub description: Option<String>,
    /// Accepted as install's; template never prints notes.
    #[arg(long = "hide-notes", hide = true)]
    pub hide_notes: bool,
    /// Accepted as install's; nothing is written.
    #[arg(long = "take-ownership", hide = true)]
    pub take_ownership: bool,
    /// Accepted as install's; template always reuses the name.
    #[arg(long, hide = true)]
    pub replace: bool,
    /// Accepted as install's; nothing is installed to roll back.
    #[arg(long = "rollback-on-failure", hide = true)]
    pub rollback_on_failure: bool,
    /// Deprecated (helm 4): --rollback-on-failure.
    #[arg(long, hide = true)]
    pub atomic: bool,
    /// Accepted for helm's scripts: chartkit never resolves names while rendering, so
    /// `getHostByName` returns "" with or without it.
    #[arg(long = "enable-dns", hide = true)]
    pub enable_dns: bool,
    /// Accepted as install's: template does no OpenAPI check to turn off.
    #[arg(long = "disable-openapi-validation", hide = true)]
    pub disable_openapi_validation: bool,
}

#[derive(Debug, Args)]
pub struct LintArgs {
    /// Chart directories or packaged charts.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Fail on warnings as well as errors.
    #[arg(long)]
    pub strict: bool,
    /// Print only warnings and errors.
    #[arg(long)]
    pub quiet: bool,
    /// Lint the charts under each chart's charts/ directory too: every directory holding
    /// a Chart.yaml and every .tgz or .tar.gz, at any depth, as `helm lint` finds them.
    #[arg(long = "with-subcharts")]
    pub with_subcharts: bool,
    #[command(flatten)]
    pub values: ValueArgs,
    /// Namespace of the release the templates are rendered for.
    #[arg(short = 'n', long, default_value = "default")]
    pub namespace: String,
    /// Kubernetes version to render for and to judge API deprecations against.
    #[arg(long = "kube-version")]
    pub kube_version: Option<String>,
    /// Do not validate values against values.schema.json.
    #[arg(long = "skip-schema-validation")]
    pub skip_schema_validation: bool,
    /// Run `dependency update` first when dependencies are missing from charts/.
    #[arg(long = "dependency-update")]
    pub dependency_update: bool,
}

#[derive(Debug, Subcommand)]
pub enum ShowCommand {
    /// Show the chart's Chart.yaml as Helm reads it.
    Chart(ShowArgs),
    /// Show the chart's values.yaml.
    Values(ShowArgs),
    /// Show the chart's README.
    Readme(ShowArgs),
    /// Show the chart's CRDs.
    Crds(ShowArgs),
    /// Show all of the above.
    All(ShowArgs),
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A chart directory, a packaged chart (.tgz), REPO/NAME, a package URL, or NAME
    /// with --repo.
    pub chart: String,
    #[command(flatten)]
    pub source: ChartSourceArgs,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// The single-subcommand parse of the common commands gives what the full parser gives.
    /// The global Kubernetes flags are left out of the comparison: these commands never
    /// connect, and clap copies their own `--namespace` into the global one.
    #[test]
    fn sizes_take_bytes_or_binary_units() {
        assert_eq!(super::byte_size("3145728"), Ok(3 << 20));
        assert_eq!(super::byte_size("512MiB"), Ok(512 << 20));
        assert_eq!(super::byte_size("2Gi"), Ok(2 << 30));
        assert_eq!(super::byte_size("4 KiB"), Ok(4096));
        assert!(super::byte_size("a lot").is_err());
        assert!(super::byte_size("1.5GiB").is_err());
        assert!(super::byte_size("99999999999TiB").is_err());
    }

    #[test]
    fn fast_parse_agrees_with_the_full_parser() {
        use clap::Parser;
        let lines = [
            "chartkit template rel chart.tgz --namespace ns -f a.yaml -f b.yaml --set a=b,c=d",
            "chartkit template chart --generate-name --include-crds --skip-tests --show-only templates/a.yaml",
            "chartkit template rel chart --kube-version 1.29.0 --api-versions v1/Foo --set-string x=1 --is-upgrade",
            "chartkit lint web --strict --quiet -f values.yaml",
            "chartkit package web other -d out",
        ];
        for line in lines {
            let args: Vec<std::ffi::OsString> = line.split(' ').map(Into::into).collect();
            let full = super::Cli::try_parse_from(&args).unwrap();
            assert!(super::fast_parse(&args).is_some(), "{line}");
            let fast = super::Cli::from_arg_list(args).unwrap();
            assert_eq!(fast.offline, full.offline, "{line}");
            assert_eq!(
                format!("{:?}", fast.command),
                format!("{:?}", full.command),
                "{line}"
            );
        }
    }
}

/// `-o/--output` of the release commands: helm's `table`, `json` or `yaml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReleaseOutput {
    Table,
    Json,
    Yaml,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// List releases across all namespaces.
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
    /// Sort by release date.
    #[arg(short = 'd', long)]
    pub date: bool,
    /// Show deployed releases.
    #[arg(long)]
    pub deployed: bool,
    /// Show failed releases.
    #[arg(long)]
    pub failed: bool,
    /// Show pending releases.
    #[arg(long)]
    pub pending: bool,
    /// Show superseded releases.
    #[arg(long)]
    pub superseded: bool,
    /// Show uninstalled releases (if `uninstall --keep-history` was used).
    #[arg(long)]
    pub uninstalled: bool,
    /// Show releases that are currently being uninstalled.
    #[arg(long)]
    pub uninstalling: bool,
    /// A regular expression (Go's syntax); only releases whose names match are listed.
    #[arg(short = 'f', long)]
    pub filter: Option<String>,
    /// Maximum number of releases to fetch.
    #[arg(short = 'm', long, default_value_t = 256)]
    pub max: i64,
    /// Next release index in the list, used to offset from start value.
    #[arg(long, default_value_t = 0)]
    pub offset: i64,
    /// Don't print headers when using the default output format.
    #[arg(long = "no-headers")]
    pub no_headers: bool,
    /// Prints the output in the specified format.
    #[arg(short = 'o', long, value_enum, default_value_t = ReleaseOutput::Table)]
    pub output: ReleaseOutput,
    /// Reverse the sort order.
    #[arg(short = 'r', long)]
    pub reverse: bool,
    /// Selector (label query) to filter on, supports '=', '==', and '!=' (e.g. -l
    /// key1=value1,key2=value2).
    #[arg(short = 'l', long)]
    pub selector: Option<String>,
    /// Output short (quiet) listing format.
    #[arg(short = 'q', long)]
    pub short: bool,
    /// Format time using a Go time layout (e.g. "2006-01-02 15:04:05Z0700").
    #[arg(long = "time-format")]
    pub time_format: Option<String>,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The release.
    pub release: String,
    /// Maximum number of revisions to include in history.
    #[arg(long, default_value_t = 256)]
    pub max: i64,
    /// Prints the output in the specified format.
    #[arg(short = 'o', long, value_enum, default_value_t = ReleaseOutput::Table)]
    pub output: ReleaseOutput,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The release.
    pub release: String,
    /// If set, display the status of the named release with revision.
    #[arg(long, default_value_t = 0)]
    pub revision: i64,
    /// Prints the output in the specified format.
    #[arg(short = 'o', long, value_enum, default_value_t = ReleaseOutput::Table)]
    pub output: ReleaseOutput,
}

#[derive(Debug, Subcommand)]
pub enum GetCommand {
    /// Download all information for a named release.
    All(GetAllArgs),
    /// Download all hooks for a named release.
    Hooks(GetTextArgs),
    /// Download the manifest for a named release.
    Manifest(GetTextArgs),
    /// Fetch metadata for a given release.
    Metadata(GetOutputArgs),
    /// Download the notes for a named release.
    Notes(GetTextArgs),
    /// Download the values file for a named release.
    Values(GetValuesArgs),
}

#[derive(Debug, Args)]
pub struct GetTextArgs {
    /// The release.
    pub release: String,
    /// Get the named release with revision.
    #[arg(long, default_value_t = 0)]
    pub revision: i64,
}

#[derive(Debug, Args)]
pub struct GetAllArgs {
    /// The release.
    pub release: String,
    /// Get the named release with revision.
    #[arg(long, default_value_t = 0)]
    pub revision: i64,
    /// Go template for formatting the output (not supported by chartkit yet).
    #[arg(long)]
    pub template: Option<String>,
}

#[derive(Debug, Args)]
pub struct GetOutputArgs {
    /// The release.
    pub release: String,
    /// Specify release revision.
    #[arg(long, default_value_t = 0)]
    pub revision: i64,
    /// Prints the output in the specified format.
    #[arg(short = 'o', long, value_enum, default_value_t = ReleaseOutput::Table)]
    pub output: ReleaseOutput,
}

#[derive(Debug, Args)]
pub struct GetValuesArgs {
    /// The release.
    pub release: String,
    /// Dump all (computed) values.
    #[arg(short = 'a', long)]
    pub all: bool,
    /// Get the named release with revision.
    #[arg(long, default_value_t = 0)]
    pub revision: i64,
    /// Prints the output in the specified format.
    #[arg(short = 'o', long, value_enum, default_value_t = ReleaseOutput::Table)]
    pub output: ReleaseOutput,
}

/// Where a chart comes from: a directory, a package, REPO/NAME resolved in the
/// repositories added with `chartkit repo add` or `helm repo add`, a package URL, a
/// name in the repository at --repo URL, or oci://HOST/PATH/NAME in a registry.
#[derive(Debug, Args)]
pub struct ChartSourceArgs {
    /// A version or version range (Helm's semver constraints) of a repository chart.
    #[arg(long)]
    pub version: Option<String>,
    /// Include pre-releases (`>0.0.0-0`); ignored with --version.
    #[arg(long)]
    pub devel: bool,
    /// Repository URL to find CHART in (it need not be added).
    #[arg(long)]
    pub repo: Option<String>,
    /// Verify the chart package against its provenance file (NAME-VERSION.tgz.prov,
    /// beside a local package or next to it in the repository) before using it.
    #[arg(long)]
    pub verify: bool,
    /// Public keys trusted for --verify (default, as helm's: GnuPG's pubring.gpg).
    #[arg(long)]
    pub keyring: Option<PathBuf>,
    /// Credentials and TLS for the repository, as `chartkit pull` takes them.
    #[command(flatten)]
    pub access: RepoAccessArgs,
}

/// How `install` and `upgrade` render, beyond the values (helm's flags).
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Do not check the values against the chart's values.schema.json.
    #[arg(long = "skip-schema-validation")]
    pub skip_schema_validation: bool,
    /// Add the subcharts' NOTES.txt to the release notes.
    #[arg(long = "render-subchart-notes")]
    pub render_subchart_notes: bool,
    /// Accepted for helm's scripts: chartkit never resolves names while rendering, so
    /// `getHostByName` returns "" with or without it.
    #[arg(long = "enable-dns")]
    pub enable_dns: bool,
    /// Accepted for helm's scripts: chartkit does no client-side OpenAPI check to turn
    /// off; the API server still checks the fields of what is written, as it does for
    /// helm with this flag.
    #[arg(long = "disable-openapi-validation")]
    pub disable_openapi_validation: bool,
    /// With --dry-run, show each Secret as a placeholder line instead of its data.
    #[arg(long = "hide-secret")]
    pub hide_secret: bool,
    #[command(flatten)]
    pub post_render: crate::cli_helm::PostRenderArgs,
}

/// `--wait`, `--wait-for-jobs` and `--timeout`, shared by the release commands.
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Wait until every object of the release is ready (Deployments available, Pods
    /// ready, Services with addresses...), at most --timeout.
    // `=` is required, as by helm's flag parser: `--wait NAME CHART` keeps NAME.
    #[arg(
        long,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "watcher",
        value_name = "STRATEGY"
    )]
    pub wait: Option<String>,
    /// With --wait, also wait until Jobs have completed.
    #[arg(long = "wait-for-jobs")]
    pub wait_for_jobs: bool,
    /// Time to wait for any one Kubernetes operation (hooks, readiness), as a Go
    /// duration (`5m`, `90s`, `1m30s`).
    #[arg(long, default_value = "5m0s")]
    pub timeout: String,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// NAME CHART, or CHART with --generate-name.
    #[arg(value_name = "NAME", required = true, num_args = 1..=2)]
    pub positionals: Vec<String>,
    #[command(flatten)]
    pub source: ChartSourceArgs,
    /// Fetch the dependencies Chart.yaml names into charts/ first when some are
    /// missing (a chart directory only), as `chartkit dependency update` does.
    #[arg(long = "dependency-update")]
    pub dependency_update: bool,
    #[command(flatten)]
    pub values: ValueArgs,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Create the release namespace if it does not exist.
    #[arg(long = "create-namespace")]
    pub create_namespace: bool,
    /// Do not run the chart's hooks.
    #[arg(long = "no-hooks")]
    pub no_hooks: bool,
    /// Do not install the chart's CRDs (crds/).
    #[arg(long = "skip-crds")]
    pub skip_crds: bool,
    /// Generate the release name (the last part of CHART up to its first dot, and the
    /// Unix time) instead of taking NAME.
    #[arg(short = 'g', long = "generate-name")]
    pub generate_name: bool,
    /// A Go template (with Sprig's functions, no data) whose output is the release
    /// name, instead of NAME.
    #[arg(long = "name-template", value_name = "TEMPLATE")]
    pub name_template: Option<String>,
    /// A description for the release instead of "Install complete".
    #[arg(long)]
    pub description: Option<String>,
    #[command(flatten)]
    pub dry_run: DryRunArgs,
    #[command(flatten)]
    pub render: RenderArgs,
    /// If the install fails, uninstall the release; implies --wait (watcher).
    #[arg(long = "rollback-on-failure")]
    pub rollback_on_failure: bool,
    /// Deprecated (helm 4): --rollback-on-failure.
    #[arg(long, hide = true)]
    pub atomic: bool,
    #[command(flatten)]
    pub writing: WritingArgs,
    #[command(flatten)]
    pub print: ReleasePrintArgs,
    /// Labels to add to the release record (`k=v,k2=v2`).
    #[arg(short = 'l', long, value_delimiter = ',')]
    pub labels: Vec<String>,
    /// Adopt objects that already exist, whatever release (if any) they belong to.
    #[arg(long = "take-ownership")]
    pub take_ownership: bool,
    /// Reuse the name of a release whose last revision is uninstalled (kept with
    /// --keep-history) or failed. Unsafe in production.
    #[arg(long)]
    pub replace: bool,
}

/// helm's `--dry-run[=MODE]` of install, upgrade and rollback.
#[derive(Debug, Args)]
pub struct DryRunArgs {
    /// Render and check without changing the cluster: `client` (no cluster access where
    /// the command allows it) or `server` (the cluster's capabilities and ownership
    /// checks); `none` runs for real. A bare --dry-run is `client`.
    // `=` is required, as by helm's flag parser: `--dry-run NAME CHART` keeps NAME.
    #[arg(
        long = "dry-run",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "unset",
        value_name = "MODE"
    )]
    pub dry_run: Option<String>,
}

/// How `install` and `upgrade` print the release.
#[derive(Debug, Args)]
pub struct ReleasePrintArgs {
    /// Print the release as a `table` (helm's status text), `json` or `yaml` (the whole
    /// record).
    #[arg(short = 'o', long, value_enum, default_value_t = ReleaseOutput::Table)]
    pub output: ReleaseOutput,
    /// Leave the chart's NOTES.txt out of the table.
    #[arg(long = "hide-notes")]
    pub hide_notes: bool,
}

/// How objects are written (Helm 4's flags).
#[derive(Debug, Args)]
pub struct WritingArgs {
    /// `true`: server-side apply; `false`: a client-side three-way merge from the
    /// previous revision's manifest; `auto`: as the release's last revision was written
    /// (server-side for a new release).
    #[arg(
        long = "server-side",
        default_value = "auto",
        num_args = 0..=1,
        default_missing_value = "true",
        value_parser = ["true", "false", "auto"]
    )]
    pub server_side: String,
    /// Take over fields other field managers own (server-side apply).
    #[arg(long = "force-conflicts", conflicts_with = "force_replace")]
    pub force_conflicts: bool,
    /// Replace objects whole instead of merging into them (client-side writes only;
    /// `--force` is its old name).
    #[arg(long = "force-replace", alias = "force")]
    pub force_replace: bool,
}

#[derive(Debug, Args)]
pub struct UpgradeArgs {
    /// The release.
    pub release: String,
    /// The chart: a directory, a package, REPO/NAME, a package URL, or NAME with --repo.
    pub chart: String,
    #[command(flatten)]
    pub source: ChartSourceArgs,
    /// Fetch the dependencies Chart.yaml names into charts/ first when some are
    /// missing (a chart directory only), as `chartkit dependency update` does.
    #[arg(long = "dependency-update")]
    pub dependency_update: bool,
    #[command(flatten)]
    pub values: ValueArgs,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Install the release when it does not exist yet.
    #[arg(short = 'i', long)]
    pub install: bool,
    /// With --install, create the release namespace if it does not exist.
    #[arg(long = "create-namespace")]
    pub create_namespace: bool,
    /// Merge the new values over the last release's.
    #[arg(long = "reuse-values")]
    pub reuse_values: bool,
    /// Ignore the last release's values; use the chart's and the new ones only.
    #[arg(long = "reset-values")]
    pub reset_values: bool,
    /// The chart's defaults, then the last release's values, then the new ones.
    #[arg(long = "reset-then-reuse-values")]
    pub reset_then_reuse_values: bool,
    /// Do not run the chart's hooks.
    #[arg(long = "no-hooks")]
    pub no_hooks: bool,
    /// If the upgrade fails, roll back to the last deployed revision; implies --wait
    /// (watcher).
    #[arg(long = "rollback-on-failure")]
    pub rollback_on_failure: bool,
    /// Deprecated (helm 4): --rollback-on-failure.
    #[arg(long, hide = true)]
    pub atomic: bool,
    /// If the upgrade fails, delete the objects it created.
    #[arg(long = "cleanup-on-fail")]
    pub cleanup_on_fail: bool,
    #[command(flatten)]
    pub print: ReleasePrintArgs,
    #[command(flatten)]
    pub writing: WritingArgs,
    /// Keep at most this many revisions (0: no limit).
    #[arg(long = "history-max", alias = "max-history", default_value_t = 10)]
    pub history_max: usize,
    /// A description for the revision instead of "Upgrade complete".
    #[arg(long)]
    pub description: Option<String>,
    /// Skip the chart's CRDs when installing with --install.
    #[arg(long = "skip-crds")]
    pub skip_crds: bool,
    /// Adopt objects that already exist, whatever release (if any) they belong to.
    #[arg(long = "take-ownership")]
    pub take_ownership: bool,
    /// Also apply the chart's `crds/`, changed ones included (helm installs them once and
    /// never updates them).
    #[arg(long = "upgrade-crds")]
    pub upgrade_crds: bool,
    /// Labels to add to the record (`k=v,k2=v2`), over the last revision's; `k=null`
    /// removes one.
    #[arg(short = 'l', long, value_delimiter = ',')]
    pub labels: Vec<String>,
    /// When the newest revision was left pending by an operation that holds no lock
    /// (helm's, killed half-way), mark it failed and upgrade.
    #[arg(long)]
    pub recover: bool,
    #[command(flatten)]
    pub dry_run: DryRunArgs,
    #[command(flatten)]
    pub render: RenderArgs,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// The releases.
    #[arg(required = true)]
    pub releases: Vec<String>,
    /// Keep the records, marked uninstalled (so `rollback` can bring the release back).
    #[arg(long = "keep-history")]
    pub keep_history: bool,
    /// Do not run the chart's hooks.
    #[arg(long = "no-hooks")]
    pub no_hooks: bool,
    /// Wait until every object is gone, at most --timeout.
    #[arg(
        long,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "watcher",
        value_name = "STRATEGY"
    )]
    pub wait: Option<String>,
    /// How long to wait for hooks and deletions, as a Go duration.
    #[arg(long, default_value = "5m0s")]
    pub timeout: String,
    /// How deletions cascade: background, foreground or orphan.
    #[arg(long, default_value = "background")]
    pub cascade: String,
    /// A description for the uninstalled record.
    #[arg(long)]
    pub description: Option<String>,
    /// Only check that the release exists; delete nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// A release that does not exist counts as uninstalled (exit 0).
    #[arg(long = "ignore-not-found")]
    pub ignore_not_found: bool,
}

#[derive(Debug, Args)]
pub struct RollbackArgs {
    /// The release.
    pub release: String,
    /// The revision to go back to (default: the previous one).
    pub revision: Option<i64>,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Do not run the chart's hooks.
    #[arg(long = "no-hooks")]
    pub no_hooks: bool,
    /// If the rollback fails, delete the objects it created.
    #[arg(long = "cleanup-on-fail")]
    pub cleanup_on_fail: bool,
    #[command(flatten)]
    pub writing: WritingArgs,
    /// Keep at most this many revisions (0: no limit).
    #[arg(long = "history-max", alias = "max-history", default_value_t = 10)]
    pub history_max: usize,
    /// When the newest revision was left pending by an operation that holds no lock
    /// (helm's, killed half-way), mark it failed and roll back.
    #[arg(long)]
    pub recover: bool,
    #[command(flatten)]
    pub dry_run: DryRunArgs,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// The release.
    pub release: String,
    /// How long each test may take (a Go duration).
    #[arg(long, default_value = "5m0s")]
    pub timeout: String,
    /// Print the test pods' logs (read after every test ran, before any is deleted).
    #[arg(long)]
    pub logs: bool,
    /// Choose tests: `name=X` runs only X, `!name=X` skips X (repeat, or separate with
    /// commas).
    #[arg(long, value_delimiter = ',')]
    pub filter: Vec<String>,
}
