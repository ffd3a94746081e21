//! Plugin tarballs (`NAME-VERSION.tgz` holding `NAME/plugin.yaml` and the plugin's
//! files): read with every entry checked before anything is written, unpacked into a
//! staging directory beside the plugins and moved into place whole.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::{Plugin, PluginError, check_installable, event, load_dir, run_hook};

/// The plugin's directory name for a tarball, as helm derives it: the file name without
/// `.tgz`/`.tar.gz` and without a `-VERSION` suffix.
pub fn plugin_dir_name(archive_name: &str) -> String {
    let stem = archive_name
        .strip_suffix(".tar.gz")
        .or_else(|| archive_name.strip_suffix(".tgz"))
        .unwrap_or(archive_name);
    // helm's `(.*)-[0-9]+\..*`: the last `-` followed by digits and a dot.
    let bytes = stem.as_bytes();
    for (at, _) in stem
        .match_indices('-')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        let rest = &bytes[at + 1..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && rest.get(digits) == Some(&b'.') {
            return stem[..at].to_owned();
        }
    }
    stem.to_owned()
}

/// One checked entry of a tarball.
struct Entry {
    path: PathBuf,
    data: Option<Vec<u8>>,
    mode: u32,
}

fn refuse(archive: &str, entry: &str, why: &str) -> PluginError {
    PluginError::Source(format!(
        "plugin archive `{archive}`: entry `{entry}` {why}, so nothing was installed"
    ))
}

/// Reads every entry, refusing paths that leave the archive (`..`, absolute, `:`) and
/// anything but files and directories.
fn read_entries(bytes: &[u8], archive: &str) -> Result<Vec<Entry>, PluginError> {
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut tar = tar::Archive::new(gz);
    let mut entries = Vec::new();
    let bad = |e: std::io::Error| {
        PluginError::Source(format!("plugin archive `{archive}` cannot be read: {e}"))
    };
    for entry in tar.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).replace('\\', "/");
        let kind = entry.header().entry_type();
        if kind.is_pax_global_extensions() || kind.is_pax_local_extensions() {
            continue;
        }
        if name.contains(':') {
            return Err(refuse(archive, &name, "contains ':'"));
        }
        if name.split('/').any(|part| part == "..") {
            return Err(refuse(archive, &name, "contains '..'"));
        }
        if name.starts_with('/') {
            return Err(refuse(archive, &name, "is an absolute path"));
        }
        let path: PathBuf = Path::new(&name)
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect();
        let mode = entry.header().mode().unwrap_or(0o644);
        if kind.is_dir() {
            entries.push(Entry {
                path,
                data: None,
                mode,
            });
        } else if kind.is_file() {
            let mut data = Vec::new();
            entry.read_to_end(&mut data).map_err(bad)?;
            entries.push(Entry {
                path,
                data: Some(data),
                mode,
            });
        } else {
            return Err(refuse(
                archive,
                &name,
                "is neither a file nor a directory (links are refused)",
            ));
        }
    }
    Ok(entries)
}

/// The metadata of the first `plugin.yaml` in a tarball (what helm reads for its name
/// and version before unpacking).
pub fn archive_metadata(bytes: &[u8], archive: &str) -> Result<crate::Metadata, PluginError> {
    let entries = read_entries(bytes, archive)?;
    let entry = entries
        .iter()
        .find(|e| e.data.is_some() && e.path.file_name().is_some_and(|n| n == crate::PLUGIN_FILE))
        .ok_or_else(|| {
            PluginError::Source(format!("plugin.yaml not found in tarball `{archive}`"))
        })?;
    let text = String::from_utf8_lossy(entry.data.as_deref().unwrap_or_default()).into_owned();
    crate::metadata::parse(&text).map_err(|source| PluginError::Metadata {
        dir: PathBuf::from(archive),
        source,
    })
}

/// Installs a plugin tarball as helm does: unpacked into `plugins_dir/NAME` (NAME from
/// the archive's file name), the tarball kept as `NAME-VERSION.tgz` with its `.prov`,
/// then the install hook. Every entry is checked and the plugin loaded before it is moved
/// into place; a failing hook takes it out again.
pub fn install_archive(
    bytes: &[u8],
    archive_name: &str,
    prov: Option<&[u8]>,
    plugins_dir: &Path,
    reserved: &[&str],
    env: &BTreeMap<String, String>,
) -> Result<Plugin, PluginError> {
    let name = plugin_dir_name(archive_name);
    install_archive_as(bytes, archive_name, &name, prov, plugins_dir, reserved, env)
}

/// [`install_archive`] into `plugins_dir/name`, the name chosen by the caller (helm names
/// a plugin from a registry after the reference's repository, not the tarball). The
/// plugin's files are those under `name/` in the tarball, else at its top, else under
/// the first directory holding a `plugin.yaml`, the places helm looks.
pub fn install_archive_as(
    bytes: &[u8],
    archive_name: &str,
    name: &str,
    prov: Option<&[u8]>,
    plugins_dir: &Path,
    reserved: &[&str],
    env: &BTreeMap<String, String>,
) -> Result<Plugin, PluginError> {
    let entries = read_entries(bytes, archive_name)?;
    let metadata = archive_metadata(bytes, archive_name)?;
    let target = plugins_dir.join(name);
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(PluginError::AlreadyExists { path: target });
    }
    let io = |action: &'static str, path: &Path| {
        let path = path.to_owned();
        move |source| PluginError::Io {
            action,
            path,
            source,
        }
    };
    std::fs::create_dir_all(plugins_dir)
        .map_err(io("cannot create the plugin directory", plugins_dir))?;
    let staging = tempfile::Builder::new()
        .prefix(".chartkit-plugin-")
        .tempdir_in(plugins_dir)
        .map_err(io("cannot create a staging directory in", plugins_dir))?;
    let root = staging.path().join("unpacked");
    for entry in &entries {
        let path = root.join(&entry.path);
        match &entry.data {
            None => std::fs::create_dir_all(&path).map_err(io("cannot create", &path))?,
            Some(data) => {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(io("cannot create", parent))?;
                }
                std::fs::write(&path, data).map_err(io("cannot write", &path))?;
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt as _;
                    std::fs::set_permissions(
                        &path,
                        std::fs::Permissions::from_mode(entry.mode & 0o777),
                    )
                    .map_err(io("cannot set the mode of", &path))?;
                }
            }
        }
    }
    let Some(unpacked) = plugin_root(&root, name) else {
        return Err(PluginError::Source(format!(
            "plugin.yaml not found in the directory `{name}/` of `{archive_name}`, nor at its top or in another directory"
        )));
    };
    let staged = load_dir(&unpacked)?;
    check_installable(&staged, plugins_dir, reserved)?;
    std::fs::rename(&unpacked, &target).map_err(io("cannot move the plugin to", &target))?;
    let kept = plugins_dir.join(format!("{}-{}.tgz", metadata.name, metadata.version));
    let keep = || -> Result<(), PluginError> {
        chartkit_durable::write(&kept, bytes).map_err(|e| PluginError::Source(e.to_string()))?;
        if let Some(prov) = prov {
            let path = PathBuf::from(format!("{}.prov", kept.display()));
            chartkit_durable::write(&path, prov).map_err(|e| PluginError::Source(e.to_string()))?;
        }
        Ok(())
    };
    let installed = Plugin {
        dir: target.clone(),
        metadata: staged.metadata,
    };
    let result = keep().and_then(|()| run_hook(&installed, event::INSTALL, env));
    if let Err(error) = result {
        let _ = std::fs::remove_dir_all(&target);
        let _ = std::fs::remove_file(&kept);
        let _ = std::fs::remove_file(format!("{}.prov", kept.display()));
        return Err(error);
    }
    Ok(installed)
}

/// Where the plugin is in an unpacked tarball: `name/`, the top, or the first directory
/// (in name order) with a `plugin.yaml`.
fn plugin_root(root: &Path, name: &str) -> Option<PathBuf> {
    let is_plugin = |dir: &Path| dir.join(crate::PLUGIN_FILE).is_file();
    let named = root.join(name);
    if is_plugin(&named) {
        return Some(named);
    }
    if is_plugin(root) {
        return Some(root.to_owned());
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter().find(|d| is_plugin(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tarball(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o755);
            header.set_entry_type(tar::EntryType::Regular);
            // Written raw, so that names the tar crate would refuse can be tested.
            header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            header.set_cksum();
            builder.append(&header, *data).unwrap();
        }
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, &tar).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn directory_names_drop_the_version_as_helm_does() {
        assert_eq!(plugin_dir_name("diff-3.9.1.tgz"), "diff");
        assert_eq!(plugin_dir_name("my-plugin-1.0.0.tar.gz"), "my-plugin");
        assert_eq!(plugin_dir_name("plain.tgz"), "plain");
        assert_eq!(plugin_dir_name("helm-s3-v1.tgz"), "helm-s3-v1");
    }

    #[test]
    fn installs_whole_or_not_at_all() {
        let tmp = tempfile::tempdir().unwrap();
        let plugins = tmp.path().join("plugins");
        let good = tarball(&[
            (
                "greet/plugin.yaml",
                b"name: greet\nversion: 1.0.0\ncommand: echo\n",
            ),
            ("greet/bin/run.sh", b"#!/bin/sh\n"),
        ]);
        let plugin = install_archive(
            &good,
            "greet-1.0.0.tgz",
            None,
            &plugins,
            &[],
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(plugin.metadata.name, "greet");
        assert!(plugins.join("greet/bin/run.sh").is_file());
        assert!(plugins.join("greet-1.0.0.tgz").is_file());

        let evil = tarball(&[
            ("evil/plugin.yaml", b"name: evil\ncommand: echo\n"),
            ("evil/../../escaped", b"x"),
        ]);
        let error =
            install_archive(&evil, "evil.tgz", None, &plugins, &[], &BTreeMap::new()).unwrap_err();
        assert!(error.to_string().contains("contains '..'"), "{error}");
        assert!(!plugins.join("evil").exists());
        assert!(!tmp.path().join("escaped").exists());
        let names: Vec<_> = std::fs::read_dir(&plugins)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "only greet and its tarball: {names:?}");
    }
}
