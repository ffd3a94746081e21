//! `./quickstart DIR` never deletes or writes into a directory it did not make. (The
//! refusal comes before the build, so this does not build a release binary.)

use std::process::Command;

use chartkit_tests::{TestContext, stderr, workspace_root};

#[test]
fn quickstart_never_deletes_a_directory_it_did_not_create() {
    let context = TestContext::new();
    let precious = context.path("precious");
    std::fs::create_dir_all(precious.join("notes")).unwrap();
    std::fs::write(precious.join("notes/todo.txt"), "keep me\n").unwrap();
    let file = context.path("a-file");
    std::fs::write(&file, "not a directory\n").unwrap();
    for target in [&precious, &file] {
        let output = Command::new(workspace_root().join("quickstart"))
            .arg(target)
            .current_dir(context.dir())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        let message = stderr(&output);
        assert!(
            message.contains("was not made by the quickstart; leaving it alone"),
            "{message}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(precious.join("notes/todo.txt")).unwrap(),
        "keep me\n"
    );
    assert_eq!(
        context.tree(),
        [
            "a-file",
            "precious",
            "precious/notes",
            "precious/notes/todo.txt"
        ]
    );

    // A relative DIR is taken from where the quickstart is run, not from the checkout.
    let output = Command::new(workspace_root().join("quickstart"))
        .arg("precious")
        .current_dir(context.dir())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains(&format!("`{}`", precious.display())),
        "{}",
        stderr(&output)
    );
}
