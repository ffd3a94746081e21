//! Cron schedules as CronJobs take them: five fields (minute, hour, day of month,
//! month, day of week; `*`, `?`, lists, ranges, steps, month and day names) or a
//! descriptor (`@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`,
//! `@hourly`, `@every <duration>`), evaluated in UTC.

use chrono::{DateTime, Datelike, Duration, TimeZone, Timelike, Utc};

/// A parsed schedule.
#[derive(Debug, Clone, PartialEq)]
pub enum Schedule {
    Fields {
        minute: u64,
        hour: u64,
        dom: u64,
        month: u64,
        dow: u64,
        /// Day of month or day of week was `*`: both must match (else either may).
        star_day: bool,
    },
    Every(std::time::Duration),
}

fn field(text: &str, min: u32, max: u32, names: &[&str]) -> Result<(u64, bool), String> {
    let mut bits = 0u64;
    let mut star = false;
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (
                r,
                Some(
                    s.parse::<u32>()
                        .map_err(|_| format!("failed to parse int from {s}"))?,
                ),
            ),
            None => (part, None),
        };
        let value = |s: &str| -> Result<u32, String> {
            if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(s)) {
                return Ok(i as u32 + min);
            }
            s.parse::<u32>()
                .map_err(|_| format!("failed to parse int from {s}"))
        };
        let (lo, hi) = if range == "*" || range == "?" {
            if step.is_none() {
                star = true;
            }
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (value(a)?, value(b)?)
        } else {
            let v = value(range)?;
            (v, if step.is_some() { max } else { v })
        };
        if lo < min {
            return Err(format!(
                "beginning of range ({lo}) below minimum ({min}): {part}"
            ));
        }
        if hi > max {
            return Err(format!("end of range ({hi}) above maximum ({max}): {part}"));
        }
        if lo > hi {
            return Err(format!(
                "beginning of range ({lo}) beyond end of range ({hi}): {part}"
            ));
        }
        let step = step.unwrap_or(1);
        if step == 0 {
            return Err(format!("step of range should be a positive number: {part}"));
        }
        let mut v = lo;
        while v <= hi {
            bits |= 1 << v;
            v += step;
        }
    }
    Ok((bits, star))
}

const MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

impl Schedule {
    pub fn parse(text: &str) -> Result<Schedule, String> {
        let text = text.trim();
        if let Some(d) = text.strip_prefix('@') {
            let fields = match d {
                "yearly" | "annually" => "0 0 1 1 *",
                "monthly" => "0 0 1 * *",
                "weekly" => "0 0 * * 0",
                "daily" | "midnight" => "0 0 * * *",
                "hourly" => "0 * * * *",
                _ => {
                    if let Some(every) = d.strip_prefix("every ") {
                        let dur = super::faults::parse_duration(every)
                            .ok_or_else(|| format!("failed to parse duration {text}: {every}"))?;
                        return Ok(Schedule::Every(dur));
                    }
                    return Err(format!("unrecognized descriptor: {text}"));
                }
            };
            return Schedule::parse(fields);
        }
        let parts: Vec<&str> = text.split_whitespace().collect();
        if parts.len() != 5 {
            return Err(format!(
                "expected exactly 5 fields, found {}: {text}",
                parts.len()
            ));
        }
        let (minute, _) = field(parts[0], 0, 59, &[])?;
        let (hour, _) = field(parts[1], 0, 23, &[])?;
        let (dom, dom_star) = field(parts[2], 1, 31, &[])?;
        let (month, _) = field(parts[3], 1, 12, MONTHS)?;
        let (mut dow, dow_star) = field(parts[4], 0, 7, DAYS)?;
        if dow & (1 << 7) != 0 {
            dow |= 1;
        }
        Ok(Schedule::Fields {
            minute,
            hour,
            dom,
            month,
            dow,
            star_day: dom_star || dow_star,
        })
    }

    /// The first time after `after` the schedule names (within five years).
    pub fn next(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let (minute, hour, dom, month, dow, star_day) = match self {
            Schedule::Every(d) => {
                let d = Duration::from_std(*d).ok()?.max(Duration::seconds(1));
                return Some(after + d);
            }
            Schedule::Fields {
                minute,
                hour,
                dom,
                month,
                dow,
                star_day,
            } => (*minute, *hour, *dom, *month, *dow, *star_day),
        };
        let mut t = Utc
            .with_ymd_and_hms(
                after.year(),
                after.month(),
                after.day(),
                after.hour(),
                after.minute(),
                0,
            )
            .single()?
            + Duration::minutes(1);
        let limit = after + Duration::days(366 * 5);
        let day_ok = |t: &DateTime<Utc>| {
            let d = dom & (1 << t.day()) != 0;
            let w = dow & (1 << t.weekday().num_days_from_sunday()) != 0;
            if star_day { d && w } else { d || w }
        };
        while t < limit {
            if month & (1 << t.month()) == 0 {
                let (y, m) = if t.month() == 12 {
                    (t.year() + 1, 1)
                } else {
                    (t.year(), t.month() + 1)
                };
                t = Utc.with_ymd_and_hms(y, m, 1, 0, 0, 0).single()?;
                continue;
            }
            if !day_ok(&t) {
                t = Utc
                    .with_ymd_and_hms(t.year(), t.month(), t.day(), 0, 0, 0)
                    .single()?
                    + Duration::days(1);
                continue;
            }
            if hour & (1 << t.hour()) == 0 {
                t = Utc
                    .with_ymd_and_hms(t.year(), t.month(), t.day(), t.hour(), 0, 0)
                    .single()?
                    + Duration::hours(1);
                continue;
            }
            if minute & (1 << t.minute()) == 0 {
                t += Duration::minutes(1);
                continue;
            }
            return Some(t);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn schedules_name_the_next_time() {
        let s = Schedule::parse("*/15 * * * *").unwrap();
        assert_eq!(
            s.next(at("2025-01-01T10:07:30Z")),
            Some(at("2025-01-01T10:15:00Z"))
        );
        let s = Schedule::parse("0 9 * * MON-FRI").unwrap();
        // 2025-01-04 is a Saturday.
        assert_eq!(
            s.next(at("2025-01-04T10:00:00Z")),
            Some(at("2025-01-06T09:00:00Z"))
        );
        let s = Schedule::parse("@hourly").unwrap();
        assert_eq!(
            s.next(at("2025-01-01T10:00:00Z")),
            Some(at("2025-01-01T11:00:00Z"))
        );
        let s = Schedule::parse("0 0 1,15 * 3").unwrap();
        // Either the day of month or Wednesday.
        assert_eq!(
            s.next(at("2025-01-02T00:00:00Z")),
            Some(at("2025-01-08T00:00:00Z"))
        );
        let s = Schedule::parse("0 0 30 2 *").unwrap();
        assert_eq!(s.next(at("2025-01-01T00:00:00Z")), None);
    }

    #[test]
    fn bad_schedules_are_refused() {
        assert!(Schedule::parse("* * * *").is_err());
        assert!(Schedule::parse("61 * * * *").is_err());
        assert!(Schedule::parse("@sometimes").is_err());
        assert!(Schedule::parse("*/0 * * * *").is_err());
    }
}
