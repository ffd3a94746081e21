//! `plugin.yaml` in both of Helm's forms, read into one model.
//!
//! Helm 4 writes `apiVersion: v1` with a `type` and a `runtime`; Helm 3's legacy file has
//! no `apiVersion` and says `command`, `platformCommand`, `hooks` and `downloaders`. Helm
//! reads a legacy file as a `cli/v1` plugin (or `getter/v1` when it has downloaders) run
//! as a subprocess, and so does this model, so the rest of chartkit sees one shape.

use chartkit_yaml::{Node, NodeKind};

/// The file every plugin directory holds.
pub const PLUGIN_FILE: &str = "plugin.yaml";

/// A plugin's description, whichever form its file had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// `v1`, or `legacy` for Helm 3's form (what `helm plugin list` shows).
    pub api_version: String,
    pub name: String,
    /// `cli/v1`, `getter/v1` or `postrenderer/v1`.
    pub plugin_type: String,
    /// `subprocess` or `extism/v1`.
    pub runtime: String,
    pub version: String,
    pub source_url: String,
    pub config: Config,
    pub runtime_config: RuntimeConfig,
}

impl Metadata {
    /// The command a `cli/v1` plugin is run as: the first word of its usage line when it
    /// has one (helm makes the usage line the command's cobra `Use`, whose first word is
    /// the command's name), else its name.
    pub fn command_name(&self) -> &str {
        self.config
            .usage
            .split_whitespace()
            .next()
            .unwrap_or(&self.name)
    }
}

/// The `config` of a plugin, by type.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    /// `cli/v1`: the command's usage line, short and long help.
    pub usage: String,
    pub short_help: String,
    pub long_help: String,
    /// `cli/v1`: the plugin gets no arguments (flags included) from the command line.
    pub ignore_flags: bool,
    /// `getter/v1`: the URL schemes the plugin serves.
    pub protocols: Vec<String>,
}

/// How a subprocess plugin is run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuntimeConfig {
    pub platform_command: Vec<PlatformCommand>,
    /// Commands by event (`install`, `update`, `delete`).
    pub platform_hooks: Vec<(String, Vec<PlatformCommand>)>,
    /// `getter/v1`: a command per set of schemes.
    pub protocol_commands: Vec<(Vec<String>, Vec<PlatformCommand>)>,
    /// Whether `$VAR` in hook arguments is expanded: not for legacy `hooks`, which helm
    /// hands to `sh -c` whole so that the shell expands them.
    pub expand_hook_args: bool,
}

/// A command, possibly for one operating system and architecture.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlatformCommand {
    pub os: String,
    pub arch: String,
    pub command: String,
    pub args: Vec<String>,
}

/// Why a `plugin.yaml` cannot be used, in helm's words where helm has them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// The file is not YAML.
    #[error("{0}")]
    Yaml(String),
    /// A field has the wrong shape or value.
    #[error("{0}")]
    Invalid(String),
}

fn invalid(text: impl Into<String>) -> MetadataError {
    MetadataError::Invalid(text.into())
}

/// Reads a `plugin.yaml`: `apiVersion: v1` in Helm 4's form, none in Helm 3's.
pub fn parse(text: &str) -> Result<Metadata, MetadataError> {
    let root = chartkit_yaml::parse_node(text).map_err(|e| MetadataError::Yaml(e.to_string()))?;
    let empty;
    let root = match root.kind {
        NodeKind::Map(_) => &root,
        NodeKind::Null => {
            empty = Node {
                kind: NodeKind::Map(Vec::new()),
                line: 1,
                column: 1,
            };
            &empty
        }
        _ => return Err(invalid("plugin.yaml must be a mapping")),
    };
    match string(root, "apiVersion")?.as_str() {
        "" => legacy(root),
        "v1" => versioned(root),
        other => Err(invalid(format!("invalid plugin apiVersion: \"{other}\""))),
    }
}

/// Helm's plugin names: letters, digits, `_` and `-`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn check_version(version: &str) -> Result<(), MetadataError> {
    if !version.is_empty() && chartkit_version::Version::parse_strict(version).is_err() {
        return Err(invalid(format!(
            "invalid plugin version \"{version}\": must be valid semver"
        )));
    }
    Ok(())
}

fn legacy(root: &Node) -> Result<Metadata, MetadataError> {
    known_fields(
        root,
        &[
            "name",
            "version",
            "usage",
            "description",
            "platformCommand",
            "command",
            "ignoreFlags",
            "platformHooks",
            "hooks",
            "downloaders",
        ],
        false,
    )?;
    let name = string(root, "name")?;
    if !valid_name(&name) {
        return Err(invalid(format!(
            "invalid plugin name \"{name}\": must contain only a-z, A-Z, 0-9, _ and -"
        )));
    }
    let version = string(root, "version")?;
    check_version(&version)?;
    let command = string(root, "command")?;
    let mut platform_command = platform_commands(root.get("platformCommand"))?;
    if !platform_command.is_empty() && !command.is_empty() {
        return Err(invalid("both platformCommand and command are set"));
    }
    if platform_command.is_empty() && !command.is_empty() {
        platform_command.push(PlatformCommand {
            command,
            ..Default::default()
        });
    }
    let mut platform_hooks = hooks(root.get("platformHooks"))?;
    let shell_hooks = string_map(root.get("hooks"), "hooks")?;
    if !platform_hooks.is_empty() && !shell_hooks.is_empty() {
        return Err(invalid("both platformHooks and hooks are set"));
    }
    let expand_hook_args = shell_hooks.is_empty();
    if platform_hooks.is_empty() {
        platform_hooks = shell_hooks
            .into_iter()
            .map(|(event, script)| {
                let command = PlatformCommand {
                    command: "sh".into(),
                    args: vec!["-c".into(), script],
                    ..Default::default()
                };
                (event, vec![command])
            })
            .collect();
    }
    let mut protocols = Vec::new();
    let mut protocol_commands = Vec::new();
    if let Some(list) = root.get("downloaders") {
        for (index, item) in seq(list, "downloaders")?.iter().enumerate() {
            let command = string(item, "command")?;
            let schemes = strings(item.get("protocols"), "protocols")?;
            if command.is_empty() {
                return Err(invalid(format!("downloader {index} has empty command")));
            }
            if schemes.is_empty() {
                return Err(invalid(format!("downloader {index} has no protocols")));
            }
            if let Some(at) = schemes.iter().position(String::is_empty) {
                return Err(invalid(format!(
                    "downloader {index} has empty protocol at index {at}"
                )));
            }
            protocols.extend(schemes.iter().cloned());
            protocol_commands.push((
                schemes,
                vec![PlatformCommand {
                    command,
                    ..Default::default()
                }],
            ));
        }
    }
    let plugin_type = if protocol_commands.is_empty() {
        "cli/v1"
    } else {
        "getter/v1"
    };
    let usage: String = string(root, "usage")?
        .chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if c.is_control() {
                None
            } else {
                Some(c)
            }
        })
        .collect();
    Ok(Metadata {
        api_version: "legacy".into(),
        name,
        plugin_type: plugin_type.into(),
        runtime: "subprocess".into(),
        version,
        source_url: String::new(),
        config: Config {
            usage: String::new(),
            short_help: usage,
            long_help: string(root, "description")?,
            ignore_flags: boolean(root, "ignoreFlags")?,
            protocols,
        },
        runtime_config: RuntimeConfig {
            platform_command,
            platform_hooks,
            protocol_commands,
            expand_hook_args,
        },
    })
}

fn versioned(root: &Node) -> Result<Metadata, MetadataError> {
    known_fields(
        root,
        &[
            "apiVersion",
            "name",
            "type",
            "runtime",
            "version",
            "sourceURL",
            "config",
            "runtimeConfig",
        ],
        true,
    )?;
    let name = string(root, "name")?;
    if !valid_name(&name) {
        return Err(invalid("invalid plugin `name`"));
    }
    let version = string(root, "version")?;
    if version.is_empty() {
        return Err(invalid("plugin `version` is required"));
    }
    if chartkit_version::Version::parse_strict(&version).is_err() {
        return Err(invalid(format!(
            "invalid plugin `version` \"{version}\": must be valid semver"
        )));
    }
    let plugin_type = string(root, "type")?;
    if plugin_type.is_empty() {
        return Err(invalid("`type` missing"));
    }
    let runtime = string(root, "runtime")?;
    if runtime.is_empty() {
        return Err(invalid("`runtime` missing"));
    }
    let config_node = root.get("config");
    let config = match plugin_type.as_str() {
        "cli/v1" => {
            known_fields_opt(
                config_node,
                &["usage", "shortHelp", "longHelp", "ignoreFlags"],
            )?;
            Config {
                usage: opt_string(config_node, "usage")?,
                short_help: opt_string(config_node, "shortHelp")?,
                long_help: opt_string(config_node, "longHelp")?,
                ignore_flags: config_node
                    .map(|c| boolean(c, "ignoreFlags"))
                    .transpose()?
                    .unwrap_or(false),
                protocols: Vec::new(),
            }
        }
        "getter/v1" => {
            known_fields_opt(config_node, &["protocols"])?;
            Config {
                protocols: strings(config_node.and_then(|c| c.get("protocols")), "protocols")?,
                ..Default::default()
            }
        }
        "postrenderer/v1" => {
            known_fields_opt(config_node, &[])?;
            Config::default()
        }
        other => return Err(invalid(format!("unknown plugin type \"{other}\""))),
    };
    let runtime_node = root.get("runtimeConfig");
    let runtime_config = match runtime.as_str() {
        "subprocess" => RuntimeConfig {
            platform_command: platform_commands(
                runtime_node.and_then(|r| r.get("platformCommand")),
            )?,
            platform_hooks: hooks(runtime_node.and_then(|r| r.get("platformHooks")))?,
            protocol_commands: match runtime_node.and_then(|r| r.get("protocolCommands")) {
                None => Vec::new(),
                Some(list) => seq(list, "protocolCommands")?
                    .iter()
                    .map(|item| {
                        Ok((
                            strings(item.get("protocols"), "protocols")?,
                            platform_commands(item.get("platformCommand"))?,
                        ))
                    })
                    .collect::<Result<_, MetadataError>>()?,
            },
            expand_hook_args: true,
        },
        // Accepted so that `plugin list` shows such plugins; running them is refused
        // where it is attempted.
        "extism/v1" => RuntimeConfig::default(),
        other => {
            return Err(invalid(format!(
                "failed to convert MetadataV1 to Metadata: unsupported plugin runtime type: \"{other}\""
            )));
        }
    };
    Ok(Metadata {
        api_version: "v1".into(),
        name,
        plugin_type,
        runtime,
        version,
        source_url: string(root, "sourceURL")?,
        config,
        runtime_config,
    })
}

/// Helm reads the versioned form with go-yaml's `KnownFields`: a field it does not know
/// is an error there, and ignored in the legacy form.
fn known_fields(node: &Node, known: &[&str], strict: bool) -> Result<(), MetadataError> {
    if !strict {
        return Ok(());
    }
    if let NodeKind::Map(pairs) = &node.kind {
        for (key, _) in pairs {
            let name = key.as_map_key().unwrap_or_default();
            if !known.contains(&name.as_str()) {
                return Err(invalid(format!(
                    "line {}: field {name} not found in plugin metadata",
                    key.line
                )));
            }
        }
    }
    Ok(())
}

fn known_fields_opt(node: Option<&Node>, known: &[&str]) -> Result<(), MetadataError> {
    match node {
        Some(node) => known_fields(node, known, true),
        None => Ok(()),
    }
}

fn string(node: &Node, key: &str) -> Result<String, MetadataError> {
    match node.get(key) {
        None => Ok(String::new()),
        Some(value) => value
            .to_go_string()
            .ok_or_else(|| invalid(format!("line {}: `{key}` must be a string", value.line))),
    }
}

fn opt_string(node: Option<&Node>, key: &str) -> Result<String, MetadataError> {
    node.map(|n| string(n, key))
        .transpose()
        .map(Option::unwrap_or_default)
}

fn boolean(node: &Node, key: &str) -> Result<bool, MetadataError> {
    match node.get(key).map(|v| &v.kind) {
        None | Some(NodeKind::Null) => Ok(false),
        Some(NodeKind::Bool(b)) => Ok(*b),
        Some(_) => Err(invalid(format!("`{key}` must be true or false"))),
    }
}

fn seq<'a>(node: &'a Node, key: &str) -> Result<&'a [Node], MetadataError> {
    match &node.kind {
        NodeKind::Seq(items) => Ok(items),
        NodeKind::Null => Ok(&[]),
        _ => Err(invalid(format!(
            "line {}: `{key}` must be a list",
            node.line
        ))),
    }
}

fn strings(node: Option<&Node>, key: &str) -> Result<Vec<String>, MetadataError> {
    let Some(node) = node else {
        return Ok(Vec::new());
    };
    seq(node, key)?
        .iter()
        .map(|item| {
            item.to_go_string().ok_or_else(|| {
                invalid(format!(
                    "line {}: `{key}` must be a list of strings",
                    item.line
                ))
            })
        })
        .collect()
}

fn string_map(node: Option<&Node>, key: &str) -> Result<Vec<(String, String)>, MetadataError> {
    let Some(node) = node else {
        return Ok(Vec::new());
    };
    match &node.kind {
        NodeKind::Null => Ok(Vec::new()),
        NodeKind::Map(pairs) => pairs
            .iter()
            .map(|(k, v)| {
                Ok((
                    k.as_map_key().unwrap_or_default(),
                    v.to_go_string().ok_or_else(|| {
                        invalid(format!("line {}: `{key}` values must be strings", v.line))
                    })?,
                ))
            })
            .collect(),
        _ => Err(invalid(format!(
            "line {}: `{key}` must be a mapping",
            node.line
        ))),
    }
}

fn platform_commands(node: Option<&Node>) -> Result<Vec<PlatformCommand>, MetadataError> {
    let Some(node) = node else {
        return Ok(Vec::new());
    };
    seq(node, "platformCommand")?
        .iter()
        .map(|item| {
            Ok(PlatformCommand {
                os: string(item, "os")?,
                arch: string(item, "arch")?,
                command: string(item, "command")?,
                args: strings(item.get("args"), "args")?,
            })
        })
        .collect()
}

fn hooks(node: Option<&Node>) -> Result<Vec<(String, Vec<PlatformCommand>)>, MetadataError> {
    let Some(node) = node else {
        return Ok(Vec::new());
    };
    match &node.kind {
        NodeKind::Null => Ok(Vec::new()),
        NodeKind::Map(pairs) => pairs
            .iter()
            .map(|(k, v)| {
                Ok((
                    k.as_map_key().unwrap_or_default(),
                    platform_commands(Some(v))?,
                ))
            })
            .collect(),
        _ => Err(invalid(format!(
            "line {}: `platformHooks` must be a mapping",
            node.line
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_form_is_a_cli_plugin_run_as_a_subprocess() {
        let m = parse(
            "name: hello\nversion: 0.1.0\nusage: say\thello\ndescription: long\ncommand: $HELM_PLUGIN_DIR/hello.sh\nhooks:\n  install: echo hi\n",
        )
        .unwrap();
        assert_eq!(m.api_version, "legacy");
        assert_eq!(m.plugin_type, "cli/v1");
        assert_eq!(m.config.short_help, "say hello");
        assert_eq!(
            m.runtime_config.platform_command[0].command,
            "$HELM_PLUGIN_DIR/hello.sh"
        );
        assert_eq!(
            m.runtime_config.platform_hooks[0].1[0].args,
            ["-c", "echo hi"]
        );
        assert!(!m.runtime_config.expand_hook_args);
    }

    #[test]
    fn legacy_downloaders_make_a_getter() {
        let m = parse(
            "name: g\nversion: 1.0.0\ndownloaders:\n- command: bin/get\n  protocols: [s3, gs]\n",
        )
        .unwrap();
        assert_eq!(m.plugin_type, "getter/v1");
        assert_eq!(m.config.protocols, ["s3", "gs"]);
    }

    #[test]
    fn versioned_form_is_read_strictly() {
        let ok = "apiVersion: v1\nname: pr\ntype: postrenderer/v1\nruntime: subprocess\nversion: 1.2.3\nconfig: {}\nruntimeConfig:\n  platformCommand:\n  - command: ./x\n";
        assert_eq!(parse(ok).unwrap().plugin_type, "postrenderer/v1");
        let unknown = format!("{ok}extra: 1\n");
        assert!(
            parse(&unknown)
                .unwrap_err()
                .to_string()
                .contains("field extra not found")
        );
        let no_version = ok.replace("version: 1.2.3\n", "");
        assert_eq!(
            parse(&no_version).unwrap_err().to_string(),
            "plugin `version` is required"
        );
        assert!(parse(&ok.replace("postrenderer/v1", "weird/v9")).is_err());
    }

    #[test]
    fn bad_names_and_versions_are_refused() {
        assert!(parse("name: a/b\n").is_err());
        assert!(parse("name: ok\nversion: one\n").is_err());
        assert!(parse("apiVersion: v2\nname: x\n").is_err());
    }
}
