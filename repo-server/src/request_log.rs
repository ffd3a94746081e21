//! ChartMuseum's line per request (`[N] Request served` with `path`, `comment`,
//! `clientIP`, `method`, `statusCode`, `latency`, `reqID`), for deployments whose log
//! pipelines parse it. Its levels are ChartMuseum's: 200 and 201 at info (requests for
//! `/health` only with `--log-health`), 404 at warning, anything else at error; and a
//! debug line `[N] Incoming request: PATH` first.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::http::HeaderMap;

/// How requests are logged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestLog {
    /// ChartMuseum's lines rather than chartkit's own.
    pub chartmuseum: bool,
    /// Log successful `/health` requests too (`--log-health`).
    pub health: bool,
    /// The latency as whole nanoseconds rather than Go's duration text
    /// (`--log-latency-integer`).
    pub latency_integer: bool,
}

/// The request's path as the client sent it, before a `--context-path` prefix is taken
/// off for routing.
#[derive(Debug, Clone)]
pub struct OriginalPath(pub String);

/// Requests seen since start, numbered as ChartMuseum numbers them in its messages.
static REQUESTS: AtomicU64 = AtomicU64::new(0);

/// One request as it is logged.
pub struct Served<'a> {
    pub number: u64,
    pub path: &'a str,
    pub client_ip: String,
    pub method: &'a str,
    pub status: u16,
    pub latency: Duration,
    pub request_id: &'a str,
}

impl RequestLog {
    fn logs(&self, path: &str) -> bool {
        self.health || !path.ends_with("/health")
    }

    /// Numbers a new request and logs its arrival at debug level.
    pub fn incoming(&self, path: &str) -> u64 {
        let number = REQUESTS.fetch_add(1, Ordering::Relaxed) + 1;
        if self.logs(path) {
            tracing::debug!(target: "chartmuseum", "[{number}] Incoming request: {path}");
        }
        number
    }

    pub fn served(&self, served: &Served<'_>) {
        macro_rules! line {
            ($level:ident, $latency:expr) => {
                tracing::$level!(
                    target: "chartmuseum",
                    path = served.path,
                    comment = "",
                    clientIP = served.client_ip.as_str(),
                    method = served.method,
                    statusCode = served.status,
                    latency = $latency,
                    reqID = served.request_id,
                    "[{}] Request served",
                    served.number
                )
            };
        }
        macro_rules! at {
            ($level:ident) => {
                if self.latency_integer {
                    line!(
                        $level,
                        i64::try_from(served.latency.as_nanos()).unwrap_or(i64::MAX)
                    )
                } else {
                    line!($level, go_duration(served.latency).as_str())
                }
            };
        }
        match served.status {
            200 | 201 => {
                if self.logs(served.path) {
                    at!(info);
                }
            }
            404 => at!(warn),
            _ => at!(error),
        }
    }
}

/// The client's address as gin's `ClientIP` gives it with its defaults (every proxy
/// trusted): the first address of `X-Forwarded-For` when all of it parses, else
/// `X-Real-IP`, else the peer.
pub fn client_ip(headers: &HeaderMap, peer: Option<SocketAddr>) -> String {
    for name in ["x-forwarded-for", "x-real-ip"] {
        let Some(value) = headers.get(name).and_then(|v| v.to_str().ok()) else {
            continue;
        };
        let items: Vec<&str> = value.split(',').map(str::trim).collect();
        for (i, item) in items.iter().enumerate().rev() {
            if item.parse::<IpAddr>().is_err() {
                break;
            }
            if i == 0 {
                return (*item).to_owned();
            }
        }
    }
    peer.map(|p| p.ip().to_string()).unwrap_or_default()
}

/// Go's `time.Duration.String()`: `1.5ms`, `250µs`, `2m3.5s`, `0s`.
pub fn go_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    // Below a second: one unit, its fraction without trailing zeros.
    let fraction = |value: u128, scale: u128, unit: &str| {
        let whole = value / scale;
        let rest = value % scale;
        if rest == 0 {
            return format!("{whole}{unit}");
        }
        let digits = scale.ilog10() as usize;
        let text = format!("{rest:0digits$}");
        format!("{whole}.{}{unit}", text.trim_end_matches('0'))
    };
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return fraction(nanos, 1_000, "µs");
    }
    if nanos < 1_000_000_000 {
        return fraction(nanos, 1_000_000, "ms");
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = nanos / 60_000_000_000 % 60;
    let seconds = fraction(nanos % 60_000_000_000, 1_000_000_000, "s");
    match (hours, minutes) {
        (0, 0) => seconds,
        (0, m) => format!("{m}m{seconds}"),
        (h, m) => format!("{h}h{m}m{seconds}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_go_prints_them() {
        assert_eq!(go_duration(Duration::ZERO), "0s");
        assert_eq!(go_duration(Duration::from_nanos(850)), "850ns");
        assert_eq!(go_duration(Duration::from_nanos(53_200)), "53.2µs");
        assert_eq!(go_duration(Duration::from_nanos(1_234_567)), "1.234567ms");
        assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(go_duration(Duration::from_secs(60)), "1m0s");
        assert_eq!(go_duration(Duration::from_millis(123_500)), "2m3.5s");
        assert_eq!(go_duration(Duration::from_secs(3600 + 2)), "1h0m2s");
    }

    #[test]
    fn the_client_address_is_gins() {
        let peer: SocketAddr = "127.0.0.1:5555".parse().unwrap();
        let mut headers = HeaderMap::new();
        assert_eq!(client_ip(&headers, Some(peer)), "127.0.0.1");
        headers.insert("x-real-ip", "10.0.0.9".parse().unwrap());
        assert_eq!(client_ip(&headers, Some(peer)), "10.0.0.9");
        headers.insert("x-forwarded-for", "203.0.113.7, 10.0.0.1".parse().unwrap());
        assert_eq!(client_ip(&headers, Some(peer)), "203.0.113.7");
        // One address that does not parse makes gin distrust the header.
        headers.insert("x-forwarded-for", "nonsense, 10.0.0.1".parse().unwrap());
        assert_eq!(client_ip(&headers, Some(peer)), "10.0.0.9");
    }
}
