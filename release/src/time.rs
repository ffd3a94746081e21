//! Go's `time.Time` as a release record carries it: parsed from and written as RFC 3339
//! with nanoseconds, keeping the offset the writer used, and printed the ways helm prints
//! release times (`Time.String()`, `time.ANSIC`, `time.RFC3339`).

use std::fmt::Write as _;

use chrono::{DateTime, FixedOffset, Offset, TimeZone, Timelike, Utc};

/// A point in time with the offset it was written in; Go's zero time is `None` wherever
/// a field holds an `Option<GoTime>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoTime {
    at: DateTime<FixedOffset>,
    /// Written with `Z`: Go gives such a time the UTC location, whose name is `UTC`.
    utc: bool,
}

/// The zone Go calls `time.Local`, which decides how helm names the zone of a time it
/// read back (`Time.String()`): a time whose offset is the local zone's at that instant
/// takes the local zone's abbreviation, any other offset prints as a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LocalZone {
    #[default]
    Utc,
    Tz(chrono_tz::Tz),
}

impl LocalZone {
    /// The zone named as `$TZ` names it (`:` prefix allowed); an empty or unknown name is
    /// UTC, as Go falls back to UTC.
    pub fn from_name(name: &str) -> LocalZone {
        let name = name.strip_prefix(':').unwrap_or(name);
        match name.parse::<chrono_tz::Tz>() {
            Ok(tz) => LocalZone::Tz(tz),
            Err(_) => LocalZone::Utc,
        }
    }

    /// The zone's offset and abbreviation at `instant`.
    fn at(&self, instant: DateTime<Utc>) -> (i32, String) {
        match self {
            LocalZone::Utc => (0, "UTC".to_owned()),
            LocalZone::Tz(tz) => {
                use chrono_tz::OffsetName as _;
                let offset = tz.offset_from_utc_datetime(&instant.naive_utc());
                let seconds = offset.fix().local_minus_utc();
                let name = offset.abbreviation().unwrap_or_default().to_owned();
                (seconds, name)
            }
        }
    }
}

/// Text that is not an RFC 3339 time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parsing time {text:?} as RFC 3339: {reason}")]
pub struct TimeError {
    pub text: String,
    pub reason: String,
}

impl GoTime {
    /// Parses RFC 3339 as Go's `Time.UnmarshalJSON` does; Go's zero time (January 1 of
    /// year 1, UTC) is `None`.
    pub fn parse(text: &str) -> Result<Option<GoTime>, TimeError> {
        let at = DateTime::parse_from_rfc3339(text).map_err(|e| TimeError {
            text: text.to_owned(),
            reason: e.to_string(),
        })?;
        let utc = text.ends_with(['Z', 'z']);
        let zero = Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).single();
        if Some(at.with_timezone(&Utc)) == zero {
            return Ok(None);
        }
        Ok(Some(GoTime { at, utc }))
    }

    /// A time in UTC, as Go holds one whose location is UTC.
    pub fn from_utc(at: DateTime<Utc>) -> GoTime {
        GoTime {
            at: at.fixed_offset(),
            utc: true,
        }
    }

    /// A time at a fixed offset from UTC.
    pub fn from_fixed(at: DateTime<FixedOffset>) -> GoTime {
        GoTime { at, utc: false }
    }

    /// The instant with the offset it was written in.
    pub fn datetime(&self) -> DateTime<FixedOffset> {
        self.at
    }

    /// Seconds since the Unix epoch (Go's `Time.Unix`).
    pub fn unix(&self) -> i64 {
        self.at.timestamp()
    }

    /// `time.RFC3339Nano`, which is how `encoding/json` writes a time: fraction without
    /// trailing zeros, `Z` for a zero offset.
    pub fn rfc3339_nano(&self) -> String {
        let mut out = self.at.format("%Y-%m-%dT%H:%M:%S").to_string();
        push_fraction(&mut out, self.at.nanosecond());
        push_offset(&mut out, self.at.offset().local_minus_utc(), true);
        out
    }

    /// `time.RFC3339`: seconds, no fraction.
    pub fn rfc3339(&self) -> String {
        let mut out = self.at.format("%Y-%m-%dT%H:%M:%S").to_string();
        push_offset(&mut out, self.at.offset().local_minus_utc(), true);
        out
    }

    /// `time.ANSIC` (`Mon Jan _2 15:04:05 2006`) in the time's own offset.
    pub fn ansic(&self) -> String {
        self.at.format("%a %b %e %H:%M:%S %Y").to_string()
    }

    /// Go's `Time.String()` for a time helm decoded from a record:
    /// `2006-01-02 15:04:05.999999999 -0700 MST`, the zone named as Go names it
    /// (see [`LocalZone`]).
    pub fn go_string(&self, local: &LocalZone) -> String {
        let offset = self.at.offset().local_minus_utc();
        let name = if self.utc {
            Some("UTC".to_owned())
        } else {
            let (local_offset, name) = local.at(self.at.with_timezone(&Utc));
            (local_offset == offset).then_some(name)
        };
        let mut out = self.at.format("%Y-%m-%d %H:%M:%S").to_string();
        push_fraction(&mut out, self.at.nanosecond());
        out.push(' ');
        push_offset(&mut out, offset, false);
        out.push(' ');
        match name {
            Some(name) if !name.is_empty() => out.push_str(&name),
            // Go prints a zone without a name as its offset again.
            _ => push_offset(&mut out, offset, false),
        }
        out
    }
}

/// The zero time as `encoding/json` writes it.
pub const ZERO_RFC3339: &str = "0001-01-01T00:00:00Z";

/// `Mon Jan  1 00:00:00 0001`: the zero time in `time.ANSIC`.
pub const ZERO_ANSIC: &str = "Mon Jan  1 00:00:00 0001";

fn push_fraction(out: &mut String, nanos: u32) {
    // A leap second shows as nanoseconds past one second in chrono; Go has none.
    let nanos = nanos % 1_000_000_000;
    if nanos == 0 {
        return;
    }
    let digits = format!("{nanos:09}");
    out.push('.');
    out.push_str(digits.trim_end_matches('0'));
}

/// `Z07:00` (RFC 3339) or `-0700`.
fn push_offset(out: &mut String, seconds: i32, rfc3339: bool) {
    if rfc3339 && seconds == 0 {
        out.push('Z');
        return;
    }
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.abs() / 60;
    if rfc3339 {
        let _ = write!(out, "{sign}{:02}:{:02}", minutes / 60, minutes % 60);
    } else {
        let _ = write!(out, "{sign}{:02}{:02}", minutes / 60, minutes % 60);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_rfc3339_nano() {
        for text in [
            "2026-01-02T03:04:05.123456789Z",
            "2026-01-02T03:04:05.1Z",
            "2026-01-02T03:04:05Z",
            "2026-01-02T03:04:05.12+01:00",
            "2026-07-02T03:04:05.000001-05:30",
        ] {
            let t = GoTime::parse(text).unwrap().unwrap();
            assert_eq!(t.rfc3339_nano(), text);
        }
    }

    #[test]
    fn zero_time_is_none() {
        assert_eq!(GoTime::parse(ZERO_RFC3339).unwrap(), None);
        assert!(GoTime::parse("yesterday").is_err());
    }

    #[test]
    fn prints_as_go_does() {
        let t = GoTime::parse("2026-03-04T05:06:07.25Z").unwrap().unwrap();
        assert_eq!(
            t.go_string(&LocalZone::Utc),
            "2026-03-04 05:06:07.25 +0000 UTC"
        );
        assert_eq!(t.ansic(), "Wed Mar  4 05:06:07 2026");
        assert_eq!(t.rfc3339(), "2026-03-04T05:06:07Z");

        let t = GoTime::parse("2026-03-04T05:06:07+01:00").unwrap().unwrap();
        let berlin = LocalZone::from_name("Europe/Berlin");
        assert_eq!(t.go_string(&berlin), "2026-03-04 05:06:07 +0100 CET");
        // Not the local zone's offset: Go names the zone by its offset.
        assert_eq!(
            t.go_string(&LocalZone::Utc),
            "2026-03-04 05:06:07 +0100 +0100"
        );
        assert_eq!(t.rfc3339(), "2026-03-04T05:06:07+01:00");
        assert_eq!(LocalZone::from_name(":Europe/Berlin"), berlin);
        assert_eq!(LocalZone::from_name("Nowhere/Else"), LocalZone::Utc);
    }
}
