//! What `--wait` shows while objects become ready: on a terminal, a live line per
//! object still waiting and why (indicatif), each ticked off when it is ready; piped,
//! one plain line on stderr per change, so logs of CI runs say what was slow. stdout
//! stays exactly what helm prints.

use std::collections::HashMap;
use std::io::IsTerminal as _;
use std::sync::Mutex;
use std::time::Duration;

use chartkit_cluster::Progress;
use chartkit_cluster::readiness::State;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

pub struct WaitView {
    /// None when stderr is not a terminal.
    live: Option<MultiProgress>,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl WaitView {
    pub fn new() -> WaitView {
        WaitView {
            live: std::io::stderr().is_terminal().then(MultiProgress::new),
            bars: Mutex::new(HashMap::new()),
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
            eprintln!("{object}: {}", words(state));
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
