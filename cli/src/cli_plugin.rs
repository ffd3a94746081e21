//! Command-line definitions of `chartkit plugin` and of the flags that hand manifests to
//! a post-renderer (kept apart from `cli.rs`, which holds the rest).

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Install a plugin from a local directory, as helm does: a link to the directory in
    /// helm's plugin directory (HELM_PLUGINS), then its install hook.
    #[command(visible_alias = "add")]
    Install(PluginInstallArgs),
    /// List installed plugins, as `helm plugin list` does.
    #[command(visible_alias = "ls")]
    List(PluginListArgs),
    /// Uninstall one or more plugins (their delete hooks run after).
    #[command(visible_alias = "rm", alias = "remove")]
    Uninstall(PluginUninstallArgs),
}

#[derive(Debug, Args)]
pub struct PluginInstallArgs {
    /// The plugin's directory (holding plugin.yaml).
    pub source: PathBuf,
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
