//! `getter/v1` plugins: a URL of a scheme the plugin serves fetched by running it as
//! helm 4's subprocess runtime does. The program is the protocol command's, taken
//! relative to the plugin's directory (helm joins the two, even when the command is
//! absolute); its arguments are the command's own, unexpanded, then the certificate,
//! key and CA files and the URL; its standard output is the body. Its standard error
//! goes to the terminal as in helm, and the end of it is kept for the error when it
//! fails.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;

use crate::{Plugin, PluginError, plugin_env, prepare};

/// The type of plugin that serves URL schemes.
pub const GETTER_TYPE: &str = "getter/v1";

/// How much of a failing getter's standard error is kept for its error message.
const STDERR_KEPT: usize = 2048;

/// What a getter is asked for: the URL and helm's getter options that reach a
/// subprocess plugin (as arguments or as `HELM_PLUGIN_*` variables).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct GetRequest {
    pub url: String,
    pub cert_file: String,
    pub key_file: String,
    pub ca_file: String,
    pub username: String,
    pub password: String,
    pub pass_credentials_all: bool,
}

/// A URL's scheme as Go's `url.Parse` reads it (lower-cased), if it has one.
pub fn scheme_of(url: &str) -> Option<String> {
    let (scheme, _) = url.split_once(':')?;
    let mut bytes = scheme.bytes();
    let first = bytes.next()?;
    let valid = first.is_ascii_alphabetic()
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    valid.then(|| scheme.to_ascii_lowercase())
}

/// Whether `plugin` is a getter serving `scheme`.
pub fn serves(plugin: &Plugin, scheme: &str) -> bool {
    plugin.metadata.plugin_type == GETTER_TYPE
        && plugin.metadata.config.protocols.iter().any(|p| p == scheme)
}

/// Fetches `request.url` with the getter `plugin`: the process's environment, then
/// helm's settings `settings`, then the plugin's name and directory and the request's
/// credentials, as helm gives them. The body is what the plugin wrote.
pub fn get(
    plugin: &Plugin,
    request: &GetRequest,
    settings: &BTreeMap<String, String>,
) -> Result<Vec<u8>, PluginError> {
    let name = &plugin.metadata.name;
    let scheme = scheme_of(&request.url).unwrap_or_default();
    let commands = plugin
        .metadata
        .runtime_config
        .protocol_commands
        .iter()
        .find(|(schemes, _)| schemes.contains(&scheme))
        .map(|(_, commands)| commands)
        .ok_or_else(|| PluginError::NoDownloader {
            name: name.clone(),
            scheme: scheme.clone(),
        })?;
    let mut env = plugin_env(plugin, settings);
    env.insert("HELM_PLUGIN_USERNAME".into(), request.username.clone());
    env.insert("HELM_PLUGIN_PASSWORD".into(), request.password.clone());
    env.insert(
        "HELM_PLUGIN_PASS_CREDENTIALS_ALL".into(),
        request.pass_credentials_all.to_string(),
    );
    let (program, mut args) = prepare(plugin, commands, false, &[], &env)?;
    args.extend([
        request.cert_file.clone(),
        request.key_file.clone(),
        request.ca_file.clone(),
        request.url.clone(),
    ]);
    let program = go_join(&plugin.dir, &program);
    let program_text = program.display().to_string();
    let spawn_error = |source| PluginError::GetterSpawn {
        name: name.clone(),
        url: request.url.clone(),
        program: program_text.clone(),
        source,
    };
    let mut child = crate::command(&program_text, &args, &env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let (body, stderr_tail) = std::thread::scope(|scope| {
        // Passed on to the terminal as it comes, as helm does, with the end kept.
        let tail = scope.spawn(move || {
            let mut kept: Vec<u8> = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let _ = std::io::Write::write_all(&mut std::io::stderr(), &buf[..n]);
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > STDERR_KEPT {
                    kept.drain(..kept.len() - STDERR_KEPT);
                }
            }
            kept
        });
        let mut body = Vec::new();
        let read = stdout.read_to_end(&mut body);
        (read.map(|_| body), tail.join().unwrap_or_default())
    });
    let status = child.wait().map_err(spawn_error)?;
    let body = body.map_err(spawn_error)?;
    if !status.success() {
        let stderr = String::from_utf8_lossy(&stderr_tail);
        return Err(PluginError::GetterFailed {
            name: name.clone(),
            url: request.url.clone(),
            code: status.code(),
            stderr: stderr.trim().lines().last().unwrap_or_default().to_owned(),
        });
    }
    Ok(body)
}

/// Go's `filepath.Join(dir, command)`: the two joined by a separator and cleaned, so an
/// absolute command is still inside `dir`, as helm runs it.
fn go_join(dir: &Path, program: &str) -> PathBuf {
    let joined = format!("{}/{program}", dir.display());
    let mut out = PathBuf::new();
    for component in Path::new(&joined).components() {
        match component {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn getter(dir: &Path, script: &str) -> Plugin {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            dir.join(crate::PLUGIN_FILE),
            "name: g\nversion: 0.1.0\ndownloaders:\n- command: bin/get.sh --fixed\n  protocols: [gx, gy]\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        let path = dir.join("bin/get.sh");
        std::fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        crate::load_dir(dir).unwrap()
    }

    #[test]
    fn runs_the_command_from_the_plugin_dir_with_helms_arguments_and_env() {
        let tmp = tempfile::tempdir().unwrap();
        let plugin = getter(
            &tmp.path().join("g"),
            "#!/bin/sh\nprintf '%s|' \"$@\"; printf '%s|%s|%s|%s' \"$HELM_PLUGIN_NAME\" \"$HELM_PLUGIN_USERNAME\" \"$HELM_PLUGIN_PASS_CREDENTIALS_ALL\" \"$SETTING\"\n",
        );
        assert!(serves(&plugin, "gy"));
        assert!(!serves(&plugin, "https"));
        let request = GetRequest {
            url: "GX://host/index.yaml".into(),
            ca_file: "/ca.pem".into(),
            username: "me".into(),
            ..Default::default()
        };
        let settings = BTreeMap::from([("SETTING".to_string(), "s".to_string())]);
        let body = get(&plugin, &request, &settings).unwrap();
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "--fixed|||/ca.pem|GX://host/index.yaml|g|me|false|s"
        );
    }

    #[test]
    fn a_failure_names_the_plugin_the_url_and_what_it_said() {
        let tmp = tempfile::tempdir().unwrap();
        let plugin = getter(
            &tmp.path().join("g"),
            "#!/bin/sh\necho partial\necho 'repository not found' >&2\nexit 4\n",
        );
        let request = GetRequest {
            url: "gx://h/c-1.0.0.tgz".into(),
            ..Default::default()
        };
        let error = get(&plugin, &request, &BTreeMap::new()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "plugin \"g\" failed to fetch gx://h/c-1.0.0.tgz: it exited with status 4: repository not found"
        );
        let request = GetRequest {
            url: "other://h/x".into(),
            ..Default::default()
        };
        assert!(matches!(
            get(&plugin, &request, &BTreeMap::new()).unwrap_err(),
            PluginError::NoDownloader { .. }
        ));
    }

    #[test]
    fn a_missing_program_is_named_where_helm_looks_for_it() {
        let tmp = tempfile::tempdir().unwrap();
        let plugin = getter(&tmp.path().join("g"), "");
        std::fs::remove_file(tmp.path().join("g/bin/get.sh")).unwrap();
        let request = GetRequest {
            url: "gx://h/index.yaml".into(),
            ..Default::default()
        };
        let error = get(&plugin, &request, &BTreeMap::new()).unwrap_err();
        let expected = tmp.path().join("g/bin/get.sh").display().to_string();
        assert!(error.to_string().contains(&expected), "{error}");
        assert!(error.to_string().contains("plugin \"g\""), "{error}");
    }

    #[test]
    fn joins_as_go_does() {
        assert_eq!(
            go_join(Path::new("/p/g"), "/abs/x"),
            Path::new("/p/g/abs/x")
        );
        assert_eq!(go_join(Path::new("/p/g"), "./a/../b"), Path::new("/p/g/b"));
        assert_eq!(scheme_of("Git+File:///x").as_deref(), Some("git+file"));
        assert_eq!(scheme_of("/no/scheme"), None);
    }
}
