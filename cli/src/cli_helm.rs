//! Command-line definitions of helm's plugin, env, version and completion commands, and
//! of the flags that hand manifests to a post-renderer (kept apart from `cli.rs`, which
//! holds the rest).

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Install a plugin, as helm does: a local directory is linked into helm's plugin
    /// directory (HELM_PLUGINS), a tarball (local, http(s) or an oci:// plugin artifact)
    /// verified and unpacked there, a git repository cloned (with `git`) and copied
    /// there; then its install hook runs.
    #[command(visible_alias = "add")]
    Install(PluginInstallArgs),
    /// List installed plugins, as `helm plugin list` does.
    #[command(visible_alias = "ls")]
    List(PluginListArgs),
    /// Uninstall one or more plugins (their delete hooks run after).
    #[command(visible_alias = "rm", alias = "remove")]
    Uninstall(PluginUninstallArgs),
    /// Update plugins: one installed from a git repository is pulled (refused when its
    /// files were changed), as helm does; one installed from a local directory (a link)
    /// has its update hook run, as its files are the directory's already.
    Update(PluginUninstallArgs),
    /// Package a plugin directory into NAME-VERSION.tgz, signed (a .prov beside it) by
    /// default, as `helm plugin package` does.
    Package(PluginPackageArgs),
    /// Verify a plugin tarball against its .prov and a keyring.
    Verify(PluginVerifyArgs),
}

#[derive(Debug, Args)]
pub struct PluginPackageArgs {
    /// The plugin's directory.
    pub path: PathBuf,
    /// Where to write the tarball.
    #[arg(short = 'd', long, default_value = ".")]
    pub destination: PathBuf,
    /// Sign the tarball (`--sign=false` skips it, with a warning).
    #[arg(
        long,
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_name = "BOOL"
    )]
    pub sign: bool,
    /// The signing key (a user id, email or fingerprint in the keyring).
    #[arg(long)]
    pub key: Option<String>,
    /// The secret keyring (default: GnuPG's, as helm).
    #[arg(long, value_name = "FILE")]
    pub keyring: Option<PathBuf>,
    /// A file whose first line is the key's passphrase (`-`: standard input).
    #[arg(long = "passphrase-file", value_name = "FILE")]
    pub passphrase_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PluginVerifyArgs {
    /// The plugin tarball (its .prov beside it).
    pub path: PathBuf,
    /// The public keys to trust (default: GnuPG's pubring.gpg, as helm).
    #[arg(long, value_name = "FILE")]
    pub keyring: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PluginInstallArgs {
    /// The plugin: its directory (holding plugin.yaml), a tarball (NAME-VERSION.tgz), an
    /// http(s) URL of a tarball, `oci://HOST/PATH/NAME:TAG` (a plugin artifact in a
    /// registry), or any other URL of a git repository (cloned with `git`, which must be
    /// on PATH; with `--verify=false`, as git sources have no signature).
    pub source: String,
    /// For a git repository: the tag, branch or commit to install, or a version range
    /// its newest matching tag must satisfy (default: the default branch).
    #[arg(long, value_name = "VERSION", default_value = "")]
    pub version: String,
    /// For oci://: identify to the registry with this certificate file.
    #[arg(long, value_name = "FILE")]
    pub cert_file: Option<PathBuf>,
    /// For oci://: the key of --cert-file.
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    /// For oci://: verify the registry's certificate with this CA bundle.
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    /// For oci://: skip the registry's certificate check.
    #[arg(long)]
    pub insecure_skip_tls_verify: bool,
    /// For oci://: talk to the registry over plain http.
    #[arg(long)]
    pub plain_http: bool,
    /// For oci://: the registry user (default: what `registry login` stored).
    #[arg(long)]
    pub username: Option<String>,
    /// For oci://: the registry password.
    #[arg(long)]
    pub password: Option<String>,
    /// Verify a tarball's signature (its `.prov` beside it) before installing; a directory
    /// is never verified. `--verify=false` skips it.
    #[arg(
        long,
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_name = "BOOL"
    )]
    pub verify: bool,
    /// Public keys to verify with (default: GnuPG's pubring.gpg, as helm).
    #[arg(long, value_name = "FILE")]
    pub keyring: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PluginListArgs {
    /// Only plugins of this type (cli/v1, getter/v1, postrenderer/v1).
    #[arg(long = "type", value_name = "TYPE")]
    pub plugin_type: Option<String>,
}

#[derive(Debug, Args)]
pub struct PluginUninstallArgs {
    /// The plugins' names.
    #[arg(required = true, value_name = "PLUGIN")]
    pub names: Vec<String>,
}

/// `--post-renderer` and its arguments, on every command that renders a release.
#[derive(Debug, Args, Default, Clone)]
pub struct PostRenderArgs {
    /// A postrenderer/v1 plugin that rendered manifests (hooks included, as helm 4 does)
    /// are piped through before anything is printed or installed; the release records
    /// what it writes. For users coming from Helm 3, a path to an executable (anything
    /// with a `/`) is still accepted, where helm 4 takes only plugin names.
    #[arg(long = "post-renderer", value_name = "NAME|PATH")]
    pub post_renderer: Option<String>,
    /// An argument to the post-renderer (repeatable).
    #[arg(
        long = "post-renderer-args",
        value_name = "ARG",
        allow_hyphen_values = true
    )]
    pub post_renderer_args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct EnvArgs {
    /// Print only this variable's value.
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub struct VersionArgs {
    /// Print the version number only (with the commit when the build knows it).
    #[arg(long)]
    pub short: bool,
    /// A Go template for the output, over .Version, .GitCommit, .GitTreeState,
    /// .GoVersion (empty: chartkit is not written in Go) and .KubeClientVersion.
    #[arg(long, value_name = "TEMPLATE")]
    pub template: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell to write the script for.
    #[arg(value_parser = ["bash", "zsh", "fish", "powershell"])]
    pub shell: String,
}

/// `__complete WORDS... CURRENT`: what a completion script asks for (helm's protocol:
/// one candidate a line, then `:DIRECTIVE`).
#[derive(Debug, Args)]
pub struct CompleteArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SearchHubArgs {
    /// The keyword (several words are searched for as one phrase), or Artifact Hub's
    /// rich query options.
    pub keyword: Vec<String>,
    /// The hub to ask.
    #[arg(long, default_value = "https://hub.helm.sh", value_name = "URL")]
    pub endpoint: String,
    /// Widest a table column may be; longer text is cut with `...` (0: no limit).
    #[arg(long = "max-col-width", default_value_t = 50)]
    pub max_col_width: usize,
    /// Add each chart's repository URL to the table.
    #[arg(long = "list-repo-url")]
    pub list_repo_url: bool,
    /// Output format: `table`, `json` or `yaml`.
    #[arg(short = 'o', long, value_enum, default_value_t = crate::cli::OutputFormat::Table)]
    pub output: crate::cli::OutputFormat,
    /// Fail (exit status 1) when no chart matches.
    #[arg(long = "fail-on-no-result")]
    pub fail_on_no_result: bool,
}
