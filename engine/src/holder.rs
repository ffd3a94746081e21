//! The process behind a release lock, so that a lock whose holder ran on this machine and
//! has died can be taken over at once instead of after its lease expires.
//!
//! A pid alone says little: pids are reused, and two containers on one machine have their
//! own pid numbering. So the holder is recorded as the boot (the kernel's boot id), the pid
//! namespace, the pid, the process's start time (clock ticks since boot, which a reused pid
//! will not share) and its user. Only a holder with the same boot and pid namespace is
//! judged here, and only when this process can see it: a process of another user may be
//! hidden (`/proc` mounted with `hidepid`), so its absence proves nothing unless we are
//! root. Everything else is waited out as before. All of this is Linux's `/proc`;
//! elsewhere nothing is recorded and every lock is waited out.

use std::fmt;
use std::str::FromStr;

/// Where a process ran and which one it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessIdentity {
    pub boot: String,
    pub pid_namespace: String,
    pub pid: u32,
    /// Field 22 of `/proc/PID/stat`: when the process started, in clock ticks since boot.
    pub start: u64,
    pub uid: u32,
}

/// What can be said here about a recorded holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// It ran on this machine, in this pid namespace, and it is gone (or a zombie).
    Gone,
    /// It still runs.
    Running,
    /// It ran elsewhere, or cannot be seen from here.
    Unknown,
}

impl ProcessIdentity {
    /// This process, or None where `/proc` does not tell.
    pub fn current() -> Option<ProcessIdentity> {
        let pid = std::process::id();
        let (_, start) = stat(pid)?;
        Some(ProcessIdentity {
            boot: boot_id()?,
            pid_namespace: pid_namespace()?,
            pid,
            start,
            uid: uid()?,
        })
    }

    /// Whether the process this identity names is still running, judged from `here`.
    pub fn liveness(&self, here: &ProcessIdentity) -> Liveness {
        if self.boot != here.boot || self.pid_namespace != here.pid_namespace {
            return Liveness::Unknown;
        }
        if self.uid != here.uid && here.uid != 0 {
            return Liveness::Unknown;
        }
        match stat(self.pid) {
            None => Liveness::Gone,
            Some((state, _)) if state == 'Z' || state == 'X' => Liveness::Gone,
            Some((_, start)) if start != self.start => Liveness::Gone,
            Some(_) => Liveness::Running,
        }
    }
}

/// The form kept in the Lease's annotation: `boot=…;pidns=…;pid=…;start=…;uid=…`.
impl fmt::Display for ProcessIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "boot={};pidns={};pid={};start={};uid={}",
            self.boot, self.pid_namespace, self.pid, self.start, self.uid
        )
    }
}

impl FromStr for ProcessIdentity {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, ()> {
        let mut boot = None;
        let mut pid_namespace = None;
        let mut pid = None;
        let mut start = None;
        let mut uid = None;
        for part in text.split(';') {
            let (key, value) = part.split_once('=').ok_or(())?;
            match key {
                "boot" => boot = Some(value.to_string()),
                "pidns" => pid_namespace = Some(value.to_string()),
                "pid" => pid = value.parse().ok(),
                "start" => start = value.parse().ok(),
                "uid" => uid = value.parse().ok(),
                _ => {}
            }
        }
        Ok(ProcessIdentity {
            boot: boot.filter(|b| !b.is_empty()).ok_or(())?,
            pid_namespace: pid_namespace.filter(|n| !n.is_empty()).ok_or(())?,
            pid: pid.ok_or(())?,
            start: start.ok_or(())?,
            uid: uid.ok_or(())?,
        })
    }
}

/// The state letter and start time of process `pid`; None when there is no such process.
fn stat(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// The command name (field 2) is in parentheses and may hold spaces and parentheses, so
/// the fields are counted from the last `)`.
fn parse_stat(text: &str) -> Option<(char, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // Field 3 was the state; the start time is field 22.
    let start = fields.nth(18)?.parse().ok()?;
    Some((state, start))
}

fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_string()).filter(|id| !id.is_empty())
}

/// `pid:[4026531836]`: the namespace's inode, the same for every process in it.
fn pid_namespace() -> Option<String> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let link = link.to_str()?;
    let inode = link.strip_prefix("pid:[")?.strip_suffix(']')?;
    Some(inode.to_string())
}

fn uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|uid| uid.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_is_read_past_a_command_name_with_spaces_and_parentheses() {
        let line = "8736 (a b) c)) S 8734 8734 5709 0 -1 4194304 98 0 0 0 0 0 0 0 20 0 1 0 17796 3133440 406";
        assert_eq!(parse_stat(line), Some(('S', 17796)));
        assert_eq!(parse_stat("12 (x) R 1 2"), None);
    }

    #[test]
    fn an_identity_reads_back_as_written() {
        let identity = ProcessIdentity {
            boot: "a9698c29-4eb7".into(),
            pid_namespace: "4026531836".into(),
            pid: 4121,
            start: 17796,
            uid: 1000,
        };
        assert_eq!(identity.to_string().parse(), Ok(identity));
        assert!("boot=x;pid=1".parse::<ProcessIdentity>().is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_runs_and_a_dead_child_is_gone() {
        let here = ProcessIdentity::current().expect("/proc on Linux");
        assert_eq!(here.liveness(&here), Liveness::Running);

        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("run true");
        let pid = child.id();
        let (_, start) = stat(pid).expect("the child is there until reaped");
        child.wait().expect("reap");
        let gone = ProcessIdentity {
            pid,
            start,
            ..here.clone()
        };
        assert_eq!(gone.liveness(&here), Liveness::Gone);

        let reused = ProcessIdentity {
            start: here.start + 1,
            ..here.clone()
        };
        assert_eq!(reused.liveness(&here), Liveness::Gone, "a reused pid");

        let elsewhere = ProcessIdentity {
            boot: "another machine".into(),
            ..gone
        };
        assert_eq!(elsewhere.liveness(&here), Liveness::Unknown);
    }
}
