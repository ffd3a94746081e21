//! Plugins installed from a git repository, as helm's VCS installer installs them: the
//! repository cloned (or fetched again) into `plugins/KEY` of Helm's cache, the `--version`
//! checked out (a tag, branch or commit by name, else the newest tag a version range
//! allows), then the whole working tree, `.git` included, copied to the plugin directory
//! named after the source's last path part. `git` runs as a subprocess, as helm runs it,
//! so the user's git configuration, credentials and SSH keys apply.
//!
//! Like helm, git is given no timeout: a clone over a slow link may take as long as it
//! takes, and git's own `http.lowSpeedLimit`/`http.lowSpeedTime` settings bound a stalled
//! transfer. Ctrl-C reaches git too (it is in the terminal's process group) and the
//! staged copy is removed, so an interrupted install leaves no plugin behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use chartkit_version::{Version, VersionRange};

use crate::{Plugin, PluginError, check_installable, event, load_dir, run_hook};

/// helm's cache key of a source: scheme, user, host and path with `/` and `:` as `-`
/// (an scp-like `user@host:path` read as `ssh://user@host/path`).
pub fn cache_key(source: &str) -> String {
    let (scheme, user, host, path) = split_source(source);
    let mut key = String::new();
    if !scheme.is_empty() {
        key.push_str(scheme);
        key.push('-');
    }
    if !user.is_empty() {
        key.push_str(user);
        key.push('-');
    }
    key.push_str(host);
    key.push_str(&path.replace('/', "-"));
    key.replace(':', "-")
}

/// Scheme, user, host and path of a git source, as Go's `url.Parse` splits the forms
/// git takes (`scheme://[user@]host/path`, `user@host:path`, a plain path).
fn split_source(source: &str) -> (&str, &str, &str, String) {
    if let Some((scheme, rest)) = source.split_once("://") {
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], rest[at..].to_owned()),
            None => (rest, String::new()),
        };
        let (user, host) = match authority.rsplit_once('@') {
            Some((userinfo, host)) => (userinfo.split(':').next().unwrap_or(""), host),
            None => ("", authority),
        };
        return (scheme, user, host, path);
    }
    if let Some((user, rest)) = source.split_once('@')
        && let Some((host, path)) = rest.split_once(':')
        && !user.is_empty()
        && user.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return ("ssh", user, host, format!("/{path}"));
    }
    ("", "", "", source.to_owned())
}

/// Whether `source` names a repository elsewhere (`scheme://…` or scp-like
/// `user@host:path`), rather than a local path that does not exist.
pub fn looks_remote(source: &str) -> bool {
    !split_source(source).0.is_empty()
}

/// The directory a source installs into: its last path part, as helm's `filepath.Base`.
pub fn plugin_dir_name(source: &str) -> String {
    let trimmed = source.trim_end_matches('/');
    let base = trimmed.rsplit('/').next().unwrap_or(trimmed);
    if base.is_empty() {
        "/".to_owned()
    } else {
        base.to_owned()
    }
}

/// Runs git in `dir` (or anywhere), its output collected; a failure names the command
/// and what git said.
fn git(dir: Option<&Path>, args: &[&str]) -> Result<String, PluginError> {
    let mut command = Command::new("git");
    command.args(args);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    // Never a prompt that nobody sees: a repository needing credentials fails instead.
    command.env("GIT_TERMINAL_PROMPT", "0");
    let shown = format!("git {}", args.join(" "));
    let output = command.output().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            PluginError::Source(format!(
                "installing a plugin from a VCS repository needs `git` on PATH, and it was not found ({shown})"
            ))
        } else {
            PluginError::Source(format!("cannot run `{shown}`: {source}"))
        }
    })?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        return Err(PluginError::Source(format!("`{shown}` failed: {said}")));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Brings the clone of `source` in `cache` up to date: cloned when missing, else its tags
/// and branches fetched again (and a branch pulled), as Masterminds/vcs does for helm.
fn sync(source: &str, cache: &Path) -> Result<(), PluginError> {
    if !cache.exists() {
        if let Some(parent) = cache.parent() {
            std::fs::create_dir_all(parent).map_err(|e| PluginError::Io {
                action: "cannot create",
                path: parent.to_owned(),
                source: e,
            })?;
        }
        let target = cache.to_string_lossy();
        return git(None, &["clone", "--recursive", source, &target]).map(drop);
    }
    git(Some(cache), &["fetch", "--tags", "origin"])?;
    // A detached checkout (a tag) has nothing to pull.
    if git(Some(cache), &["symbolic-ref", "-q", "HEAD"]).is_ok() {
        git(Some(cache), &["pull"])?;
    }
    Ok(())
}

/// What `--version` names: itself when git knows it as a reference, else the newest
/// tag that is a version within it as a range.
fn solve_version(source: &str, cache: &Path, version: &str) -> Result<String, PluginError> {
    let is_reference = git(Some(cache), &["rev-parse", "--verify", "--quiet", version]).is_ok()
        || git(Some(cache), &["show-ref", version]).is_ok();
    if is_reference {
        return Ok(version.to_owned());
    }
    let range = VersionRange::parse(version).map_err(|e| {
        PluginError::Source(format!(
            "`--version {version}` is neither a tag, branch or commit of `{source}` nor a version range: {e}"
        ))
    })?;
    let tags = git(Some(cache), &["tag", "--list"])?;
    let mut versions: Vec<Version> = tags
        .lines()
        .filter_map(|tag| Version::parse(tag.trim()).ok())
        .collect();
    versions.sort();
    versions
        .iter()
        .rev()
        .find(|v| range.matches(v))
        .map(|v| v.original().to_owned())
        .ok_or_else(|| {
            PluginError::Source(format!(
                "requested version \"{version}\" does not exist for plugin \"{source}\""
            ))
        })
}

/// Installs the plugin in the git repository `source` at `version` (the default branch
/// when empty) into `plugins_dir`, its clone kept in `cache_dir` (Helm's
/// `CACHE/plugins`), then runs its install hook. The copy is staged beside the plugins
/// and moved into place whole; a failing hook takes it out again.
pub fn install_vcs(
    source: &str,
    version: &str,
    cache_dir: &Path,
    plugins_dir: &Path,
    reserved: &[&str],
    env: &BTreeMap<String, String>,
) -> Result<Plugin, PluginError> {
    let target = plugins_dir.join(plugin_dir_name(source));
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(PluginError::AlreadyExists { path: target });
    }
    let cache = cache_dir.join(cache_key(source));
    sync(source, &cache)?;
    if !version.is_empty() {
        let reference = solve_version(source, &cache, version)?;
        git(Some(&cache), &["checkout", "--quiet", &reference])?;
        git(
            Some(&cache),
            &["submodule", "update", "--init", "--recursive"],
        )?;
    }
    if !cache.join(crate::PLUGIN_FILE).is_file() {
        return Err(PluginError::Source(format!(
            "plugin metadata (plugin.yaml) missing in `{source}`{}",
            if version.is_empty() {
                String::new()
            } else {
                format!(" at `{version}`")
            }
        )));
    }
    check_installable(&load_dir(&cache)?, plugins_dir, reserved)?;
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
    let staged = staging.path().join("plugin");
    copy_dir(&cache, &staged)?;
    std::fs::rename(&staged, &target).map_err(io("cannot move the plugin to", &target))?;
    let installed = Plugin {
        dir: target.clone(),
        metadata: load_dir(&target)?.metadata,
    };
    if let Err(error) = run_hook(&installed, event::INSTALL, env) {
        let _ = std::fs::remove_dir_all(&target);
        return Err(error);
    }
    Ok(installed)
}

/// Whether `dir` is a plugin helm installed from a VCS repository (a git work tree).
pub fn is_vcs_install(dir: &Path) -> bool {
    dir.join(".git").exists()
}

/// `plugin update` of a VCS install, as helm does it: refused when its files were
/// changed, else fetched and pulled in place.
pub fn update_vcs(dir: &Path) -> Result<(), PluginError> {
    let status = git(Some(dir), &["status", "--porcelain"])?;
    if !status.trim().is_empty() {
        return Err(PluginError::Source(format!(
            "plugin repo was modified: `{}` has local changes",
            dir.display()
        )));
    }
    git(Some(dir), &["fetch", "--tags", "origin"])?;
    if git(Some(dir), &["symbolic-ref", "-q", "HEAD"]).is_ok() {
        git(Some(dir), &["pull"])?;
    }
    Ok(())
}

/// Copies a directory tree; symbolic links are copied as links, as helm's `CopyDir`.
fn copy_dir(from: &Path, to: &Path) -> Result<(), PluginError> {
    let io = |action: &'static str, path: PathBuf| {
        move |source| PluginError::Io {
            action,
            path,
            source,
        }
    };
    std::fs::create_dir_all(to).map_err(io("cannot create", to.to_owned()))?;
    for entry in std::fs::read_dir(from).map_err(io("cannot read", from.to_owned()))? {
        let entry = entry.map_err(io("cannot read", from.to_owned()))?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(io("cannot read", source.clone()))?;
        if kind.is_dir() {
            copy_dir(&source, &target)?;
        } else if kind.is_symlink() {
            let link = std::fs::read_link(&source).map_err(io("cannot read", source.clone()))?;
            #[cfg(unix)]
            std::os::unix::fs::symlink(&link, &target).map_err(io("cannot link", target))?;
            #[cfg(not(unix))]
            std::fs::copy(&source, &target).map_err(io("cannot copy", target))?;
        } else {
            std::fs::copy(&source, &target).map_err(io("cannot copy", target))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_keys_are_helms() {
        assert_eq!(
            cache_key("https://github.com/user/helm-plugin"),
            "https-github.com-user-helm-plugin"
        );
        assert_eq!(
            cache_key("git@github.com:user/repo"),
            "ssh-git-github.com-user-repo"
        );
        assert_eq!(cache_key("file:///tmp/src/p.git"), "file--tmp-src-p.git");
        assert_eq!(
            cache_key("http://127.0.0.1:8080/a"),
            "http-127.0.0.1-8080-a"
        );
    }

    #[test]
    fn directory_names_are_the_last_path_part() {
        assert_eq!(plugin_dir_name("https://github.com/u/helm-git"), "helm-git");
        assert_eq!(plugin_dir_name("file:///tmp/x/p.git/"), "p.git");
        assert_eq!(plugin_dir_name("git@host:user/repo"), "repo");
        assert_eq!(plugin_dir_name("git@host:repo"), "git@host:repo");
    }
}
