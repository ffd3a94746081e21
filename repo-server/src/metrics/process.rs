//! The process metrics every Prometheus client exposes (client_golang's process collector,
//! which ChartMuseum's `/metrics` carries): CPU time, memory, file descriptors and start
//! time, read from `/proc` as it reads them. Elsewhere than Linux there are none.

use std::fmt::Write;

/// `/proc`'s clock ticks per second, which Go's procfs takes as fixed too.
const TICKS_PER_SECOND: f64 = 100.0;

/// Appends the process families, as far as `/proc` answers.
pub fn render(out: &mut String) {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return;
    };
    // The command name is in parentheses and may hold anything; the fields follow its end.
    let Some((_, fields)) = stat.rsplit_once(')') else {
        return;
    };
    let fields: Vec<&str> = fields.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok());
    if let (Some(user), Some(system)) = (field(11), field(12)) {
        family(
            out,
            "process_cpu_seconds_total",
            "Total user and system CPU time spent in seconds.",
            "counter",
            (user + system) / TICKS_PER_SECOND,
        );
    }
    if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
        family(
            out,
            "process_open_fds",
            "Number of open file descriptors.",
            "gauge",
            entries.count() as f64,
        );
    }
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    if let Some(max) = soft_limit(&limits, "Max open files") {
        family(
            out,
            "process_max_fds",
            "Maximum number of open file descriptors.",
            "gauge",
            max,
        );
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(kib) = status_kib(&status, "VmRSS:") {
        family(
            out,
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            "gauge",
            kib * 1024.0,
        );
    }
    if let (Some(started), Some(boot)) = (field(19), boot_time()) {
        family(
            out,
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            "gauge",
            boot + started / TICKS_PER_SECOND,
        );
    }
    if let Some(kib) = status_kib(&status, "VmSize:") {
        family(
            out,
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes.",
            "gauge",
            kib * 1024.0,
        );
    }
    if let Some(max) = soft_limit(&limits, "Max address space") {
        family(
            out,
            "process_virtual_memory_max_bytes",
            "Maximum amount of virtual memory available in bytes.",
            "gauge",
            max,
        );
    }
}

fn family(out: &mut String, name: &str, help: &str, kind: &str, value: f64) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {}",
        super::go_float(value)
    );
}

/// The soft value of a `/proc/self/limits` row; unlimited is Go's largest uint64.
fn soft_limit(limits: &str, row: &str) -> Option<f64> {
    let rest = limits.lines().find_map(|line| line.strip_prefix(row))?;
    match rest.split_whitespace().next()? {
        "unlimited" => Some(u64::MAX as f64),
        soft => soft.parse().ok(),
    }
}

fn status_kib(status: &str, key: &str) -> Option<f64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn boot_time() -> Option<f64> {
    std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_status_rows_are_read_as_procfs_reads_them() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 524288               files\n\
                      Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(soft_limit(limits, "Max open files"), Some(1024.0));
        assert_eq!(
            crate::metrics::go_float(soft_limit(limits, "Max address space").unwrap()),
            "1.8446744073709552e+19"
        );
        assert_eq!(status_kib("VmRSS:\t   2048 kB\n", "VmRSS:"), Some(2048.0));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_described() {
        let mut out = String::new();
        render(&mut out);
        for name in [
            "process_cpu_seconds_total",
            "process_open_fds",
            "process_max_fds",
            "process_resident_memory_bytes",
            "process_start_time_seconds",
        ] {
            assert!(out.contains(&format!("# TYPE {name} ")), "{name}:\n{out}");
        }
    }
}
