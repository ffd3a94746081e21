//! `list`, `history`, `status` and `get`: helm's read-only release commands, printing
//! what helm prints.

use std::process::ExitCode;

use chartkit_release::query::{self, ListOptions, NameFilter, Order, States};
use chartkit_release::{Driver, Release, Storage, views};

use crate::cli::{
    GetAllArgs, GetCommand, GetOutputArgs, GetTextArgs, GetValuesArgs, GlobalArgs, HistoryArgs,
    KubeArgs, ListArgs, ReleaseOutput, StatusArgs,
};
use crate::env;
use crate::error::{Error, Result};

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::new)
}

/// The record store the flags and variables point at: the namespace's, or every
/// namespace's with `all_namespaces`.
async fn storage(kube: &KubeArgs, all_namespaces: bool) -> Result<Storage> {
    let driver = Driver::from_name(&env::helm_driver()).map_err(Error::new)?;
    let connection = crate::kube::options(kube)
        .connect()
        .await
        .map_err(Error::new)?;
    let namespace = (!all_namespaces).then_some(connection.namespace.as_str());
    Ok(Storage::new(connection.client.clone(), driver, namespace))
}

fn print(text: &str) -> Result<ExitCode> {
    crate::output::stdout_bytes(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

pub fn list(args: ListArgs, kube: &KubeArgs) -> Result<ExitCode> {
    if args.time_format.as_deref().is_some_and(|f| !f.is_empty()) {
        return Err(Error::msg("--time-format is not supported by chartkit yet")
            .with_hint("leave it out to get helm's default time format"));
    }
    let mut states = States::NONE;
    for (on, state) in [
        (args.deployed, States::DEPLOYED),
        (args.uninstalled, States::UNINSTALLED),
        (args.uninstalling, States::UNINSTALLING),
        (args.pending, States::PENDING),
        (args.failed, States::FAILED),
        (args.superseded, States::SUPERSEDED),
    ] {
        if on {
            states = states.union(state);
        }
    }
    let options = ListOptions {
        states,
        filter: args.filter.clone(),
        selector: args.selector.clone(),
        order: Order::from_flags(args.date, args.reverse),
        limit: usize::try_from(args.max).unwrap_or(0),
        offset: usize::try_from(args.offset).unwrap_or(0),
    };
    let filter = NameFilter::new(options.filter.as_deref()).map_err(Error::new)?;
    let releases = runtime()?.block_on(async {
        let storage = storage(kube, args.all_namespaces).await?;
        storage
            .list(|r| filter.matches(&r.name))
            .await
            .map_err(Error::new)
    })?;
    let releases = query::select(releases, &options).map_err(Error::new)?;

    if args.short {
        return print(&match args.output {
            ReleaseOutput::Json => views::names_json(&releases),
            ReleaseOutput::Yaml => views::names_yaml(&releases),
            ReleaseOutput::Table => releases.iter().map(|r| format!("{}\n", r.name)).collect(),
        });
    }
    let elements = views::list_elements(&releases, &env::local_zone(), None);
    print(&match args.output {
        ReleaseOutput::Json => views::list_json(&elements),
        ReleaseOutput::Yaml => views::list_yaml(&elements),
        ReleaseOutput::Table => {
            super::table::layout(&views::list_rows(&elements, args.no_headers), 0)
        }
    })
}

/// The names of the releases `list` shows (the newest revision of each, deployed or
/// failed), for completion.
pub(super) fn release_names(kube: &KubeArgs) -> Result<Vec<String>> {
    let releases = runtime()?.block_on(async {
        let storage = storage(kube, false).await?;
        storage.list(|_| true).await.map_err(Error::new)
    })?;
    let releases = query::select(releases, &ListOptions::default()).map_err(Error::new)?;
    Ok(releases.into_iter().map(|r| r.name.clone()).collect())
}

pub fn history(args: HistoryArgs, kube: &KubeArgs) -> Result<ExitCode> {
    if !query::valid_release_name(&args.release) {
        return Err(Error::msg(format!(
            "release name is invalid: {}",
            args.release
        )));
    }
    let history = runtime()?.block_on(async {
        let storage = storage(kube, false).await?;
        storage.history(&args.release).await.map_err(Error::new)
    })?;
    let history = query::newest_revisions(history, usize::try_from(args.max).unwrap_or(0));
    print(&match args.output {
        ReleaseOutput::Json => views::history_json(&history),
        ReleaseOutput::Yaml => views::history_yaml(&history),
        ReleaseOutput::Table => super::table::layout(&views::history_rows(&history), 0),
    })
}

/// The revision `get` and `status` show: the newest, or `--revision`.
fn content(kube: &KubeArgs, name: &str, revision: i64) -> Result<Release> {
    if !query::valid_release_name(name) {
        return Err(Error::msg(format!(
            "releaseContent: Release name is invalid: {name}"
        )));
    }
    runtime()?.block_on(async {
        let storage = storage(kube, false).await?;
        storage.content(name, revision).await.map_err(Error::new)
    })
}

pub fn status(args: StatusArgs, kube: &KubeArgs, global: &GlobalArgs) -> Result<ExitCode> {
    if !query::valid_release_name(&args.release) {
        return Err(Error::msg(format!(
            "releaseContent: Release name is invalid: {}",
            args.release
        )));
    }
    let table = args.output == ReleaseOutput::Table;
    let (release, resources, stuck) = runtime()?.block_on(async {
        let storage = storage(kube, false).await?;
        let mut release = storage
            .content(&args.release, args.revision)
            .await
            .map_err(Error::new)?;
        // helm reads the release's objects from the cluster: whole for its JSON and YAML,
        // as the server's Tables for its text.
        let namespace = release.namespace.clone();
        let mut tables = Default::default();
        if table {
            tables = chartkit_release::resources::fetch_tables(
                storage.client(),
                &release.manifest,
                &namespace,
            )
            .await;
        } else if let Some(info) = release.info.as_mut() {
            info.resources =
                chartkit_release::resources::fetch(storage.client(), &release.manifest, &namespace)
                    .await;
        }
        // A pending newest revision that no chartkit operation holds is worth a word; a
        // failure to read the lock only loses the hint.
        let mut stuck = None;
        if args.revision <= 0
            && let Some(found) = chartkit_engine::Stuck::of(&release)
            && let Ok(None) =
                chartkit_engine::lock_holder(storage.client(), &namespace, &args.release).await
        {
            stuck = Some(found);
        }
        Ok::<_, Error>((release, tables, stuck))
    })?;
    let resources_text =
        (!resources.is_empty()).then(|| chartkit_release::tables::resources_text(&resources));
    let printed = print(&match args.output {
        ReleaseOutput::Json => views::status_json(&release),
        ReleaseOutput::Yaml => views::status_yaml(&release),
        ReleaseOutput::Table if super::release_colour::enabled(global.color.as_deref()) => {
            super::release_colour::status_table(
                &views::status_text(&release, None, resources_text.as_deref()),
                &release,
            )
        }
        ReleaseOutput::Table => views::status_text(&release, None, resources_text.as_deref()),
    })?;
    if let Some(stuck) = stuck {
        crate::log::warn(&stuck.status_hint());
    }
    Ok(printed)
}

pub fn get(command: GetCommand, kube: &KubeArgs) -> Result<ExitCode> {
    match command {
        GetCommand::All(GetAllArgs {
            release,
            revision,
            template,
        }) => {
            if template.is_some_and(|t| !t.is_empty()) {
                return Err(
                    Error::msg("get all --template is not supported by chartkit yet")
                        .with_hint("leave it out to print everything as helm's default does"),
                );
            }
            let release = content(kube, &release, revision)?;
            let computed = views::computed_values(&release);
            print(&views::status_text(&release, Some(&computed), None))
        }
        GetCommand::Hooks(GetTextArgs { release, revision }) => {
            print(&views::hooks_text(&content(kube, &release, revision)?))
        }
        GetCommand::Manifest(GetTextArgs { release, revision }) => {
            print(&views::manifest_text(&content(kube, &release, revision)?))
        }
        GetCommand::Notes(GetTextArgs { release, revision }) => {
            print(&views::notes_text(&content(kube, &release, revision)?))
        }
        GetCommand::Metadata(GetOutputArgs {
            release,
            revision,
            output,
        }) => {
            let release = content(kube, &release, revision)?;
            print(&match output {
                ReleaseOutput::Json => views::metadata_json(&release),
                ReleaseOutput::Yaml => views::metadata_yaml(&release),
                ReleaseOutput::Table => views::metadata_text(&release),
            })
        }
        GetCommand::Values(GetValuesArgs {
            release,
            all,
            revision,
            output,
        }) => {
            let release = content(kube, &release, revision)?;
            let values = if all {
                Some(views::computed_values(&release))
            } else {
                release.config.clone()
            };
            print(&match output {
                ReleaseOutput::Json => views::values_json(&values),
                ReleaseOutput::Yaml => views::values_yaml(&values),
                ReleaseOutput::Table => views::values_text(&values, all),
            })
        }
    }
}
