use std::time::{SystemTime, UNIX_EPOCH};

use chartkit_index::GoTime;

/// The current time as Go's `time.Now()` marshals it in UTC (RFC 3339, nanoseconds).
pub fn now() -> GoTime {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_utc(since.as_secs(), since.subsec_nanos())
}

/// Formats seconds since the epoch as an RFC 3339 UTC time.
pub fn format_utc(secs: u64, nanos: u32) -> GoTime {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Days to civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let text = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    );
    GoTime::parse(&text).unwrap_or_else(GoTime::zero)
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(
            super::format_utc(1_700_000_000, 5_000).as_str(),
            "2023-11-14T22:13:20.000005Z"
        );
        assert_eq!(super::format_utc(0, 0).as_str(), "1970-01-01T00:00:00Z");
    }
}
