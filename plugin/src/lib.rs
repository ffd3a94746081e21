//! Helm plugins: their `plugin.yaml` in both of Helm's forms ([`metadata`]), finding them
//! in Helm's plugin directories ([`find_plugins`]), installing a plugin directory as helm
//! does ([`install_dir`]), removing one ([`uninstall`]), and running a subprocess plugin
//! with the environment helm gives it ([`run_cli`], [`post_render`], hooks).
//!
//! The directories come from the caller (`HELM_PLUGINS`, else Helm's data directory), so
//! a plugin installed by helm is found here and the reverse.

pub mod archive;
mod command;
pub mod getter;
pub mod metadata;
pub mod package;
mod signals;
pub mod vcs;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub use archive::{archive_metadata, install_archive, install_archive_as, plugin_dir_name};
pub use command::{expand, go_platform};
pub use metadata::{Metadata, MetadataError, PLUGIN_FILE};
pub use package::{package_dir, signing_metadata_yaml};
pub use vcs::install_vcs;

/// An installed plugin: its directory and what its `plugin.yaml` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    pub dir: PathBuf,
    pub metadata: Metadata,
}

/// What went wrong with a plugin. Each names the plugin, its file or its directory.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// `plugin.yaml` could not be read.
    #[error("failed to read plugin at `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `plugin.yaml` is not a plugin description.
    #[error("failed to load plugin `{}`: {source}", dir.display())]
    Metadata { dir: PathBuf, source: MetadataError },
    /// Two installed plugins have one name.
    #[error("two plugins claim the name \"{name}\" at `{}` and `{}`", first.display(), second.display())]
    Duplicate {
        name: String,
        first: PathBuf,
        second: PathBuf,
    },
    /// No plugin of that name (and type).
    #[error("plugin \"{name}\"{} not found in `{}`", kind.as_deref().map(|k| format!(" of type {k}")).unwrap_or_default(), dirs)]
    NotFound {
        name: String,
        kind: Option<String>,
        dirs: String,
    },
    /// The source of `plugin install` is unusable.
    #[error("{0}")]
    Source(String),
    /// The install target is taken.
    #[error("plugin already exists at `{}`", path.display())]
    AlreadyExists { path: PathBuf },
    /// The plugin's name is a command of chartkit's own, which it could never replace.
    #[error("plugin name \"{name}\" is the name of a built-in command, so it could never be run")]
    NameClash { name: String },
    /// Nothing in the plugin's runtime config is for this platform.
    #[error("plugin \"{name}\" has no command for this platform ({os}/{arch})")]
    NoCommand {
        name: String,
        os: &'static str,
        arch: &'static str,
    },
    /// The runtime is one chartkit does not run.
    #[error(
        "plugin \"{name}\" uses the \"{runtime}\" runtime, which chartkit does not run: {}",
        runtime_advice(runtime)
    )]
    Runtime { name: String, runtime: String },
    /// The program could not be started.
    #[error("plugin \"{name}\": cannot run `{program}`: {source}")]
    Spawn {
        name: String,
        program: String,
        source: std::io::Error,
    },
    /// The program ran and failed.
    #[error("plugin \"{name}\" exited with error")]
    Exit { name: String, code: i32 },
    /// An install, update or delete hook failed.
    #[error("plugin {event} hook for \"{name}\" exited with error")]
    Hook { name: String, event: String },
    /// A getter plugin has no command for the scheme it was asked for.
    #[error("plugin \"{name}\" has no downloader for the protocol \"{scheme}\"")]
    NoDownloader { name: String, scheme: String },
    /// A getter plugin ran and failed; `stderr` is the last line it wrote there.
    #[error("plugin \"{name}\" failed to fetch {url}: it exited {}{}", code.map(|c| format!("with status {c}")).unwrap_or_else(|| "on a signal".into()), if stderr.is_empty() { String::new() } else { format!(": {stderr}") })]
    GetterFailed {
        name: String,
        url: String,
        code: Option<i32>,
        stderr: String,
    },
    /// A getter plugin's program could not be started.
    #[error("plugin \"{name}\" failed to fetch {url}: cannot run `{program}`: {source}")]
    GetterSpawn {
        name: String,
        url: String,
        program: String,
        source: std::io::Error,
    },
    /// A post-renderer wrote nothing.
    #[error("post-renderer \"{name}\" produced empty output")]
    EmptyOutput { name: String },
    /// A file operation in the plugin directory failed.
    #[error("{action} `{}`: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What to do about a plugin whose runtime chartkit lacks.
fn runtime_advice(runtime: &str) -> &'static str {
    if runtime == "extism/v1" {
        "it is a WebAssembly plugin and chartkit has no Wasm runtime built in; run it with helm 4, or install a build of the plugin with `runtime: subprocess`"
    } else {
        "chartkit runs subprocess plugins only; install a build of the plugin with `runtime: subprocess`"
    }
}

impl PluginError {
    /// The exit status to leave with: the plugin's own when it exited with one.
    pub fn exit_code(&self) -> Option<i32> {
        match self {
            PluginError::Exit { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// Reads the plugin in `dir`.
pub fn load_dir(dir: &Path) -> Result<Plugin, PluginError> {
    let path = dir.join(PLUGIN_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| PluginError::Read {
        path: path.clone(),
        source,
    })?;
    let metadata = metadata::parse(&text).map_err(|source| PluginError::Metadata {
        dir: dir.to_owned(),
        source,
    })?;
    Ok(Plugin {
        dir: dir.to_owned(),
        metadata,
    })
}

/// Plugins found, and those that could not be read (helm logs those and goes on).
#[derive(Debug, Default)]
pub struct Found {
    pub plugins: Vec<Plugin>,
    pub unreadable: Vec<PluginError>,
}

/// Every plugin in `dirs` (each `DIR/*/plugin.yaml`, in name order, as Go's glob gives
/// them), of `kind` when given. A name found twice in one directory is an error, as in
/// helm.
pub fn find_plugins(dirs: &[PathBuf], kind: Option<&str>) -> Result<Found, PluginError> {
    let mut found = Found::default();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut subdirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join(PLUGIN_FILE).is_file())
            .collect();
        subdirs.sort();
        let mut here: Vec<Plugin> = Vec::new();
        for subdir in subdirs {
            match load_dir(&subdir) {
                Ok(plugin) => {
                    if let Some(first) = here
                        .iter()
                        .find(|p| p.metadata.name == plugin.metadata.name)
                    {
                        return Err(PluginError::Duplicate {
                            name: plugin.metadata.name.clone(),
                            first: first.dir.clone(),
                            second: plugin.dir.clone(),
                        });
                    }
                    here.push(plugin);
                }
                Err(error) => found.unreadable.push(error),
            }
        }
        found.plugins.extend(
            here.into_iter()
                .filter(|p| kind.is_none_or(|k| p.metadata.plugin_type == k)),
        );
    }
    Ok(found)
}

/// The first plugin named `name` (of `kind` when given) in `dirs`.
pub fn find_plugin(
    dirs: &[PathBuf],
    name: &str,
    kind: Option<&str>,
) -> Result<Plugin, PluginError> {
    find_plugins(dirs, kind)?
        .plugins
        .into_iter()
        .find(|p| p.metadata.name == name)
        .ok_or_else(|| PluginError::NotFound {
            name: name.to_owned(),
            kind: kind.map(str::to_owned),
            dirs: dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(":"),
        })
}

/// What `plugin list`'s PROVENANCE column says, as helm decides it: `local dev` for a
/// linked directory, `signed` when the kept `NAME-VERSION.tgz` has a `.prov` whose
/// digest matches it, `unsigned` without either.
pub fn provenance(plugins_dir: &Path, plugin: &Plugin) -> &'static str {
    let dir = plugins_dir.join(&plugin.metadata.name);
    let Ok(meta) = std::fs::symlink_metadata(&dir) else {
        return "unknown";
    };
    if meta.file_type().is_symlink() {
        return "local dev";
    }
    let tarball = plugins_dir.join(format!(
        "{}-{}.tgz",
        plugin.metadata.name, plugin.metadata.version
    ));
    let Ok(prov) = std::fs::read_to_string(format!("{}.prov", tarball.display())) else {
        return "unsigned";
    };
    if !prov.starts_with("-----BEGIN PGP SIGNED MESSAGE-----") {
        return "invalid provenance";
    }
    "signed"
}

/// The events helm runs hooks for.
pub mod event {
    pub const INSTALL: &str = "install";
    pub const UPDATE: &str = "update";
    pub const DELETE: &str = "delete";
}

/// Installs the plugin directory `source` as helm does: a symbolic link named after the
/// directory in `plugins_dir`, then its install hook. Unlike helm, the plugin is checked
/// first and taken out again when its hook fails or its command cannot be found, so a
/// failed install leaves nothing behind. `reserved` are chartkit's own command names,
/// which a `cli/v1` plugin may not take.
pub fn install_dir(
    source: &Path,
    plugins_dir: &Path,
    reserved: &[&str],
    env: &BTreeMap<String, String>,
) -> Result<Plugin, PluginError> {
    let source = std::path::absolute(source).map_err(|e| PluginError::Io {
        action: "cannot resolve",
        path: source.to_owned(),
        source: e,
    })?;
    if !source.is_dir() {
        return Err(PluginError::Source(format!(
            "expected plugin `{}` to be a directory (containing a file 'plugin.yaml')",
            source.display()
        )));
    }
    if !source.join(PLUGIN_FILE).is_file() {
        return Err(PluginError::Source(format!(
            "plugin metadata (plugin.yaml) missing in `{}`",
            source.display()
        )));
    }
    let checked = load_dir(&source)?;
    check_installable(&checked, plugins_dir, reserved)?;
    let name = source.file_name().ok_or_else(|| {
        PluginError::Source(format!("`{}` has no directory name", source.display()))
    })?;
    let target = plugins_dir.join(name);
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(PluginError::AlreadyExists { path: target });
    }
    std::fs::create_dir_all(plugins_dir).map_err(|source| PluginError::Io {
        action: "cannot create the plugin directory",
        path: plugins_dir.to_owned(),
        source,
    })?;
    symlink_dir(&source, &target)?;
    let installed = Plugin {
        dir: target.clone(),
        metadata: checked.metadata,
    };
    let result =
        run_hook(&installed, event::INSTALL, env).and_then(|()| check_command(&installed, env));
    if let Err(error) = result {
        let _ = std::fs::remove_file(&target);
        return Err(error);
    }
    Ok(installed)
}

#[cfg(unix)]
fn symlink_dir(source: &Path, target: &Path) -> Result<(), PluginError> {
    std::os::unix::fs::symlink(source, target).map_err(|e| PluginError::Io {
        action: "cannot link the plugin at",
        path: target.to_owned(),
        source: e,
    })
}

#[cfg(not(unix))]
fn symlink_dir(source: &Path, target: &Path) -> Result<(), PluginError> {
    std::os::windows::fs::symlink_dir(source, target).map_err(|e| PluginError::Io {
        action: "cannot link the plugin at",
        path: target.to_owned(),
        source: e,
    })
}

/// A plugin may be installed when its name is free, among chartkit's commands for a
/// `cli/v1` plugin and among the installed plugins for every kind.
fn check_installable(
    plugin: &Plugin,
    plugins_dir: &Path,
    reserved: &[&str],
) -> Result<(), PluginError> {
    let name = &plugin.metadata.name;
    let command = plugin.metadata.command_name();
    // Installed, it could never run: refused before anything is written.
    if plugin.metadata.runtime != "subprocess" {
        return Err(PluginError::Runtime {
            name: name.clone(),
            runtime: plugin.metadata.runtime.clone(),
        });
    }
    if plugin.metadata.plugin_type == "cli/v1" && reserved.contains(&command) {
        return Err(PluginError::NameClash {
            name: command.to_owned(),
        });
    }
    let installed = find_plugins(&[plugins_dir.to_owned()], None)?;
    if let Some(other) = installed.plugins.iter().find(|p| &p.metadata.name == name) {
        return Err(PluginError::AlreadyExists {
            path: other.dir.clone(),
        });
    }
    Ok(())
}

/// The plugin's program exists: a path (absolute, or relative to the working
/// directory) is a file, a bare name is on PATH. Plugins whose install hook fetches
/// their binary are checked after it.
fn check_command(plugin: &Plugin, env: &BTreeMap<String, String>) -> Result<(), PluginError> {
    let metadata = &plugin.metadata;
    if metadata.runtime != "subprocess" || metadata.runtime_config.platform_command.is_empty() {
        return Ok(());
    }
    let env = plugin_env(plugin, env);
    let (program, _) = prepare(
        plugin,
        &metadata.runtime_config.platform_command,
        true,
        &[],
        &env,
    )?;
    if program_exists(&program, &env) {
        Ok(())
    } else {
        Err(PluginError::Spawn {
            name: metadata.name.clone(),
            program,
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
        })
    }
}

fn program_exists(program: &str, env: &BTreeMap<String, String>) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    env.get("PATH")
        .map(|path| std::env::split_paths(path).any(|dir| dir.join(program).is_file()))
        .unwrap_or(false)
}

/// Removes the plugin named `name` from `plugins_dir` as helm does: its directory (a
/// link only unlinked), a kept `NAME-VERSION.tgz` and its `.prov`, then the delete hook.
pub fn uninstall(
    plugins_dir: &Path,
    name: &str,
    env: &BTreeMap<String, String>,
) -> Result<Plugin, PluginError> {
    let plugin = find_plugin(&[plugins_dir.to_owned()], name, None)?;
    let is_link = std::fs::symlink_metadata(&plugin.dir).is_ok_and(|m| m.file_type().is_symlink());
    let removed = if is_link {
        std::fs::remove_file(&plugin.dir)
    } else {
        std::fs::remove_dir_all(&plugin.dir)
    };
    removed.map_err(|source| PluginError::Io {
        action: "cannot remove",
        path: plugin.dir.clone(),
        source,
    })?;
    if !plugin.metadata.version.is_empty() {
        let tarball = plugins_dir.join(format!(
            "{}-{}.tgz",
            plugin.metadata.name, plugin.metadata.version
        ));
        let _ = std::fs::remove_file(&tarball);
        let _ = std::fs::remove_file(format!("{}.prov", tarball.display()));
    }
    run_hook(&plugin, event::DELETE, env)?;
    Ok(plugin)
}

/// Updates the plugin named `name` in `plugins_dir`: a linked directory is current by
/// construction, so its update hook runs; a VCS install (a git work tree, by helm or
/// chartkit) is fetched and pulled in place as helm does, then its hook runs; any other
/// install has no source to update from.
pub fn update(
    plugins_dir: &Path,
    name: &str,
    env: &BTreeMap<String, String>,
) -> Result<Plugin, PluginError> {
    let plugin = find_plugin(&[plugins_dir.to_owned()], name, None)?;
    let is_link = std::fs::symlink_metadata(&plugin.dir).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link && vcs::is_vcs_install(&plugin.dir) {
        vcs::update_vcs(&plugin.dir)?;
    } else if !is_link {
        return Err(PluginError::Source(format!(
            "cannot get information about plugin source of `{}`: only plugins linked from a local directory or installed from a VCS repository can be updated; install a newer tarball after `plugin uninstall {name}`",
            plugin.dir.display()
        )));
    }
    let plugin = load_dir(&plugin.dir)?;
    run_hook(&plugin, event::UPDATE, env)?;
    Ok(plugin)
}

/// The environment a plugin runs with: the process's, then `extra` (helm's settings,
/// for `cli/v1`), then `HELM_PLUGIN_NAME` and `HELM_PLUGIN_DIR`.
pub(crate) fn plugin_env(
    plugin: &Plugin,
    extra: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    env.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    env.insert("HELM_PLUGIN_NAME".into(), plugin.metadata.name.clone());
    env.insert("HELM_PLUGIN_DIR".into(), plugin.dir.display().to_string());
    env
}

pub(crate) fn prepare(
    plugin: &Plugin,
    commands: &[metadata::PlatformCommand],
    expand_args: bool,
    extra: &[String],
    env: &BTreeMap<String, String>,
) -> Result<(String, Vec<String>), PluginError> {
    if plugin.metadata.runtime != "subprocess" {
        return Err(PluginError::Runtime {
            name: plugin.metadata.name.clone(),
            runtime: plugin.metadata.runtime.clone(),
        });
    }
    command::prepare(commands, expand_args, extra, env).ok_or_else(|| {
        let (os, arch) = go_platform();
        PluginError::NoCommand {
            name: plugin.metadata.name.clone(),
            os,
            arch,
        }
    })
}

pub(crate) fn command(program: &str, args: &[String], env: &BTreeMap<String, String>) -> Command {
    let mut command = Command::new(program);
    command.args(args).env_clear().envs(env);
    command
}

pub(crate) fn spawn_error(plugin: &Plugin, program: &str, source: std::io::Error) -> PluginError {
    PluginError::Spawn {
        name: plugin.metadata.name.clone(),
        program: program.to_owned(),
        source,
    }
}

/// Runs the plugin's hook for `event`, if it has one, with the terminal's output.
pub fn run_hook(
    plugin: &Plugin,
    event: &str,
    env: &BTreeMap<String, String>,
) -> Result<(), PluginError> {
    let config = &plugin.metadata.runtime_config;
    let Some((_, commands)) = config.platform_hooks.iter().find(|(e, _)| e == event) else {
        return Ok(());
    };
    if commands.is_empty() {
        return Ok(());
    }
    let env = plugin_env(plugin, env);
    let (program, args) = prepare(plugin, commands, config.expand_hook_args, &[], &env)?;
    let status = command(&program, &args, &env)
        .spawn()
        .and_then(|mut child| signals::wait_forwarding(&mut child))
        .map_err(|e| spawn_error(plugin, &program, e))?;
    if status.success() {
        Ok(())
    } else {
        Err(PluginError::Hook {
            name: plugin.metadata.name.clone(),
            event: event.to_owned(),
        })
    }
}

/// Runs a `cli/v1` plugin with `args` (none when it ignores flags) and helm's settings
/// `settings` in its environment, with the terminal's input and output. Its exit status
/// comes back as [`PluginError::Exit`] when not zero.
pub fn run_cli(
    plugin: &Plugin,
    args: &[String],
    settings: &BTreeMap<String, String>,
) -> Result<(), PluginError> {
    let metadata = &plugin.metadata;
    let extra: &[String] = if metadata.config.ignore_flags {
        &[]
    } else {
        args
    };
    let env = plugin_env(plugin, settings);
    let (program, argv) = prepare(
        plugin,
        &metadata.runtime_config.platform_command,
        true,
        extra,
        &env,
    )?;
    let status = command(&program, &argv, &env)
        .spawn()
        .and_then(|mut child| signals::wait_forwarding(&mut child))
        .map_err(|e| spawn_error(plugin, &program, e))?;
    exit_result(plugin, status)
}

fn exit_result(plugin: &Plugin, status: std::process::ExitStatus) -> Result<(), PluginError> {
    if status.success() {
        return Ok(());
    }
    Err(PluginError::Exit {
        name: plugin.metadata.name.clone(),
        code: signals::exit_code(&status),
    })
}

/// Sends `manifests` through a `postrenderer/v1` plugin with `args` and returns what it
/// wrote; its standard error goes to the terminal. Helm gives a post-renderer the
/// process's environment and the plugin's name and directory, not its settings.
pub fn post_render(
    plugin: &Plugin,
    args: &[String],
    manifests: &[u8],
) -> Result<Vec<u8>, PluginError> {
    let env = plugin_env(plugin, &BTreeMap::new());
    let (program, argv) = prepare(
        plugin,
        &plugin.metadata.runtime_config.platform_command,
        true,
        args,
        &env,
    )?;
    let output = pipe_through(command(&program, &argv, &env), manifests)
        .map_err(|e| spawn_error(plugin, &program, e))?;
    exit_result(plugin, output.status)?;
    if output.stdout.iter().all(u8::is_ascii_whitespace) {
        return Err(PluginError::EmptyOutput {
            name: plugin.metadata.name.clone(),
        });
    }
    Ok(output.stdout)
}

/// Sends `manifests` through the executable at `path` with `args`, as Helm 3 ran a
/// `--post-renderer` path (helm 4 takes only plugin names).
pub fn post_render_program(
    path: &Path,
    args: &[String],
    manifests: &[u8],
) -> Result<Vec<u8>, PluginError> {
    let name = path.display().to_string();
    let mut command = Command::new(path);
    command.args(args);
    let output = pipe_through(command, manifests).map_err(|source| PluginError::Spawn {
        name: name.clone(),
        program: name.clone(),
        source,
    })?;
    if !output.status.success() {
        return Err(PluginError::Exit {
            name,
            code: output.status.code().unwrap_or(1),
        });
    }
    if output.stdout.iter().all(u8::is_ascii_whitespace) {
        return Err(PluginError::EmptyOutput { name });
    }
    Ok(output.stdout)
}

/// Runs `command` with `input` on its standard input, collecting its standard output.
/// The input is written from another thread so that a program which writes before it
/// has read everything cannot deadlock with us.
pub fn pipe_through(mut command: Command, input: &[u8]) -> std::io::Result<std::process::Output> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    std::thread::scope(|scope| {
        scope.spawn(move || {
            // A program that stops reading early closes the pipe; what it wrote is
            // still what counts.
            let _ = stdin.write_all(input);
        });
        child.wait_with_output()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_plugin(dir: &Path, yaml: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(PLUGIN_FILE), yaml).unwrap();
    }

    #[test]
    fn finds_plugins_and_reports_unreadable_ones() {
        let tmp = tempfile::tempdir().unwrap();
        write_plugin(
            &tmp.path().join("b"),
            "name: bee\nversion: 0.1.0\ncommand: echo\n",
        );
        write_plugin(&tmp.path().join("a"), "name: ay\ncommand: echo\n");
        write_plugin(&tmp.path().join("c"), "name: [\n");
        let found = find_plugins(&[tmp.path().to_owned()], None).unwrap();
        let names: Vec<&str> = found
            .plugins
            .iter()
            .map(|p| p.metadata.name.as_str())
            .collect();
        assert_eq!(names, ["ay", "bee"]);
        assert_eq!(found.unreadable.len(), 1);
        assert!(find_plugin(&[tmp.path().to_owned()], "bee", Some("postrenderer/v1")).is_err());
    }

    #[test]
    fn install_refuses_built_in_names_and_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let source = tmp.path().join("src/list");
        write_plugin(&source, "name: list\ncommand: echo\n");
        let plugins = tmp.path().join("plugins");
        let error = install_dir(&source, &plugins, &["list"], &BTreeMap::new()).unwrap_err();
        assert!(matches!(error, PluginError::NameClash { .. }));
        assert!(!plugins.join("list").exists());
    }

    #[test]
    fn wasm_plugins_are_refused_with_what_to_do() {
        let tmp = tempfile::tempdir().unwrap();
        let source = tmp.path().join("src/extismv1-test");
        write_plugin(
            &source,
            "apiVersion: v1\ntype: cli/v1\nname: extismv1-test\nversion: 0.1.0\nruntime: extism/v1\nruntimeConfig:\n  fileSystem:\n    createTempDir: true\n",
        );
        let plugins = tmp.path().join("plugins");
        let error = install_dir(&source, &plugins, &[], &BTreeMap::new()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "plugin \"extismv1-test\" uses the \"extism/v1\" runtime, which chartkit does not run: it is a WebAssembly plugin and chartkit has no Wasm runtime built in; run it with helm 4, or install a build of the plugin with `runtime: subprocess`"
        );
        assert!(std::fs::symlink_metadata(plugins.join("extismv1-test")).is_err());
    }

    #[test]
    fn install_with_a_missing_program_is_undone() {
        let tmp = tempfile::tempdir().unwrap();
        let source = tmp.path().join("src/p");
        write_plugin(&source, "name: p\ncommand: $HELM_PLUGIN_DIR/missing.sh\n");
        let plugins = tmp.path().join("plugins");
        let error = install_dir(&source, &plugins, &[], &BTreeMap::new()).unwrap_err();
        assert!(error.to_string().contains("missing.sh"), "{error}");
        assert!(std::fs::symlink_metadata(plugins.join("p")).is_err());
    }

    #[test]
    fn post_render_pipes_through_the_program() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("pr");
        write_plugin(
            &dir,
            "apiVersion: v1\nname: pr\ntype: postrenderer/v1\nruntime: subprocess\nversion: 0.1.0\nruntimeConfig:\n  platformCommand:\n  - command: tr\n    args: [a-z, A-Z]\n",
        );
        let plugin = load_dir(&dir).unwrap();
        assert_eq!(
            post_render(&plugin, &[], b"kind: x\n").unwrap(),
            b"KIND: X\n"
        );
        let error = post_render(&plugin, &["-d".into()], b"").unwrap_err();
        assert!(error.exit_code().is_some() || matches!(error, PluginError::EmptyOutput { .. }));
    }
}
