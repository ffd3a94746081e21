//! `--audit-log FILE`: one JSON line per request, as the API server's audit log keeps
//! them (a subset of its `Event`: verb, requestURI, userAgent, responseStatus.code), so a
//! user can see what a client asked for, and a benchmark can count a tool's requests.

use std::fs::File;
use std::io::{LineWriter, Write as _};
use std::sync::Mutex;

use serde_json::json;

/// Where requests are written. A failed write is dropped: the log must never fail a
/// request.
pub struct AuditLog {
    out: Mutex<LineWriter<File>>,
}

impl AuditLog {
    pub fn new(file: File) -> AuditLog {
        AuditLog {
            out: Mutex::new(LineWriter::new(file)),
        }
    }

    pub fn record(&self, method: &str, uri: &str, user_agent: &str, code: u16) {
        let line = json!({
            "verb": method.to_ascii_lowercase(),
            "requestURI": uri,
            "userAgent": user_agent,
            "responseStatus": {"code": code},
        });
        if let Ok(mut out) = self.out.lock() {
            let _ = writeln!(out, "{line}");
        }
    }
}
