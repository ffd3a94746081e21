//! Timestamps as Go's `time.Time` reads and writes them in JSON: RFC 3339 in, RFC 3339 with
//! nanoseconds (trailing zeros trimmed, `Z` for a zero offset) out.

/// A timestamp normalised to Go's output form. Helm writes the zero time for a missing one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoTime(String);

/// Go's zero `time.Time`, written for entries that never had a time.
pub const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

impl GoTime {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` as Go's strict JSON time parser does.
    pub fn parse(text: &str) -> Option<GoTime> {
        let b = text.as_bytes();
        let digits = |range: std::ops::Range<usize>| -> Option<u32> {
            let part = b.get(range)?;
            if !part.iter().all(u8::is_ascii_digit) {
                return None;
            }
            Some(part.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
        };
        if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
            return None;
        }
        if b[13] != b':' || b[16] != b':' {
            return None;
        }
        let year = digits(0..4)?;
        let month = digits(5..7)?;
        let day = digits(8..10)?;
        let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let month_days = [
            31,
            if leap { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        if !(1..=12).contains(&month)
            || day == 0
            || day > month_days[month as usize - 1]
            || hour > 23
            || minute > 59
            || second > 59
        {
            return None;
        }
        let mut pos = 19;
        let mut fraction = "";
        if b.get(pos) == Some(&b'.') {
            let end = b[pos + 1..]
                .iter()
                .position(|c| !c.is_ascii_digit())
                .map_or(b.len(), |i| pos + 1 + i);
            if end == pos + 1 {
                return None;
            }
            fraction = &text[pos + 1..end.min(pos + 10)];
            pos = end;
        }
        let zone = &text[pos..];
        let zone = if zone == "Z" {
            "Z".to_owned()
        } else {
            let z = zone.as_bytes();
            if z.len() != 6 || !matches!(z[0], b'+' | b'-') || z[3] != b':' {
                return None;
            }
            let (zh, zm) = (digits(pos + 1..pos + 3)?, digits(pos + 4..pos + 6)?);
            if zh > 23 || zm > 59 {
                return None;
            }
            if zh == 0 && zm == 0 {
                "Z".to_owned()
            } else {
                zone.to_owned()
            }
        };
        let fraction = fraction.trim_end_matches('0');
        let dot = if fraction.is_empty() { "" } else { "." };
        Some(GoTime(format!("{}{dot}{fraction}{zone}", &text[..19])))
    }

    /// Builds a time from its canonical text, as written by [`GoTime::as_str`].
    pub fn zero() -> GoTime {
        GoTime(ZERO_TIME.to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_zero(&self) -> bool {
        self.0 == ZERO_TIME
    }
}

impl std::fmt::Display for GoTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_like_go() {
        let t = |s: &str| GoTime::parse(s).map(|t| t.0);
        assert_eq!(
            t("2016-10-06T16:23:20.499814565-06:00").as_deref(),
            Some("2016-10-06T16:23:20.499814565-06:00")
        );
        assert_eq!(
            t("2016-10-06T16:23:20.500+00:00").as_deref(),
            Some("2016-10-06T16:23:20.5Z")
        );
        assert_eq!(
            t("2016-10-06T16:23:20Z").as_deref(),
            Some("2016-10-06T16:23:20Z")
        );
        for bad in [
            "2016-10-06",
            "2016-02-30T00:00:00Z",
            "2016-10-06 16:23:20Z",
            "x",
        ] {
            assert_eq!(t(bad), None, "{bad}");
        }
    }
}
