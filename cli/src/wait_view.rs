//! What `--wait` shows while objects become ready: on a terminal, a live line per
//! object still waiting and why (indicatif), each ticked off when it is ready. Piped,
//! nothing, as helm prints nothing there (long work shows progress on a terminal and
//! stays quiet when piped), unless `--debug` asks for one plain line per change. stdout
//! stays exactly what helm prints.

use std::collections::HashMap;
use std::io::IsTerminal as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chartkit_cluster::Progress;
use chartkit_cluster::readiness::State;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

/// `--debug`: plain progress lines when stderr is not a terminal.
static LINES_WHEN_PIPED: AtomicBool = AtomicBool::new(false);

/// Set once from the global `--debug` flag, before any command runs.
pub fn lines_when_piped(debug: bool) {
    LINES_WHEN_PIPED.store(debug, Ordering::Relaxed);
}

/// How the wait is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// stderr is a terminal: live lines.
    Live,
    /// Piped with `--debug`: a line per change.
    Lines,
    /// Piped: nothing.
    Quiet,
}

fn mode(terminal: bool, debug: bool) -> Mode {
    match (terminal, debug) {
        (true, _) => Mode::Live,
        (false, true) => Mode::Lines,
        (false, false) => Mode::Quiet,
    }
}

pub struct WaitView {
    mode: Mode,
    /// Some when `mode` is `Live`.
    live: Option<MultiProgress>,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl WaitView {
    pub fn new() -> WaitView {
        let mode = mode(
            std::io::stderr().is_terminal(),
            LINES_WHEN_PIPED.load(Ordering::Relaxed),
        );
        WaitView {
            mode,
            live: (mode == Mode::Live).then(MultiProgress::new),
            bars: Mutex::new(HashMap::new()),
        }
    }

    /// A line that is not about one object: above the live lines, or plain.
    fn note(&self, line: &str) {
        let drawn = self
            .live
            .as_ref()
            .is_some_and(|live| live.println(line).is_ok());
        if !drawn && self.mode != Mode::Quiet {
            eprintln!("{line}");
        }
    }
}

fn words(state: &State) -> String {
    match state {
        State::Ready => "ready".to_string(),
        State::Pending(reason) => format!("waiting: {reason}"),
        State::Failed(reason) => format!("failed: {reason}"),
    }
}

impl Progress for WaitView {
    fn changed(&self, object: &str, state: &State) {
        let Some(live) = &self.live else {
            if self.mode == Mode::Lines {
                eprintln!("{object}: {}", words(state));
            }
            return;
        };
        let mut bars = self.bars.lock().unwrap_or_else(|e| e.into_inner());
        let bar = bars.entry(object.to_string()).or_insert_with(|| {
            let bar = live.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix}: {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(object.to_string());
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        match state {
            State::Ready => bar.finish_with_message("ready"),
            other => bar.set_message(words(other)),
        }
    }

    fn connection_lost(&self, words: &str) {
        self.note(&format!(
            "lost the connection to the API server, trying again: {words}"
        ));
    }

    fn connection_restored(&self) {
        self.note("connected to the API server again");
    }
}

impl Drop for WaitView {
    /// Lines still spinning (a failed or timed-out wait) stop where they are, so the
    /// error printed next is not drawn over.
    fn drop(&mut self) {
        let bars = self.bars.get_mut().unwrap_or_else(|e| e.into_inner());
        for bar in bars.values() {
            if !bar.is_finished() {
                bar.abandon();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Mode, mode};

    #[test]
    fn waits_show_live_lines_on_a_terminal_and_nothing_piped_without_debug() {
        assert_eq!(mode(true, false), Mode::Live);
        assert_eq!(mode(true, true), Mode::Live);
        assert_eq!(mode(false, false), Mode::Quiet);
        assert_eq!(mode(false, true), Mode::Lines);
    }
}
