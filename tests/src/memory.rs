//! A command's peak memory: its resident set's high-water mark (`VmHWM` in
//! `/proc/PID/status`), read while it runs.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Runs `command` to its end, reading its peak resident set every few milliseconds;
/// the output and the peak in bytes. The kernel keeps the high-water mark itself, so
/// only what the process reaches in its last few milliseconds can be missed.
pub fn run_measuring_peak(command: &mut Command) -> (Output, u64) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the command");
    let status_file = format!("/proc/{}/status", child.id());
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let mut peak_kib = 0u64;
    let status = loop {
        if let Some(kib) = std::fs::read_to_string(&status_file)
            .ok()
            .and_then(|text| high_water_mark_kib(&text))
        {
            peak_kib = peak_kib.max(kib);
        }
        match child.try_wait().expect("wait for the command") {
            Some(status) => break status,
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let output = Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    };
    (output, peak_kib * 1024)
}

/// `VmHWM` of a `/proc/PID/status` text, in KiB.
fn high_water_mark_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
