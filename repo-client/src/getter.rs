//! URL schemes served by `getter/v1` plugins (helm-git's `git+https://`, helm-s3's
//! `s3://`...): the plugins found in Helm's plugin directories, with the settings helm
//! hands them, kept by the network ([`crate::Network`]) so that every fetch of such a
//! URL (an index, a package, a `.prov`) runs the plugin as helm does. The scheme is
//! resolved here and nowhere else; http, https, portforward and oci are chartkit's own
//! and come first, as helm's built-in getters come before its plugins.

use std::collections::BTreeMap;

use chartkit_plugin::Plugin;
use chartkit_plugin::getter::{GETTER_TYPE, GetRequest};

use crate::error::{ClientError, Result};
use crate::settings::RepoEntry;

/// Schemes chartkit reads without a plugin.
const BUILT_IN_SCHEMES: [&str; 4] = ["http", "https", "portforward", "oci"];

/// The getter plugins, and helm's settings (`HELM_*`) they run with.
#[derive(Debug, Clone, Default)]
pub struct Getters {
    plugins: Vec<Plugin>,
    settings: BTreeMap<String, String>,
}

impl Getters {
    /// The getters among `plugins` (in helm's order: the first serving a scheme wins),
    /// to be run with helm's `settings`.
    pub fn new(plugins: Vec<Plugin>, settings: BTreeMap<String, String>) -> Getters {
        let plugins = plugins
            .into_iter()
            .filter(|p| p.metadata.plugin_type == GETTER_TYPE)
            .collect();
        Getters { plugins, settings }
    }

    /// The plugin serving `url`'s scheme, unless the scheme is a built-in one.
    pub fn serving(&self, url: &str) -> Option<&Plugin> {
        let scheme = chartkit_plugin::getter::scheme_of(url)?;
        if BUILT_IN_SCHEMES.contains(&scheme.as_str()) {
            return None;
        }
        self.plugins
            .iter()
            .find(|p| chartkit_plugin::getter::serves(p, &scheme))
    }

    /// Fetches `url` with `plugin`, passing `repo`'s TLS files, and its credentials
    /// when `credentials`, as helm's getter options carry them.
    pub(crate) fn get(
        &self,
        plugin: &Plugin,
        url: &str,
        repo: &RepoEntry,
        credentials: bool,
    ) -> Result<Vec<u8>> {
        let (username, password) = match credentials {
            true => (repo.username.clone(), repo.password.clone()),
            false => Default::default(),
        };
        let request = GetRequest {
            url: url.to_owned(),
            cert_file: repo.cert_file.clone(),
            key_file: repo.key_file.clone(),
            ca_file: repo.ca_file.clone(),
            username,
            password,
            pass_credentials_all: repo.pass_credentials_all,
        };
        chartkit_plugin::getter::get(plugin, &request, &self.settings)
            .map_err(|source| ClientError::Getter(Box::new(source)))
    }
}

/// Whether chartkit reads `url` itself (or it has no scheme at all).
pub(crate) fn is_built_in(url: &str) -> bool {
    chartkit_plugin::getter::scheme_of(url)
        .is_none_or(|scheme| BUILT_IN_SCHEMES.contains(&scheme.as_str()))
}

/// `url`'s scheme, for the errors that name it.
pub(crate) fn scheme(url: &str) -> String {
    chartkit_plugin::getter::scheme_of(url).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin(name: &str, yaml: &str) -> Plugin {
        Plugin {
            dir: std::path::PathBuf::from("/plugins").join(name),
            metadata: chartkit_plugin::metadata::parse(yaml).unwrap(),
        }
    }

    #[test]
    fn the_first_getter_serving_a_scheme_wins_and_built_ins_stay_built_in() {
        let getters = Getters::new(
            vec![
                plugin("cli", "name: cli\ncommand: echo\n"),
                plugin(
                    "one",
                    "name: one\ndownloaders:\n- command: a\n  protocols: [s3, https]\n",
                ),
                plugin(
                    "two",
                    "name: two\ndownloaders:\n- command: b\n  protocols: [s3, gs]\n",
                ),
            ],
            BTreeMap::new(),
        );
        let name = |url| getters.serving(url).map(|p| p.metadata.name.as_str());
        assert_eq!(name("S3://bucket/charts/index.yaml"), Some("one"));
        assert_eq!(name("gs://bucket/index.yaml"), Some("two"));
        assert_eq!(name("https://charts.example/index.yaml"), None);
        assert_eq!(name("ftp://h/index.yaml"), None);
        assert!(is_built_in("portforward://ns/svc/x:80"));
        assert!(!is_built_in("git+file:///repo"));
    }
}
