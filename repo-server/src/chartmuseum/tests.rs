use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

fn read_with(args: &[&str], env: &[(&str, &str)]) -> Result<Personality, ChartMuseumError> {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    read(&args, &env_of(env))
}

#[test]
fn defaults_are_chartmuseums() {
    let p = read_with(
        &["--storage", "local", "--storage-local-rootdir", "/data"],
        &[],
    )
    .unwrap();
    assert_eq!(
        p.serve_args,
        [
            "/data",
            "--addr",
            "0.0.0.0:8080",
            // ChartMuseum serves metrics only with --enable-metrics.
            "--disable-metrics",
            "--max-upload-size",
            "20971520",
            "--read-timeout",
            "30"
        ]
    );
    assert_eq!(p.create_dir, Some(PathBuf::from("/data")));
    assert!(p.basic_auth.is_none());
    assert!(!p.debug);
}

#[test]
fn environment_as_the_helm_chart_sets_it() {
    let p = read_with(
        &[],
        &[
            ("STORAGE", "local"),
            ("STORAGE_LOCAL_ROOTDIR", "/storage"),
            ("BASIC_AUTH_USER", "admin"),
            ("BASIC_AUTH_PASS", "s3cret"),
            ("DISABLE_API", "false"),
            ("DISABLE_METRICS", "false"),
            ("DEPTH", "0"),
            ("PORT", "9000"),
            ("ALLOW_OVERWRITE", "true"),
            ("CHART_URL", "https://charts.example.com"),
            ("DEBUG", "1"),
        ],
    )
    .unwrap();
    assert_eq!(
        p.basic_auth,
        Some(PlainUser {
            user: "admin".to_owned(),
            password: "s3cret".to_owned()
        })
    );
    assert!(p.debug);
    let args = p.serve_args.join(" ");
    assert!(args.starts_with("/storage --addr 0.0.0.0:9000 "), "{args}");
    assert!(args.contains("--url https://charts.example.com"), "{args}");
    assert!(args.contains("--allow-overwrite"), "{args}");
    // Reads need the password unless --auth-anonymous-get.
    assert!(args.contains("--auth-reads"), "{args}");
    assert!(!args.contains("--disable-api"), "{args}");
}

#[test]
fn anonymous_get_leaves_reads_open() {
    let p = read_with(
        &["--auth-anonymous-get"],
        &[
            ("STORAGE", "local"),
            ("STORAGE_LOCAL_ROOTDIR", "/s"),
            ("BASIC_AUTH_USER", "a"),
            ("BASIC_AUTH_PASS", "b"),
        ],
    )
    .unwrap();
    assert!(!p.serve_args.iter().any(|a| a == "--auth-reads"));
    assert!(p.basic_auth.is_some());
}

#[test]
fn a_flag_beats_the_environment_which_beats_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.yaml");
    std::fs::write(
        &file,
        "port: 7000\nstorage:\n  backend: local\n  local:\n    rootdir: /from-file\nbasicAuth:\n  user: u\n  pass: p\nallowoverwrite: true\n",
    )
    .unwrap();
    let config = file.to_str().unwrap();
    let p = read_with(&["--config", config], &[]).unwrap();
    assert_eq!(&p.serve_args[..3], ["/from-file", "--addr", "0.0.0.0:7000"]);
    assert!(p.serve_args.iter().any(|a| a == "--allow-overwrite"));
    assert_eq!(p.basic_auth.as_ref().unwrap().user, "u");
    let p = read_with(&["-c", config], &[("PORT", "7001")]).unwrap();
    assert_eq!(p.serve_args[2], "0.0.0.0:7001");
    let p = read_with(&["--config", config, "--port=7002"], &[("PORT", "7001")]).unwrap();
    assert_eq!(p.serve_args[2], "0.0.0.0:7002");
    let p = read_with(&[], &[("CONFIG", config)]).unwrap();
    assert_eq!(p.serve_args[0], "/from-file");
}

#[test]
fn unknown_config_keys_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.yaml");
    std::fs::write(
        &file,
        "storage:\n  backend: local\n  lcoal:\n    rootdir: /x\n",
    )
    .unwrap();
    let error = read_with(&["--config", file.to_str().unwrap()], &[]).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "unknown key `storage.lcoal.rootdir` in the ChartMuseum config file {}",
            file.display()
        )
    );
}

#[test]
fn unknown_flags_and_arguments_are_refused() {
    let error = read_with(&["--storage", "local", "--no-such-flag"], &[]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown ChartMuseum flag `--no-such-flag`"
    );
    let error = read_with(&["serve"], &[]).unwrap_err();
    assert!(error.to_string().contains("unexpected argument `serve`"));
    let error = read_with(&["--port"], &[]).unwrap_err();
    assert_eq!(error.to_string(), "ChartMuseum flag `--port` needs a value");
}

#[test]
fn unsupported_settings_are_refused_unless_at_their_default() {
    let base = [("STORAGE", "local"), ("STORAGE_LOCAL_ROOTDIR", "/s")];
    let error = read_with(&["--web-template-path", "/srv/web"], &base).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("--web-template-path = `/srv/web` is not supported: "),
        "{error}"
    );
    let mut env = base.to_vec();
    env.push(("CACHE", "redis"));
    let error = read_with(&[], &env).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("CACHE = `redis` is not supported"),
        "{error}"
    );
    // At the default, the same settings are accepted.
    let mut env = base.to_vec();
    env.extend([("DEPTH", "0"), ("CACHE", ""), ("LOG_JSON", "false")]);
    read_with(&["--context-path="], &env).unwrap();
}

#[test]
fn typed_values_are_checked() {
    let base = [("STORAGE", "local"), ("STORAGE_LOCAL_ROOTDIR", "/s")];
    let mut env = base.to_vec();
    env.push(("DEBUG", "yes"));
    let error = read_with(&[], &env).unwrap_err();
    assert_eq!(error.to_string(), "DEBUG is `yes`, not true or false");
    let error = read_with(&["--port", "99999"], &base).unwrap_err();
    assert_eq!(
        error.to_string(),
        "--port is `99999`, not a port number (0 to 65535)"
    );
    let p = read_with(&["--cache-interval", "1m30s"], &base).unwrap();
    assert!(
        p.serve_args
            .ends_with(&["--refresh-interval".to_owned(), "90".to_owned()])
    );
}

#[test]
fn storage_is_required_and_unsupported_backends_are_refused() {
    let error = read_with(&[], &[]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "missing required setting --storage (STORAGE)"
    );
    let error = read_with(&["--storage", "local"], &[]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "missing required setting --storage-local-rootdir (STORAGE_LOCAL_ROOTDIR)"
    );
    let error = read_with(
        &["--storage", "oracle", "--storage-oracle-bucket", "b"],
        &[],
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("--storage-oracle-bucket = `b` is not supported"),
        "{error}"
    );
    let error = read_with(&["--storage", "etcd"], &[]).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("--storage = `etcd` is not supported"),
        "{error}"
    );
}

#[test]
fn amazon_storage_maps_to_a_bucket_url_and_options() {
    let p = read_with(
        &[
            "--storage=amazon",
            "--storage-amazon-bucket",
            "charts",
            "--storage-amazon-prefix",
            "/team/",
            "--storage-amazon-endpoint",
            "http://127.0.0.1:9000",
        ],
        &[],
    )
    .unwrap();
    assert_eq!(p.serve_args[0], "s3://charts/team");
    assert_eq!(
        p.s3,
        S3Options {
            region: Some("us-east-1".to_owned()),
            endpoint: Some("http://127.0.0.1:9000".to_owned()),
            virtual_hosted_style: false,
        }
    );
    assert_eq!(p.create_dir, None);
    let error = read_with(&["--storage=amazon", "--storage-amazon-bucket=b"], &[]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "missing required setting --storage-amazon-region (STORAGE_AMAZON_REGION)"
    );
}

#[test]
fn google_and_microsoft_storage_map_to_bucket_urls() {
    let p = read_with(
        &[],
        &[
            ("STORAGE", "google"),
            ("STORAGE_GOOGLE_BUCKET", "charts"),
            ("STORAGE_GOOGLE_PREFIX", "/team/a/"),
        ],
    )
    .unwrap();
    assert_eq!(p.serve_args[0], "gs://charts/team/a");
    assert_eq!(p.create_dir, None);
    let p = read_with(
        &[
            "--storage",
            "microsoft",
            "--storage-microsoft-container=charts",
        ],
        &[],
    )
    .unwrap();
    assert_eq!(p.serve_args[0], "az://charts");
    let error = read_with(&["--storage", "google"], &[]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "missing required setting --storage-google-bucket (STORAGE_GOOGLE_BUCKET)"
    );
    let error = read_with(&["--storage", "microsoft"], &[]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "missing required setting --storage-microsoft-container (STORAGE_MICROSOFT_CONTAINER)"
    );
}

#[test]
fn listen_host_and_ipv6() {
    let base = [("STORAGE", "local"), ("STORAGE_LOCAL_ROOTDIR", "/s")];
    let p = read_with(&["--listen-host", "::1", "--port", "0"], &base).unwrap();
    assert_eq!(p.serve_args[2], "[::1]:0");
}

#[test]
fn half_of_basic_auth_is_refused() {
    let error = read_with(
        &["--basic-auth-user", "admin"],
        &[("STORAGE", "local"), ("STORAGE_LOCAL_ROOTDIR", "/s")],
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("missing required setting --basic-auth-pass"),
        "{error}"
    );
}

#[test]
fn go_durations() {
    assert_eq!(parse_go_duration("5m0s"), Some(300.0));
    assert_eq!(parse_go_duration("1h30m"), Some(5400.0));
    assert_eq!(parse_go_duration("250ms"), Some(0.25));
    assert_eq!(parse_go_duration("0"), Some(0.0));
    assert_eq!(parse_go_duration("5"), None);
    assert_eq!(parse_go_duration("m"), None);
}

#[test]
fn depth_and_depth_dynamic_become_serves_own() {
    let base = [("STORAGE", "local"), ("STORAGE_LOCAL_ROOTDIR", "/s")];
    let mut env = base.to_vec();
    env.push(("DEPTH", "1"));
    let p = read_with(&[], &env).unwrap();
    assert!(
        p.serve_args.windows(2).any(|w| w == ["--depth", "1"]),
        "{:?}",
        p.serve_args
    );
    let p = read_with(&["--depth-dynamic"], &base).unwrap();
    assert!(p.serve_args.iter().any(|a| a == "--depth-dynamic"));
    assert!(!p.serve_args.iter().any(|a| a == "--depth"));
    let error = read_with(&["--depth", "-1"], &base).unwrap_err();
    assert_eq!(
        error.to_string(),
        "--depth is `-1`, not a number of path segments (0 or more)"
    );
}

#[test]
fn chart_url_takes_the_context_path_as_chartmuseum_writes_it() {
    let url_of = |args: &[&str]| {
        let p = read_with(
            args,
            &[("STORAGE", "local"), ("STORAGE_LOCAL_ROOTDIR", "/s")],
        )
        .unwrap();
        let at = p.serve_args.iter().position(|a| a == "--url").unwrap();
        p.serve_args[at + 1].clone()
    };
    let url = "--chart-url=https://charts.example.com";
    assert_eq!(
        url_of(&[url, "--context-path=/my/crazy/path"]),
        "https://charts.example.com/my/crazy/path"
    );
    // ChartMuseum adds the missing leading slash and drops a trailing one.
    assert_eq!(
        url_of(&[url, "--context-path=charts/"]),
        "https://charts.example.com/charts"
    );
    assert_eq!(url_of(&[url]), "https://charts.example.com");
    let p = read_with(
        &["--context-path=/x"],
        &[("STORAGE", "local"), ("STORAGE_LOCAL_ROOTDIR", "/s")],
    )
    .unwrap();
    assert!(!p.serve_args.iter().any(|a| a == "--url"));
}
