//! Every warning and notice chartkit prints, in the form helm 4 logs them: the line Go's
//! `log/slog` text handler writes, without the time (`level=WARN msg="..." key=value`,
//! the message and values quoted as Go quotes them; `chartkit_values::golog` makes the
//! lines). A script that reads helm's stderr reads chartkit's the same way. Where
//! chartkit has a next step to suggest, a `hint:` line follows the warning.

use chartkit_values::golog;

use crate::output::errln;

/// Prints a line of Helm's log that a library made (what rendering, dependency
/// processing and linting log on the way, collected as `golog` lines).
pub fn line(line: &str) {
    errln!("{line}");
}

/// Prints a warning: helm's words where helm warns of the same thing, chartkit's own
/// otherwise.
pub fn warn(message: &str) {
    warn_with(message, &[]);
}

/// [`warn`], with slog's `key=value` attributes after the message. A message that
/// carries chartkit's hint (`...\nhint: ...`) has it printed on its own line after.
pub fn warn_with(message: &str, attributes: &[(&str, &str)]) {
    match message.split_once("\nhint: ") {
        Some((message, hint)) => warn_with_hint(message, attributes, hint),
        None => line(&golog::warn(message, attributes)),
    }
}

/// [`warn_with`], then chartkit's next step on a line of its own.
pub fn warn_with_hint(message: &str, attributes: &[(&str, &str)], hint: &str) {
    line(&golog::warn(message, attributes));
    errln!("hint: {hint}");
}
