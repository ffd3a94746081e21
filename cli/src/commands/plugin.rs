//! `chartkit plugin install|list|uninstall` and running a plugin's command.

use std::ffi::OsString;
use std::process::ExitCode;

use chartkit_plugin::PluginError;

use crate::cli::{Cli, GlobalArgs, KubeArgs};
use crate::cli_helm::{
    PluginCommand, PluginInstallArgs, PluginListArgs, PluginPackageArgs, PluginUninstallArgs,
    PluginVerifyArgs, PostRenderArgs,
};
use crate::commands::helm_env;
use crate::env;
use crate::error::{Context, Result, err};
use crate::output::{errln, out, outln};

pub fn run(command: PluginCommand, kube: &KubeArgs, global: &GlobalArgs) -> Result<ExitCode> {
    match command {
        PluginCommand::Install(args) => install(args, kube, global),
        PluginCommand::List(args) => list(args),
        PluginCommand::Uninstall(args) => uninstall(args, kube, global),
        PluginCommand::Update(args) => update(args, kube, global),
        PluginCommand::Package(args) => package(args),
        PluginCommand::Verify(args) => verify(args),
    }
}

fn install_dir() -> Result<std::path::PathBuf> {
    env::helm_plugins_install_dir().context(
        "cannot locate Helm's plugin directory: none of HELM_PLUGINS, HELM_DATA_HOME, XDG_DATA_HOME and HOME is set",
    )
}

/// Every command name and alias of chartkit's own, which a plugin may not take.
fn built_in_names() -> Vec<String> {
    use clap::CommandFactory as _;
    let command = Cli::command();
    command
        .get_subcommands()
        .flat_map(|c| {
            std::iter::once(c.get_name().to_owned()).chain(c.get_all_aliases().map(str::to_owned))
        })
        .chain(["help".to_owned()])
        .collect()
}

fn install(args: PluginInstallArgs, kube: &KubeArgs, global: &GlobalArgs) -> Result<ExitCode> {
    let plugins_dir = install_dir()?;
    let names = built_in_names();
    let reserved: Vec<&str> = names.iter().map(String::as_str).collect();
    let settings = helm_env::settings(kube, global);
    let source = args.source.as_str();
    let context = || format!("cannot install the plugin `{source}`");
    if chartkit_oci::is_oci(source) {
        return install_oci(&args, &plugins_dir, &reserved, &settings);
    }
    let is_url = source.starts_with("http://") || source.starts_with("https://");
    let is_archive = source.ends_with(".tgz") || source.ends_with(".tar.gz");
    let path = std::path::Path::new(source);
    // helm's order: an existing path, then an http(s) tarball, then a VCS repository.
    if !is_url && path.is_dir() {
        outln!("Installing plugin from local directory (development mode)")?;
        let plugin = chartkit_plugin::install_dir(path, &plugins_dir, &reserved, &settings)
            .with_context(context)?;
        outln!("Installed plugin: {}", plugin.metadata.name)?;
        return Ok(ExitCode::SUCCESS);
    }
    if !(path.exists() || is_url && is_archive) {
        if !chartkit_plugin::vcs::looks_remote(source) {
            return Err(err!(
                "cannot get information about plugin source \"{source}\" (if it's a local directory, does it exist?), last error was: Cannot detect VCS"
            ));
        }
        return install_vcs(&args, &plugins_dir, &reserved, &settings);
    }
    if !is_archive {
        return Err(err!(
            "cannot get information about plugin source \"{source}\" (if it's a local directory, does it exist?): a file must be a .tgz or .tar.gz tarball"
        ));
    }
    let (bytes, prov) = if is_url {
        download(source)?
    } else {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read `{source}`"))?;
        let prov = std::fs::read(format!("{source}.prov")).ok();
        (bytes, prov)
    };
    let archive_name = source.rsplit('/').next().unwrap_or(source).to_owned();
    verify_or_warn(&args, &bytes, prov.as_deref(), &archive_name, &context())?;
    let plugin = chartkit_plugin::install_archive(
        &bytes,
        &archive_name,
        prov.as_deref(),
        &plugins_dir,
        &reserved,
        &settings,
    )
    .with_context(context)?;
    outln!("Installed plugin: {}", plugin.metadata.name)?;
    Ok(ExitCode::SUCCESS)
}

/// Checks a tarball against its `.prov` (printing what helm prints), or warns that
/// `--verify=false` skips it.
fn verify_or_warn(
    args: &PluginInstallArgs,
    bytes: &[u8],
    prov: Option<&[u8]>,
    file_name: &str,
    context: &str,
) -> Result<()> {
    if !args.verify {
        outln!("WARNING: Skipping plugin signature verification")?;
        return Ok(());
    }
    outln!("Verifying plugin signature...")?;
    let Some(prov) = prov else {
        return Err(
            err!("plugin verification failed: no provenance file (.prov) found")
                .context(context.to_owned())
                .with_hint("install with --verify=false to skip the check (not recommended)"),
        );
    };
    let (_, keyring) = super::keyring_or_default(args.keyring.as_deref(), "gpg --export")?;
    let verification =
        chartkit_signing::verify(&String::from_utf8_lossy(prov), bytes, file_name, &keyring)
            .map_err(|e| err!("plugin verification failed: {e}"))
            .with_context(|| context.to_owned())?;
    for signer in &verification.user_ids {
        outln!("Signed by: {signer}")?;
    }
    outln!(
        "Using Key With Fingerprint: {}",
        verification.fingerprint.to_uppercase()
    )?;
    outln!("Plugin Hash Verified: sha256:{}", verification.sha256)?;
    Ok(())
}

/// `plugin install oci://HOST/PATH/NAME:TAG`: the plugin artifact pulled with the
/// registry client `pull oci://` uses (credentials from the flags or `registry login`),
/// verified against its provenance layer unless `--verify=false`, and installed as
/// `NAME`, the repository's last part, as helm names it.
fn install_oci(
    args: &PluginInstallArgs,
    plugins_dir: &std::path::Path,
    reserved: &[&str],
    settings: &std::collections::BTreeMap<String, String>,
) -> Result<ExitCode> {
    let source = args.source.as_str();
    let context = || format!("cannot install the plugin `{source}`");
    let reference = chartkit_oci::Reference::parse(source)
        .map_err(crate::error::Error::new)
        .with_context(context)?;
    let name = chartkit_oci::plugin::plugin_name(&reference).to_owned();
    let target = plugins_dir.join(&name);
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(err!("plugin already exists at `{}`", target.display())
            .context(context())
            .with_hint(format!("remove it first: chartkit plugin uninstall {name}")));
    }
    let access = chartkit_repo_client::Access {
        username: args.username.clone(),
        password: args.password.clone(),
        ca_file: args.ca_file.clone(),
        cert_file: args.cert_file.clone(),
        key_file: args.key_file.clone(),
        insecure_skip_tls_verify: args.insecure_skip_tls_verify,
        plain_http: args.plain_http,
        ..Default::default()
    };
    let client = super::repo_support::client(false, 120)?;
    let registry = client
        .registry(&reference.registry, &access)
        .map_err(super::repo_support::client_error)?;
    let artifact = chartkit_oci::plugin::pull_plugin(&registry, &reference)
        .map_err(|e| err!("failed to pull plugin from {source}: {e}"))?;
    let metadata = chartkit_plugin::archive_metadata(&artifact.tarball, &artifact.file_name)
        .map_err(|e| err!("failed to extract plugin metadata from tarball: {e}"))
        .with_context(context)?;
    let file_name = format!("{}-{}.tgz", metadata.name, metadata.version);
    let prov = artifact.prov.as_ref().map(|(_, bytes)| bytes.as_slice());
    verify_or_warn(args, &artifact.tarball, prov, &file_name, &context())?;
    let plugin = chartkit_plugin::install_archive_as(
        &artifact.tarball,
        &artifact.file_name,
        &name,
        prov,
        plugins_dir,
        reserved,
        settings,
    )
    .with_context(context)?;
    outln!("Installed plugin: {}", plugin.metadata.name)?;
    Ok(ExitCode::SUCCESS)
}

/// `plugin install URL` of a git repository, as helm's VCS installer: cloned with `git`
/// into helm's cache, `--version` checked out, copied into the plugin directory. There is
/// no signature to check, so helm (and chartkit) ask for `--verify=false`.
fn install_vcs(
    args: &PluginInstallArgs,
    plugins_dir: &std::path::Path,
    reserved: &[&str],
    settings: &std::collections::BTreeMap<String, String>,
) -> Result<ExitCode> {
    let source = args.source.as_str();
    if args.verify {
        return Err(err!(
            "plugin source does not support verification. Use --verify=false to skip verification"
        )
        .with_hint(format!(
            "`{source}` is not a directory, a tarball or oci://, so it is read as a git repository, which has no .prov to check"
        )));
    }
    outln!("WARNING: Skipping plugin signature verification")?;
    let [_, cache_home, _] = env::helm_homes();
    let cache_dir = cache_home
        .context("cannot locate Helm's cache directory: none of HELM_CACHE_HOME, XDG_CACHE_HOME and HOME is set")?
        .join("plugins");
    let plugin = chartkit_plugin::install_vcs(
        source,
        &args.version,
        &cache_dir,
        plugins_dir,
        reserved,
        settings,
    )
    .with_context(|| {
        format!(
            "cannot get information about plugin source \"{source}\" (if it's a local directory, does it exist?)"
        )
    })?;
    outln!("Installed plugin: {}", plugin.metadata.name)?;
    Ok(ExitCode::SUCCESS)
}

/// A tarball and its `.prov` (when the server has one) from http(s). As in helm, the
/// transfer has no overall time limit (a large plugin on a slow link takes what it
/// takes); connecting has helm's 30 seconds.
fn download(url: &str) -> Result<(Vec<u8>, Option<Vec<u8>>)> {
    let client = reqwest::blocking::Client::builder()
        .timeout(None)
        .connect_timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| {
            err!(
                "cannot make an HTTP client: {}",
                chartkit_oci::registry::chain(&e)
            )
        })?;
    let get = |url: &str| -> Result<Option<Vec<u8>>> {
        let response = client.get(url).send().map_err(|e| {
            err!(
                "cannot download `{url}`: {}",
                chartkit_oci::registry::chain(&e)
            )
        })?;
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !response.status().is_success() {
            crate::error::bail!("cannot download `{url}`: {}", response.status());
        }
        let bytes = response.bytes().map_err(|e| {
            err!(
                "cannot download `{url}`: {}",
                chartkit_oci::registry::chain(&e)
            )
        })?;
        Ok(Some(bytes.to_vec()))
    };
    let bytes = get(url)?.ok_or_else(|| err!("cannot download `{url}`: 404 Not Found"))?;
    let prov = get(&format!("{url}.prov"))?;
    Ok((bytes, prov))
}

fn package(args: PluginPackageArgs) -> Result<ExitCode> {
    if !args.path.is_dir() {
        crate::error::bail!(
            "plugin package only supports directories, not tarballs: `{}`",
            args.path.display()
        );
    }
    let plugin =
        chartkit_plugin::load_dir(&args.path).map_err(|e| err!("invalid plugin directory: {e}"))?;
    // The key is checked before anything is written.
    let signer = if args.sign {
        let key_name = args
            .key
            .clone()
            .context("--key is required to sign a plugin (or pass --sign=false)")?;
        let (keyring_path, keyring) =
            super::keyring_or_default(args.keyring.as_deref(), "gpg --export-secret-keys")?;
        let passphrase = args
            .passphrase_file
            .as_deref()
            .map(super::read_passphrase)
            .transpose()?;
        keyring
            .find(&key_name)
            .map_err(crate::error::Error::new)
            .and_then(|k| {
                chartkit_signing::check_signing_key(k, passphrase.as_deref())
                    .map_err(crate::error::Error::new)
            })
            .with_context(|| format!("cannot sign with keyring `{}`", keyring_path.display()))?;
        Some((keyring, key_name, passphrase))
    } else {
        outln!(
            "WARNING: Skipping plugin signing. This is not recommended for plugins intended for distribution."
        )?;
        None
    };
    let (file_name, bytes) = chartkit_plugin::package_dir(&plugin)?;
    let path = args.destination.join(&file_name);
    let prov = match &signer {
        Some((keyring, key_name, passphrase)) => {
            let key = keyring.find(key_name)?;
            Some(
                chartkit_signing::sign_chart(
                    &chartkit_plugin::signing_metadata_yaml(&plugin.metadata),
                    &file_name,
                    &bytes,
                    key,
                    passphrase.as_deref(),
                )
                .with_context(|| format!("cannot sign `{}`", path.display()))?,
            )
        }
        None => None,
    };
    std::fs::create_dir_all(&args.destination)
        .with_context(|| format!("cannot create `{}`", args.destination.display()))?;
    chartkit_durable::write(&path, &bytes)?;
    if let Some(prov) = prov {
        let prov_path = args.destination.join(format!("{file_name}.prov"));
        chartkit_durable::write(&prov_path, prov.as_bytes())?;
        outln!(
            "Successfully signed. Signature written to: {}",
            prov_path.display()
        )?;
    }
    outln!(
        "Successfully packaged plugin and saved it to: {}",
        path.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

fn verify(args: PluginVerifyArgs) -> Result<ExitCode> {
    if args.path.is_dir() {
        crate::error::bail!(
            "directory verification not supported - only plugin tarballs can be verified"
        );
    }
    let bytes = std::fs::read(&args.path)
        .with_context(|| format!("cannot read `{}`", args.path.display()))?;
    let prov_path = format!("{}.prov", args.path.display());
    let prov = std::fs::read_to_string(&prov_path)
        .with_context(|| format!("could not find provenance file `{prov_path}`"))?;
    let (_, keyring) = super::keyring_or_default(args.keyring.as_deref(), "gpg --export")?;
    let file_name = args
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let verification = chartkit_signing::verify(&prov, &bytes, &file_name, &keyring)
        .map_err(|e| err!("plugin verification failed: {e}"))?;
    for signer in &verification.user_ids {
        outln!("Signed by: {signer}")?;
    }
    outln!(
        "Using Key With Fingerprint: {}",
        verification.fingerprint.to_uppercase()
    )?;
    outln!("Plugin Hash Verified: sha256:{}", verification.sha256)?;
    Ok(ExitCode::SUCCESS)
}

fn list(args: PluginListArgs) -> Result<ExitCode> {
    let dirs = env::helm_plugins();
    let found = chartkit_plugin::find_plugins(&dirs, args.plugin_type.as_deref())?;
    warn_unreadable(&found.unreadable);
    let mut rows = vec![
        [
            "NAME",
            "VERSION",
            "TYPE",
            "APIVERSION",
            "PROVENANCE",
            "SOURCE",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    for plugin in &found.plugins {
        let m = &plugin.metadata;
        let provenance = dirs
            .first()
            .map(|d| chartkit_plugin::provenance(d, plugin))
            .unwrap_or("unknown");
        let source = if m.source_url.is_empty() {
            "unknown".to_owned()
        } else {
            m.source_url.clone()
        };
        rows.push(vec![
            m.name.clone(),
            m.version.clone(),
            m.plugin_type.clone(),
            m.api_version.clone(),
            provenance.to_owned(),
            source,
        ]);
    }
    out!("{}", super::table::layout(&rows, 0))?;
    Ok(ExitCode::SUCCESS)
}

/// Plugins that could not be read are logged and skipped, as helm does.
fn warn_unreadable(errors: &[PluginError]) {
    for error in errors {
        crate::log::warn_with(
            "failed to load plugin (ignoring)",
            &[("error", &error.to_string())],
        );
    }
}

fn uninstall(args: PluginUninstallArgs, kube: &KubeArgs, global: &GlobalArgs) -> Result<ExitCode> {
    for_each_plugin(
        args,
        kube,
        global,
        "Uninstalled",
        "uninstall",
        chartkit_plugin::uninstall,
    )
}

/// Runs `action` on each named plugin, as helm's `plugin uninstall|update` do: every name
/// is tried, each success printed, and the failures reported together at the end.
fn for_each_plugin<T>(
    args: PluginUninstallArgs,
    kube: &KubeArgs,
    global: &GlobalArgs,
    done: &str,
    verb: &str,
    action: impl Fn(
        &std::path::Path,
        &str,
        &std::collections::BTreeMap<String, String>,
    ) -> std::result::Result<T, PluginError>,
) -> Result<ExitCode> {
    let plugins_dir = install_dir()?;
    let settings = helm_env::settings(kube, global);
    let mut failures = Vec::new();
    for name in &args.names {
        match action(&plugins_dir, name, &settings) {
            Ok(_) => outln!("{done} plugin: {name}")?,
            Err(PluginError::NotFound { .. }) => failures.push(format!("plugin: {name} not found")),
            Err(error) => failures.push(format!(
                "failed to {verb} plugin {name}, got error ({error})"
            )),
        }
    }
    if failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(err!("{}", failures.join("\n")))
    }
}

/// `--post-renderer NAME|PATH` as a renderer: a postrenderer/v1 plugin by name, or (as
/// Helm 3 allowed) an executable by path.
pub fn post_renderer(args: &PostRenderArgs) -> Result<Option<chartkit_render::PostRenderer>> {
    let Some(given) = args.post_renderer.clone().filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let extra = args.post_renderer_args.clone();
    if given.contains(std::path::MAIN_SEPARATOR) {
        let path = std::path::PathBuf::from(&given);
        if !path.is_file() {
            crate::error::bail!(
                "invalid argument \"{given}\" for \"--post-renderer\" flag: no executable at `{given}`"
            );
        }
        return Ok(Some(chartkit_render::PostRenderer::new(move |input| {
            chartkit_plugin::post_render_program(&path, &extra, input).map_err(|e| e.to_string())
        })));
    }
    let plugin =
        chartkit_plugin::find_plugin(&env::helm_plugins(), &given, Some("postrenderer/v1"))
            .with_context(|| {
                format!("invalid argument \"{given}\" for \"--post-renderer\" flag")
            })?;
    Ok(Some(chartkit_render::PostRenderer::new(move |input| {
        chartkit_plugin::post_render(&plugin, &extra, input).map_err(|e| match e {
            PluginError::EmptyOutput { .. } => e.to_string(),
            e => {
                let name = &plugin.metadata.name;
                format!("failed to invoke post-renderer plugin \"{name}\": {e}")
            }
        })
    })))
}

fn update(args: PluginUninstallArgs, kube: &KubeArgs, global: &GlobalArgs) -> Result<ExitCode> {
    for_each_plugin(
        args,
        kube,
        global,
        "Updated",
        "update",
        chartkit_plugin::update,
    )
}

/// helm's global flags that may follow a plugin's name: they set helm's settings and
/// are not passed on (helm's `manuallyProcessArgs`).
const SETTING_FLAGS: &[&str] = &[
    "--kube-context",
    "--namespace",
    "-n",
    "--kubeconfig",
    "--kube-apiserver",
    "--kube-token",
    "--kube-as-user",
    "--kube-as-group",
    "--kube-ca-file",
    "--registry-config",
    "--repository-cache",
    "--repository-config",
    "--kube-insecure-skip-tls-verify",
    "--kube-tls-server-name",
];

/// `chartkit NAME ARGS...`: the cli/v1 plugin NAME, or clap's error for an unknown
/// command when there is none.
pub fn external(args: Vec<OsString>, cli_kube: &KubeArgs, global: &GlobalArgs) -> Result<ExitCode> {
    let name = args
        .first()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let plugin = if env::var(env::HELM_NO_PLUGINS).as_deref() == Some("1") {
        None
    } else {
        let found = chartkit_plugin::find_plugins(&env::helm_plugins(), Some("cli/v1"))?;
        found
            .plugins
            .into_iter()
            .find(|p| p.metadata.command_name() == name)
    };
    let Some(plugin) = plugin else {
        return Ok(unknown_command(&name));
    };
    let rest: Vec<String> = args[1..]
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let (known, passed) = split_setting_flags(&rest);
    let (kube, global) = reparse_settings(&known, cli_kube, global)?;
    let settings = helm_env::settings(&kube, &global);
    match chartkit_plugin::run_cli(&plugin, &passed, &settings) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(error) => match error.exit_code() {
            Some(code) => {
                errln!("Error: {error}");
                Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
            }
            None => Err(error.into()),
        },
    }
}

fn split_setting_flags(args: &[String]) -> (Vec<String>, Vec<String>) {
    let mut known = Vec::new();
    let mut passed = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--debug" {
            known.push(arg.clone());
        } else if SETTING_FLAGS.contains(&arg.as_str()) {
            known.push(arg.clone());
            known.extend(iter.next().cloned());
        } else if SETTING_FLAGS
            .iter()
            .any(|f| arg.starts_with(&format!("{f}=")))
        {
            known.push(arg.clone());
        } else {
            passed.push(arg.clone());
        }
    }
    (known, passed)
}

/// The global flags given before the plugin's name, with those after it applied over.
fn reparse_settings(
    known: &[String],
    kube: &KubeArgs,
    global: &GlobalArgs,
) -> Result<(KubeArgs, GlobalArgs)> {
    use clap::Parser as _;
    let mut argv: Vec<String> = vec!["chartkit".into()];
    argv.extend(known.iter().cloned());
    argv.extend(["plugin".into(), "list".into()]);
    let parsed = Cli::try_parse_from(&argv).map_err(|e| err!("{}", e.to_string().trim()))?;
    let given = |flag: &str| {
        known
            .iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    // A setting given again after the plugin's name replaces the one given before it.
    macro_rules! take_given {
        ($merged:ident, $parsed:expr, $($flag:literal => $field:ident),+ $(,)?) => {
            $(if given($flag) {
                $merged.$field = $parsed.$field.clone();
            })+
        };
    }
    let mut merged_kube = kube.clone();
    if given("--namespace") || given("-n") {
        merged_kube.namespace = parsed.kube.namespace.clone();
    }
    take_given!(
        merged_kube,
        parsed.kube,
        "--kubeconfig" => kubeconfig,
        "--kube-context" => kube_context,
        "--kube-token" => kube_token,
        "--kube-apiserver" => kube_apiserver,
        "--kube-as-user" => kube_as_user,
        "--kube-as-group" => kube_as_group,
        "--kube-ca-file" => kube_ca_file,
        "--kube-tls-server-name" => kube_tls_server_name,
        "--kube-insecure-skip-tls-verify" => kube_insecure_skip_tls_verify,
    );
    let mut merged_global = global.clone();
    merged_global.debug |= given("--debug");
    take_given!(
        merged_global,
        parsed.global,
        "--repository-config" => repository_config,
        "--repository-cache" => repository_cache,
        "--registry-config" => registry_config,
    );
    Ok((merged_kube, merged_global))
}

/// clap's error for an unknown command, as if plugins did not exist.
fn unknown_command(name: &str) -> ExitCode {
    use clap::CommandFactory as _;
    let mut command = Cli::command();
    let error = command.error(
        clap::error::ErrorKind::InvalidSubcommand,
        format!("unrecognized subcommand '{name}'"),
    );
    crate::report::usage(&error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_settings_flags_are_kept_from_the_plugin() {
        let args: Vec<String> = [
            "-n",
            "apps",
            "--debug",
            "x",
            "--kube-context=c",
            "--other",
            "y",
        ]
        .map(String::from)
        .to_vec();
        let (known, passed) = split_setting_flags(&args);
        assert_eq!(known, ["-n", "apps", "--debug", "--kube-context=c"]);
        assert_eq!(passed, ["x", "--other", "y"]);
    }

    #[test]
    fn every_command_name_is_reserved() {
        let names = built_in_names();
        assert!(names.iter().any(|n| n == "install"));
        assert!(names.iter().any(|n| n == "ls"));
    }
}
