//! chartkit started as ChartMuseum: through a `chartmuseum` link to the built binary, in an
//! environment holding only what a test gives it.

use std::path::PathBuf;
use std::process::Command;

use crate::TestContext;

/// A `chartmuseum` link to the built binary, in the test's directory.
pub fn link(ctx: &TestContext) -> PathBuf {
    let link = ctx.path("bin/chartmuseum");
    if !link.exists() {
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(crate::chartkit_bin(), &link).unwrap();
    }
    link
}

/// A `chartmuseum` command in an empty environment (none of ChartMuseum's variables leak
/// in from the test's), listening on an ephemeral port of 127.0.0.1 unless the test's
/// flags say otherwise.
pub fn command(ctx: &TestContext) -> Command {
    let mut command = Command::new(link(ctx));
    command
        .current_dir(ctx.dir())
        .env_clear()
        .env("HOME", ctx.path(".home"))
        .env("NO_COLOR", "1")
        .env("LISTEN_HOST", "127.0.0.1")
        .env("PORT", "0");
    command
}
