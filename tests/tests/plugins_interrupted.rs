//! A plugin that hangs: helm gives plugin commands and hooks no time limit and neither
//! does chartkit, so the way out is an interrupt. SIGINT sent to chartkit alone (`kill
//! -INT PID`) is passed on to the plugin's program, chartkit waits for it and ends with
//! its status; SIGINT sent as a terminal's Ctrl-C sends it (to the whole process group)
//! ends a hanging install hook, and the install is undone: nothing installed, nothing
//! running.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{run_ok, write_file};

/// Runs until interrupted, writing its pid first and a mark when SIGINT arrives.
const HANG: &str = r#"#!/bin/sh
trap 'echo interrupted > "$MARK"; exit 130' INT
echo $$ > "$PIDFILE"
while true; do sleep 0.1; done
"#;

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn alive(pid: &str) -> bool {
    Command::new("kill")
        .args(["-0", pid])
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// Starts `command`, waits for the plugin's pid, interrupts chartkit alone (or, with
/// `as_terminal`, its whole process group, as Ctrl-C does) and returns chartkit's exit
/// code and the plugin's pid.
fn interrupt(ctx: &TestContext, command: &mut Command, as_terminal: bool) -> (Option<i32>, String) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        command.process_group(0);
    }
    let pidfile = ctx.path("plugin.pid");
    let _ = std::fs::remove_file(&pidfile);
    let mut child: Child = command
        .env("PIDFILE", &pidfile)
        .env("MARK", ctx.path("mark"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let pid = loop {
        if let Ok(pid) = std::fs::read_to_string(&pidfile)
            && pid.ends_with('\n')
        {
            break pid.trim().to_owned();
        }
        assert!(Instant::now() < deadline, "the plugin never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    let target = if as_terminal {
        format!("-{}", child.id())
    } else {
        child.id().to_string()
    };
    run_ok(Command::new("kill").args(["-INT", "--", &target]));
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chartkit did not end after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (status.code(), pid)
}

#[test]
fn a_hanging_plugin_is_interrupted_with_chartkit_and_leaves_nothing_behind() {
    let ctx = TestContext::new();
    let plugins = ctx.path(".home/data/helm/plugins");

    // A cli/v1 plugin that hangs: SIGINT reaches it, chartkit ends with its status.
    let source = ctx.path("src/hang");
    write_file(
        &source,
        "plugin.yaml",
        "name: hang\nversion: 0.1.0\nusage: hang\ndescription: hangs\ncommand: $HELM_PLUGIN_DIR/hang.sh\n",
    );
    executable(&source.join("hang.sh"), HANG);
    run_ok(ctx.chartkit().args(["plugin", "install"]).arg(&source));
    let (code, pid) = interrupt(&ctx, ctx.chartkit().arg("hang"), false);
    assert_eq!(code, Some(130));
    assert_eq!(
        std::fs::read_to_string(ctx.path("mark")).unwrap(),
        "interrupted\n"
    );
    assert!(!alive(&pid), "the plugin {pid} is still running");
    run_ok(ctx.chartkit().args(["plugin", "uninstall", "hang"]));

    // An install hook that hangs (run through `sh -c`, as helm runs a Helm 3 hook):
    // Ctrl-C ends it and the install is undone.
    let _ = std::fs::remove_file(ctx.path("mark"));
    let source = ctx.path("src/slow-hook");
    write_file(
        &source,
        "plugin.yaml",
        "name: slow-hook\nversion: 0.1.0\nusage: x\ndescription: x\ncommand: echo\nhooks:\n  install: $HELM_PLUGIN_DIR/hang.sh\n",
    );
    executable(&source.join("hang.sh"), HANG);
    let (code, pid) = interrupt(
        &ctx,
        ctx.chartkit().args(["plugin", "install"]).arg(&source),
        true,
    );
    assert_eq!(code, Some(1));
    assert!(!alive(&pid), "the hook {pid} is still running");
    assert!(ctx.path("mark").exists(), "the hook was not interrupted");
    let left: Vec<_> = std::fs::read_dir(&plugins)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in the plugin directory: {left:?}");
    let listed = chartkit_tests::stdout(&run_ok(ctx.chartkit().args(["plugin", "list"])));
    assert!(!listed.contains("slow-hook"), "{listed}");
}
