//! ChartMuseum's bearer auth, client certificates, CORS and log settings in `chartkit
//! serve`'s terms.

use super::{ChartMuseumError, Values};

/// Adds the serve arguments for these settings; says whether bearer auth is on, in which
/// case ChartMuseum ignores its basic auth settings.
pub(super) fn map(values: &Values, args: &mut Vec<String>) -> Result<bool, ChartMuseumError> {
    // ChartMuseum reads the CA only when it serves TLS, and ignores it otherwise.
    let ca = values.text("tls.cacert");
    if !ca.is_empty() && !values.text("tls.cert").is_empty() && !values.text("tls.key").is_empty() {
        args.extend(["--tls-client-ca".to_owned(), ca]);
    }

    let origin = values.text("cors.alloworigin");
    if !origin.is_empty() {
        args.extend(["--cors-allow-origin".to_owned(), origin]);
    }

    if values.bool("logjson")? {
        args.extend(["--log-format".to_owned(), "json".to_owned()]);
        if values.bool("loghealth")? {
            args.push("--log-health".to_owned());
        }
        if values.bool("loglatencyinteger")? {
            args.push("--log-latency-integer".to_owned());
        }
    }

    let bearer = values.bool("bearerauth")?;
    if bearer {
        // ChartMuseum stops at start without any of these, in this order.
        let realm = values.required("authrealm")?;
        let service = values.required("authservice")?;
        let cert = values.required("authcertpath")?;
        args.extend([
            "--auth-jwt-cert".to_owned(),
            cert,
            "--auth-jwt-realm".to_owned(),
            realm,
            "--auth-jwt-service".to_owned(),
            service,
        ]);
        let search = values.text("authactionssearchpath");
        if !search.is_empty() {
            args.extend(["--auth-jwt-search-path".to_owned(), search]);
        }
        if !values.bool("authanonymousget")? {
            args.push("--auth-reads".to_owned());
        }
    }
    Ok(bearer)
}

#[cfg(test)]
mod tests {
    use super::super::{ChartMuseumError, read};

    fn serve_args(args: &[&str], env: &[(&str, &str)]) -> Result<Vec<String>, ChartMuseumError> {
        let mut all = vec!["--storage", "local", "--storage-local-rootdir", "/data"];
        all.extend_from_slice(args);
        let all: Vec<String> = all.iter().map(|a| (*a).to_owned()).collect();
        let env: std::collections::BTreeMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        read(&all, &|name| env.get(name).cloned()).map(|p| p.serve_args)
    }

    fn has(args: &[String], wanted: &[&str]) -> bool {
        args.windows(wanted.len()).any(|w| w == wanted)
    }

    #[test]
    fn bearer_auth_maps_to_serves_jwt_flags_and_ignores_basic_auth() {
        let args = serve_args(
            &[
                "--bearer-auth",
                "--auth-realm",
                "https://auth/token",
                "--auth-service",
                "charts",
                "--basic-auth-user",
                "alice",
            ],
            &[("AUTH_CERT_PATH", "/keys/auth.pem")],
        )
        .unwrap();
        assert!(
            has(&args, &["--auth-jwt-cert", "/keys/auth.pem"]),
            "{args:?}"
        );
        assert!(
            has(&args, &["--auth-jwt-realm", "https://auth/token"]),
            "{args:?}"
        );
        assert!(has(&args, &["--auth-jwt-service", "charts"]), "{args:?}");
        assert!(has(&args, &["--auth-reads"]), "{args:?}");
        let anonymous = serve_args(
            &[
                "--bearer-auth",
                "--auth-anonymous-get",
                "--auth-actions-search-path",
                "a.b",
            ],
            &[
                ("AUTH_REALM", "r"),
                ("AUTH_SERVICE", "s"),
                ("AUTH_CERT_PATH", "c"),
            ],
        )
        .unwrap();
        assert!(!has(&anonymous, &["--auth-reads"]), "{anonymous:?}");
        assert!(
            has(&anonymous, &["--auth-jwt-search-path", "a.b"]),
            "{anonymous:?}"
        );
        let missing = serve_args(&["--bearer-auth", "--auth-service", "s"], &[]).unwrap_err();
        assert!(missing.to_string().contains("--auth-realm"), "{missing}");
    }

    #[test]
    fn the_client_ca_counts_only_with_tls() {
        let without = serve_args(&["--tls-ca-cert", "/ca.pem"], &[]).unwrap();
        assert!(
            !has(&without, &["--tls-client-ca", "/ca.pem"]),
            "{without:?}"
        );
        let with = serve_args(
            &[
                "--tls-cert",
                "/c.pem",
                "--tls-key",
                "/k.pem",
                "--tls-ca-cert",
                "/ca.pem",
            ],
            &[],
        )
        .unwrap();
        assert!(has(&with, &["--tls-client-ca", "/ca.pem"]), "{with:?}");
    }

    #[test]
    fn cors_and_log_settings_map() {
        let args = serve_args(
            &["--cors-alloworigin", "*", "--log-json", "--log-health"],
            &[("LOG_LATENCY_INTEGER", "true")],
        )
        .unwrap();
        assert!(has(&args, &["--cors-allow-origin", "*"]), "{args:?}");
        assert!(has(&args, &["--log-format", "json"]), "{args:?}");
        assert!(has(&args, &["--log-health"]), "{args:?}");
        assert!(has(&args, &["--log-latency-integer"]), "{args:?}");
    }
}
