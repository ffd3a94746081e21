mod addon;
mod chart_source;
mod completion;
mod create;
mod dependency;
mod diff;
mod helm_env;
mod helm_info;
mod in_order;
mod key;
mod lint;
mod mirror;
mod package;
mod plugin;
mod pull;
mod push;
mod push_oci;
mod registry;
mod release_colour;
mod release_read;
mod release_write;
mod repo_add;
mod repo_import_helm;
mod repo_index;
mod repo_list;
mod repo_query;
mod repo_remove;
mod repo_support;
mod repo_update;
mod sandbox;
mod search_hub;
mod search_repo;
pub(crate) mod serve;
mod show;
mod table;
mod template;
mod verify;

use std::process::ExitCode;

use chartkit_chart::LoadOptions;
use chartkit_chart::archive::Limits;

use crate::cli::{
    AddonCommand, Cli, Command, DependencyCommand, DiffCommand, RepoCommand, SandboxCommand,
    SearchCommand,
};
use crate::env;

pub fn dispatch(cli: Cli) -> crate::error::Result<ExitCode> {
    let offline = cli.offline;
    let kube = &cli.kube;
    if !cli.kube_unread {
        repo_support::use_kube(crate::kube::options(kube));
    }
    repo_support::use_locations(&cli.global);
    repo_support::use_plugin_flags(kube, &cli.global);
    crate::wait_view::lines_when_piped(cli.global.debug);
    let global = &cli.global;
    match cli.command {
        Command::Create(args) => create::run(args),
        Command::Package(args) => package::run(args, offline),
        Command::Lint(args) => lint::run(args, offline),
        Command::Template(args) => template::run(args, offline, (!cli.kube_unread).then_some(kube)),
        Command::Show(command) => show::run(command, offline),
        Command::Verify(args) => verify::run(args),
        Command::Key(command) => key::run(command),
        Command::Repo(RepoCommand::Index(args)) => repo_index::run(args),
        Command::Repo(RepoCommand::Query(args)) => repo_query::run(args),
        Command::Repo(RepoCommand::Add(args)) => repo_add::run(args, offline),
        Command::Repo(RepoCommand::List(args)) => repo_list::run(args),
        Command::Repo(RepoCommand::Remove(args)) => repo_remove::run(args),
        Command::Repo(RepoCommand::Update(args)) => repo_update::run(args, offline),
        Command::Repo(RepoCommand::ImportHelm(args)) => repo_import_helm::run(args),
        Command::Search(SearchCommand::Repo(args)) => search_repo::run(args, offline),
        Command::Search(SearchCommand::Hub(args)) => search_hub::run(args, offline),
        Command::Pull(args) => pull::run(args, offline),
        Command::Serve(args) => serve::run(args),
        Command::Push(args) => push::run(args),
        Command::Registry(command) => registry::run(command),
        Command::Addon(AddonCommand::Resolve(args)) => addon::resolve(args, offline),
        Command::Dependency(DependencyCommand::List(args)) => dependency::list(args),
        Command::Dependency(DependencyCommand::Update(args)) => {
            dependency::fetch(args, false, offline)
        }
        Command::Dependency(DependencyCommand::Build(args)) => {
            dependency::fetch(args, true, offline)
        }
        Command::Mirror(args) => mirror::run(args, offline),
        Command::Sandbox(SandboxCommand::Up(args)) => sandbox::up(*args),
        Command::Sandbox(SandboxCommand::Down) => sandbox::down(),
        Command::Sandbox(SandboxCommand::Status) => sandbox::status(),
        Command::List(args) => release_read::list(args, kube),
        Command::History(args) => release_read::history(args, kube),
        Command::Status(args) => release_read::status(args, kube, global),
        Command::Get(command) => release_read::get(command, kube),
        Command::Install(args) => release_write::install(args, kube, global, offline),
        Command::Upgrade(args) => release_write::upgrade(args, kube, global, offline),
        Command::Uninstall(args) => release_write::uninstall(args, kube),
        Command::Rollback(args) => release_write::rollback(args, kube),
        Command::Test(args) => release_write::test(args, kube),
        Command::Diff(DiffCommand::Upgrade(args)) => diff::upgrade(*args, kube, global, offline),
        Command::Diff(DiffCommand::Rollback(args)) => diff::rollback(args, kube, global),
        Command::Diff(DiffCommand::Revision(args)) => diff::revision(args, kube, global),
        Command::Plugin(command) => plugin::run(command, kube, global),
        Command::External(args) => plugin::external(args, kube, global),
        Command::Env(args) => helm_info::env(args, kube, global),
        Command::Version(args) => helm_info::version(args),
        Command::Completion(args) => completion::script(args),
        Command::Complete(args) => completion::complete(args, kube),
    }
}

/// Archive and chart size limits, from the environment or Helm's defaults.
pub fn limits() -> crate::error::Result<Limits> {
    let mut limits = Limits::default();
    if let Some(size) = env::number(env::MAX_FILE_SIZE)? {
        limits.max_file_size = size;
    }
    if let Some(size) = env::number(env::MAX_CHART_SIZE)? {
        limits.max_total_size = size;
    }
    Ok(limits)
}

/// Loads a chart for a command that uses its contents, printing what the loader noticed
/// (symbolic links followed, files in the wrong place) to stderr. `check_api_version`
/// refuses apiVersions Helm's loader does not know, as helm does before it renders.
pub fn load_chart(
    path: &std::path::Path,
    check_api_version: bool,
) -> crate::error::Result<chartkit_chart::Chart> {
    use crate::error::Context;
    let options = LoadOptions {
        check_api_version,
        ..load_options()?
    };
    let chart = chartkit_chart::load(path, &options)
        .with_context(|| format!("cannot load the chart at `{}`", path.display()))?;
    for warning in &chart.warnings {
        crate::log::line(warning);
    }
    Ok(chart)
}

/// The render memory limit, from the environment or chartkit's default.
pub fn memory_limit() -> crate::error::Result<u64> {
    Ok(env::number(env::MAX_RENDER_MEMORY)?.unwrap_or(chartkit_render::DEFAULT_MEMORY_LIMIT))
}

/// What to do about a render that went over its memory limit.
pub fn memory_limit_hint(limit: u64) -> String {
    format!(
        "the limit is {limit} bytes; if the chart really needs more, set `{}` to a larger number of bytes",
        env::MAX_RENDER_MEMORY
    )
}

pub fn load_options() -> crate::error::Result<LoadOptions> {
    Ok(LoadOptions {
        limits: limits()?,
        ..LoadOptions::default()
    })
}

/// The keyring given with --keyring, or helm's default (GnuPG's `pubring.gpg`), read.
/// `export` is the GnuPG command that writes the keys needed, for the hint when the
/// default keyring is missing.
pub fn keyring_or_default(
    given: Option<&std::path::Path>,
    export: &str,
) -> crate::error::Result<(std::path::PathBuf, chartkit_signing::Keyring)> {
    if let Some(path) = given {
        return Ok((path.to_path_buf(), read_keyring(path)?));
    }
    let Some(path) = env::default_keyring() else {
        return Err(crate::report::with_hint(
            crate::error::err!(
                "no --keyring given, and the default keyring cannot be located: neither `{}` nor `{}` is set",
                env::GNUPGHOME,
                env::HOME
            ),
            "pass --keyring FILE",
        ));
    };
    if !path.exists() {
        return Err(crate::report::with_hint(
            crate::error::err!(
                "no --keyring given, and the default keyring `{}` (GnuPG's, as helm uses) does not exist",
                path.display()
            ),
            format!("pass --keyring FILE; `{export} > FILE` writes GnuPG's keys to one"),
        ));
    }
    let keyring = read_keyring(&path)?;
    Ok((path, keyring))
}

/// Reads a keyring file (armored or binary), warning about keys that had to be skipped.
pub fn read_keyring(path: &std::path::Path) -> crate::error::Result<chartkit_signing::Keyring> {
    use crate::error::Context;
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read keyring `{}`", path.display()))?;
    let keyring = chartkit_signing::Keyring::from_bytes(&bytes)
        .with_context(|| format!("cannot use keyring `{}`", path.display()))?;
    for skipped in keyring.skipped() {
        crate::log::warn_with(
            "skipped a key of the keyring",
            &[
                ("keyring", &path.display().to_string()),
                ("reason", skipped),
            ],
        );
    }
    Ok(keyring)
}

/// Reads a passphrase the way `helm package --passphrase-file` does: the file's first line
/// without its line ending, from stdin when the path is `-`.
pub fn read_passphrase(path: &std::path::Path) -> crate::error::Result<String> {
    use std::io::BufRead;

    use crate::error::Context;
    let mut line = String::new();
    if path == std::path::Path::new("-") {
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .context("cannot read the passphrase from stdin")?;
    } else {
        let file = std::fs::File::open(path)
            .with_context(|| format!("cannot read passphrase file `{}`", path.display()))?;
        std::io::BufReader::new(file)
            .read_line(&mut line)
            .with_context(|| format!("cannot read passphrase file `{}`", path.display()))?;
    }
    let passphrase = line.trim_end_matches(['\n', '\r']).to_owned();
    Ok(passphrase)
}

/// Standard input, opened only when something reads it (`-f -`): opening it allocates an
/// 8 KiB buffer, which in a small render is a fresh page of memory for nothing.
pub struct StdinOnDemand;

impl std::io::Read for StdinOnDemand {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        std::io::stdin().lock().read(buf)
    }
}

/// A path without `.` components, as Go's `filepath.Join` cleans the paths helm prints
/// (`./web` gives `web/charts/db`).
pub(crate) fn go_clean(path: &std::path::Path) -> std::path::PathBuf {
    let cleaned: std::path::PathBuf = path
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    if cleaned.as_os_str().is_empty() {
        std::path::PathBuf::from(".")
    } else {
        cleaned
    }
}
