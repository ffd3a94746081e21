//! Waiting for a plugin's program with the interrupting signals passed on. Helm gives a
//! `cli/v1` plugin, a hook or a post-renderer no timeout (a plugin may rightly run for
//! hours: a port-forward, a watch, an interactive prompt), and chartkit gives none either;
//! what it adds is that an interrupt reaches the program and chartkit waits for it to
//! end: Ctrl-C, SIGTERM, SIGHUP and SIGQUIT sent to chartkit are sent on to the program,
//! so a `kill -INT` of chartkit alone does not leave the plugin running, and chartkit
//! ends with the program's status (128 + the signal when the signal ended it, as shells
//! report it) after cleaning up what it was installing.

use std::process::{Child, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[cfg(unix)]
const FORWARDED: [i32; 4] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

/// Waits for `child`, sending it every forwarded signal chartkit receives meanwhile.
pub fn wait_forwarding(child: &mut Child) -> std::io::Result<ExitStatus> {
    let received = Arc::new(AtomicUsize::new(0));
    #[cfg(unix)]
    let registered: Vec<signal_hook::SigId> = FORWARDED
        .iter()
        .filter_map(|&signal| {
            signal_hook::flag::register_usize(signal, Arc::clone(&received), signal as usize).ok()
        })
        .collect();
    let result = loop {
        let signal = received.swap(0, Ordering::SeqCst);
        #[cfg(unix)]
        if signal != 0
            && let Some(signal) = rustix::process::Signal::from_named_raw(signal as i32)
        {
            let _ = rustix::process::kill_process(rustix::process::Pid::from_child(child), signal);
        }
        #[cfg(not(unix))]
        let _ = signal;
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(error) => break Err(error),
        }
    };
    #[cfg(unix)]
    for id in registered {
        signal_hook::low_level::unregister(id);
    }
    result
}

/// The exit code a shell would report for `status`: the program's, or 128 + the signal
/// that ended it.
pub fn exit_code(status: &ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            return 128 + signal;
        }
    }
    status.code().unwrap_or(1)
}
