//! `plugin package`: a plugin directory as the tarball helm writes (`NAME-VERSION.tgz`,
//! every file under `NAME/`), and the metadata text helm signs in its `.prov`.

use std::io::Write;
use std::path::Path;

use chartkit_yaml::{Map, Value};

use crate::metadata::{Metadata, PlatformCommand};
use crate::{Plugin, PluginError};

/// The tarball of an installed or source plugin directory: its file name and bytes.
/// Entries are in the lexical order of a walk, as Go's `filepath.Walk` gives them, with
/// each file's mode and modification time.
pub fn package_dir(plugin: &Plugin) -> Result<(String, Vec<u8>), PluginError> {
    let metadata = &plugin.metadata;
    let file_name = format!("{}-{}.tgz", metadata.name, metadata.version);
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| PluginError::Io {
            action: "cannot package",
            path,
            source,
        }
    };
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.follow_symlinks(false);
    let mut pending = vec![(plugin.dir.clone(), std::path::PathBuf::from(&metadata.name))];
    while let Some((path, name)) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).map_err(io(&path))?;
        let mut header = tar::Header::new_gnu();
        header.set_metadata(&meta);
        if meta.is_dir() {
            tar.append_data(&mut header, &name, std::io::empty())
                .map_err(io(&path))?;
            let mut children: Vec<_> = std::fs::read_dir(&path)
                .map_err(io(&path))?
                .filter_map(Result::ok)
                .map(|e| e.file_name())
                .collect();
            children.sort();
            for child in children.into_iter().rev() {
                pending.push((path.join(&child), name.join(&child)));
            }
        } else if meta.is_file() {
            let data = std::fs::read(&path).map_err(io(&path))?;
            tar.append_data(&mut header, &name, data.as_slice())
                .map_err(io(&path))?;
        }
    }
    let gz = tar.into_inner().map_err(io(&plugin.dir))?;
    let mut bytes = gz.finish().map_err(io(&plugin.dir))?;
    bytes.flush().map_err(io(&plugin.dir))?;
    Ok((file_name, bytes))
}

/// What helm signs about a plugin: its metadata as sigs.k8s.io/yaml writes Go's
/// `plugin.Metadata` (field names as in Go, keys sorted, absent lists `null`).
pub fn signing_metadata_yaml(metadata: &Metadata) -> String {
    let mut root = Map::new();
    let string = |s: &str| Value::String(s.to_owned());
    root.insert("APIVersion".into(), string(&metadata.api_version));
    let mut config = Map::new();
    match metadata.plugin_type.as_str() {
        "cli/v1" => {
            config.insert(
                "IgnoreFlags".into(),
                Value::Bool(metadata.config.ignore_flags),
            );
            config.insert("LongHelp".into(), string(&metadata.config.long_help));
            config.insert("ShortHelp".into(), string(&metadata.config.short_help));
            config.insert("Usage".into(), string(&metadata.config.usage));
        }
        "getter/v1" => {
            config.insert("Protocols".into(), strings(&metadata.config.protocols));
        }
        _ => {}
    }
    root.insert("Config".into(), Value::Map(config));
    root.insert("Name".into(), string(&metadata.name));
    root.insert("Runtime".into(), string(&metadata.runtime));
    let runtime = &metadata.runtime_config;
    let mut runtime_config = Map::new();
    runtime_config.insert(
        "PlatformCommand".into(),
        commands(&runtime.platform_command),
    );
    runtime_config.insert(
        "PlatformHooks".into(),
        if runtime.platform_hooks.is_empty() {
            Value::Null
        } else {
            let mut hooks = Map::new();
            for (event, list) in &runtime.platform_hooks {
                hooks.insert(event.clone(), commands(list));
            }
            Value::Map(hooks)
        },
    );
    runtime_config.insert(
        "ProtocolCommands".into(),
        if runtime.protocol_commands.is_empty() {
            Value::Null
        } else {
            Value::Seq(
                runtime
                    .protocol_commands
                    .iter()
                    .map(|(protocols, list)| {
                        let mut item = Map::new();
                        item.insert("PlatformCommand".into(), commands(list));
                        item.insert("Protocols".into(), strings(protocols));
                        Value::Map(item)
                    })
                    .collect(),
            )
        },
    );
    root.insert("RuntimeConfig".into(), Value::Map(runtime_config));
    root.insert("SourceURL".into(), string(&metadata.source_url));
    root.insert("Type".into(), string(&metadata.plugin_type));
    root.insert("Version".into(), string(&metadata.version));
    chartkit_yaml::to_yaml(&Value::Map(root))
}

fn strings(list: &[String]) -> Value {
    if list.is_empty() {
        Value::Null
    } else {
        Value::Seq(list.iter().map(|s| Value::String(s.clone())).collect())
    }
}

fn commands(list: &[PlatformCommand]) -> Value {
    if list.is_empty() {
        return Value::Null;
    }
    Value::Seq(
        list.iter()
            .map(|c| {
                let mut item = Map::new();
                item.insert("Architecture".into(), Value::String(c.arch.clone()));
                item.insert("Args".into(), strings(&c.args));
                item.insert("Command".into(), Value::String(c.command.clone()));
                item.insert("OperatingSystem".into(), Value::String(c.os.clone()));
                Value::Map(item)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_metadata_is_helms_text() {
        let metadata = crate::metadata::parse(
            "name: greet\nversion: 1.2.0\ncommand: $HELM_PLUGIN_DIR/run.sh\nhooks:\n  install: echo hooked\n",
        )
        .unwrap();
        assert_eq!(
            signing_metadata_yaml(&metadata),
            "APIVersion: legacy\nConfig:\n  IgnoreFlags: false\n  LongHelp: \"\"\n  ShortHelp: \"\"\n  Usage: \"\"\nName: greet\nRuntime: subprocess\nRuntimeConfig:\n  PlatformCommand:\n  - Architecture: \"\"\n    Args: null\n    Command: $HELM_PLUGIN_DIR/run.sh\n    OperatingSystem: \"\"\n  PlatformHooks:\n    install:\n    - Architecture: \"\"\n      Args:\n      - -c\n      - echo hooked\n      Command: sh\n      OperatingSystem: \"\"\n  ProtocolCommands: null\nSourceURL: \"\"\nType: cli/v1\nVersion: 1.2.0\n"
        );
    }
}
