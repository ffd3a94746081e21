//! Sprig's date functions with Go's `time` semantics: reference-time layouts
//! (`2006-01-02T15:04:05Z07:00`) and `time.Duration` printing and parsing. The
//! `time.Time` values themselves are in [`super::gotime`].

use std::rc::Rc;

use chrono::{Datelike, Duration as ChronoDuration, Timelike, Utc};

use super::Registry;
use super::arg::str;
use super::gotime::{DAYS, GoTime, Loc, MONTHS, TIME, time_of};
use crate::value::{Ty, Value};

const S: Ty = Ty::String;
const A: Ty = Ty::Any;

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("now", &[], |_| Ok(Value::Object(Rc::new(GoTime::now()))));
    r.pure("date", &[S, A], |a| {
        Ok(Value::string(date_in_zone(str(&a[0]), &a[1], "Local")))
    });
    r.pure("dateInZone", &[S, A, S], |a| {
        Ok(Value::string(date_in_zone(str(&a[0]), &a[1], str(&a[2]))))
    });
    r.pure("date_in_zone", &[S, A, S], |a| {
        Ok(Value::string(date_in_zone(str(&a[0]), &a[1], str(&a[2]))))
    });
    r.pure("htmlDate", &[A], |a| {
        Ok(Value::string(date_in_zone("2006-01-02", &a[0], "Local")))
    });
    r.pure("htmlDateInZone", &[A, S], |a| {
        Ok(Value::string(date_in_zone("2006-01-02", &a[0], str(&a[1]))))
    });
    for name in ["dateModify", "date_modify"] {
        r.pure(name, &[S, TIME], |a| {
            let t = time_of(&a[1]).unwrap_or_else(GoTime::now);
            Ok(Value::Object(Rc::new(match parse_duration(str(&a[0])) {
                Ok(d) => t.add(d),
                Err(_) => t,
            })))
        });
    }
    for name in ["mustDateModify", "must_date_modify"] {
        r.pure(name, &[S, TIME], |a| {
            let t = time_of(&a[1]).unwrap_or_else(GoTime::now);
            let d = parse_duration(str(&a[0]))?;
            Ok(Value::Object(Rc::new(t.add(d))))
        });
    }
    r.pure("ago", &[A], |a| {
        let t = time_from_arg(&a[0]).unwrap_or_else(GoTime::now);
        let since = GoTime::now().nanos_since_epoch() - t.nanos_since_epoch();
        Ok(Value::string(format_duration(round_duration(
            since,
            1_000_000_000,
        ))))
    });
    r.pure("duration", &[A], |a| {
        let n: i64 = match &a[0] {
            Value::String(s) => s.parse().unwrap_or(0),
            Value::Int64(n) => *n,
            _ => 0,
        };
        Ok(Value::string(format_duration(n as i128 * 1_000_000_000)))
    });
    r.pure("durationRound", &[A], |a| {
        let d: i128 = match &a[0] {
            Value::String(s) => parse_duration(s).unwrap_or(0),
            Value::Int64(n) => *n as i128,
            Value::Object(_) => match time_of(&a[0]) {
                Some(t) => GoTime::now().nanos_since_epoch() - t.nanos_since_epoch(),
                None => 0,
            },
            _ => 0,
        };
        Ok(Value::string(duration_round(d)))
    });
    r.pure("toDate", &[S, S], |a| {
        Ok(Value::Object(Rc::new(
            parse_time(str(&a[0]), str(&a[1])).unwrap_or_else(|_| GoTime::zero()),
        )))
    });
    r.pure("mustToDate", &[S, S], |a| {
        Ok(Value::Object(Rc::new(parse_time(str(&a[0]), str(&a[1]))?)))
    });
    r.pure("unixEpoch", &[TIME], |a| {
        let t = time_of(&a[0]).unwrap_or_else(GoTime::zero);
        Ok(Value::string(t.instant.timestamp().to_string()))
    });
}

/// The zone names BurntSushi/toml gives the times of TOML's local date-times, dates and
/// times: fixed zones at the machine's offset when the process started.
const TOML_LOCAL_ZONES: [&str; 3] = ["datetime-local", "date-local", "time-local"];

/// A TOML date-time as BurntSushi/toml decodes it (what `fromToml` gives): a `time.Time`
/// in UTC for `Z`, in `Local` or a nameless fixed zone for other offsets (as Go's
/// `time.Parse` places them), and in one of the named local zones otherwise. A missing
/// date is Go's year 0, January 1.
pub(crate) fn from_toml_datetime(d: &toml::value::Datetime) -> Option<Value> {
    let (year, month, day) = d
        .date
        .map_or((0, 1, 1), |d| (d.year as i32, d.month as u32, d.day as u32));
    let (hour, minute, second, nanos) = d.time.map_or((0, 0, 0, 0), |t| {
        (
            t.hour as u32,
            t.minute as u32,
            t.second as u32,
            t.nanosecond,
        )
    });
    let wall = chrono::NaiveDate::from_ymd_opt(year, month, day)?
        .and_hms_nano_opt(hour, minute, second, nanos)?;
    let time = match d.offset {
        Some(toml::value::Offset::Z) => GoTime::date(wall, Loc::Utc),
        Some(toml::value::Offset::Custom { minutes }) => {
            place_with_offset(wall, minutes as i32 * 60, None)
        }
        None => {
            let offset = GoTime::at(Utc::now(), Loc::Local).offset;
            let kind = match (d.date, d.time) {
                (Some(_), Some(_)) => 0,
                (Some(_), None) => 1,
                _ => 2,
            };
            GoTime::date(wall, Loc::Fixed(TOML_LOCAL_ZONES[kind].into(), offset))
        }
    };
    Some(Value::Object(Rc::new(time)))
}

/// Where Go's `time.Parse` places a wall-clock time read with a numeric offset (and
/// maybe a zone name): in `Local` when that is the offset (and name) in effect there
/// at that time, else in a fixed zone recording them.
fn place_with_offset(wall: chrono::NaiveDateTime, offset: i32, name: Option<&str>) -> GoTime {
    let instant = wall.and_utc() - ChronoDuration::seconds(offset as i64);
    let local = GoTime::at(instant, Loc::Local);
    if local.offset == offset && name.is_none_or(|n| n == local.zone) {
        return local;
    }
    GoTime::at(instant, Loc::Fixed(name.unwrap_or("").into(), offset))
}

/// How BurntSushi/toml writes a `time.Time`: RFC 3339 with nanoseconds, or, for the
/// times it decoded from local date-times, dates and times, those forms (written in
/// UTC, as it does).
pub(crate) fn toml_datetime_text(v: &Value) -> Option<String> {
    let t = time_of(v)?;
    let layout = match TOML_LOCAL_ZONES.iter().position(|z| *z == t.zone) {
        Some(0) => "2006-01-02T15:04:05.999999999",
        Some(1) => "2006-01-02",
        Some(_) => "15:04:05.999999999",
        None => return Some(format_time(&t, "2006-01-02T15:04:05.999999999Z07:00")),
    };
    Some(format_time(&GoTime::in_zone(t.instant, "UTC"), layout))
}

/// Sprig's date arguments: a time, or Unix seconds as int or int64; anything else is now.
fn time_from_arg(v: &Value) -> Option<GoTime> {
    match v {
        Value::Int(n) | Value::Int64(n) => Some(GoTime::from_unix(*n)),
        other => time_of(other),
    }
}

fn date_in_zone(layout: &str, date: &Value, zone: &str) -> String {
    let t = time_from_arg(date).unwrap_or_else(GoTime::now);
    let shown = GoTime::in_zone(t.instant, zone);
    format_time(&shown, layout)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    PM,
    Pm,
    TZ,
    ISO8601TZ,
    ISO8601SecondsTZ,
    ISO8601ShortTZ,
    ISO8601ColonTZ,
    ISO8601ColonSecondsTZ,
    NumTZ,
    NumSecondsTz,
    NumShortTZ,
    NumColonTZ,
    NumColonSecondsTZ,
    /// Fractional seconds: digits, whether trailing zeros are trimmed, separator.
    Frac(usize, bool, char),
}

/// Go's `nextStdChunk`: the literal prefix, the layout element and the rest.
fn next_chunk(layout: &str) -> (&str, Option<Std>, &str) {
    let b = layout.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &layout[i..];
        let hit = |len: usize, std: Std| Some((i, len, std));
        let found = match b[i] {
            b'J' => {
                if rest.starts_with("January") {
                    hit(7, Std::LongMonth)
                } else if rest.starts_with("Jan") {
                    hit(3, Std::Month)
                } else {
                    None
                }
            }
            b'M' => {
                if rest.starts_with("Monday") {
                    hit(6, Std::LongWeekDay)
                } else if rest.starts_with("Mon") {
                    hit(3, Std::WeekDay)
                } else if rest.starts_with("MST") {
                    hit(3, Std::TZ)
                } else {
                    None
                }
            }
            b'0' => {
                if let Some(&c) = b.get(i + 1)
                    && (b'1'..=b'6').contains(&c)
                {
                    let std = match c {
                        b'1' => Std::ZeroMonth,
                        b'2' => Std::ZeroDay,
                        b'3' => Std::ZeroHour12,
                        b'4' => Std::ZeroMinute,
                        b'5' => Std::ZeroSecond,
                        _ => Std::Year,
                    };
                    hit(2, std)
                } else if rest.starts_with("002") {
                    hit(3, Std::ZeroYearDay)
                } else {
                    None
                }
            }
            b'1' => {
                if rest.starts_with("15") {
                    hit(2, Std::Hour)
                } else {
                    hit(1, Std::NumMonth)
                }
            }
            b'2' => {
                if rest.starts_with("2006") {
                    hit(4, Std::LongYear)
                } else {
                    hit(1, Std::Day)
                }
            }
            b'_' => {
                if rest.starts_with("_2") {
                    if rest.starts_with("_2006") {
                        // "_2006" is a literal underscore and a year.
                        Some((i + 1, 4, Std::LongYear))
                    } else {
                        hit(2, Std::UnderDay)
                    }
                } else if rest.starts_with("__2") {
                    hit(3, Std::UnderYearDay)
                } else {
                    None
                }
            }
            b'3' => hit(1, Std::Hour12),
            b'4' => hit(1, Std::Minute),
            b'5' => hit(1, Std::Second),
            b'P' => {
                if rest.starts_with("PM") {
                    hit(2, Std::PM)
                } else {
                    None
                }
            }
            b'p' => {
                if rest.starts_with("pm") {
                    hit(2, Std::Pm)
                } else {
                    None
                }
            }
            b'-' => {
                if rest.starts_with("-07:00:00") {
                    hit(9, Std::NumColonSecondsTZ)
                } else if rest.starts_with("-070000") {
                    hit(7, Std::NumSecondsTz)
                } else if rest.starts_with("-07:00") {
                    hit(6, Std::NumColonTZ)
                } else if rest.starts_with("-0700") {
                    hit(5, Std::NumTZ)
                } else if rest.starts_with("-07") {
                    hit(3, Std::NumShortTZ)
                } else {
                    None
                }
            }
            b'Z' => {
                if rest.starts_with("Z07:00:00") {
                    hit(9, Std::ISO8601ColonSecondsTZ)
                } else if rest.starts_with("Z070000") {
                    hit(7, Std::ISO8601SecondsTZ)
                } else if rest.starts_with("Z07:00") {
                    hit(6, Std::ISO8601ColonTZ)
                } else if rest.starts_with("Z0700") {
                    hit(5, Std::ISO8601TZ)
                } else if rest.starts_with("Z07") {
                    hit(3, Std::ISO8601ShortTZ)
                } else {
                    None
                }
            }
            b'.' | b',' => {
                let sep = b[i] as char;
                match b.get(i + 1) {
                    Some(&d @ (b'0' | b'9')) => {
                        let mut j = i + 1;
                        while j < b.len() && b[j] == d {
                            j += 1;
                        }
                        if !b.get(j).is_some_and(|c| c.is_ascii_digit()) {
                            hit(j - i, Std::Frac(j - i - 1, d == b'9', sep))
                        } else {
                            None
                        }
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some((start, len, std)) = found {
            return (&layout[..start], Some(std), &layout[start + len..]);
        }
        i += 1;
    }
    (layout, None, "")
}

fn push_pad(out: &mut String, v: i64, width: usize, pad: char) {
    let s = v.abs().to_string();
    if v < 0 {
        out.push('-');
    }
    for _ in s.len()..width {
        out.push(pad);
    }
    out.push_str(&s);
}

/// `Time.Format(layout)`.
pub(crate) fn format_time(t: &GoTime, layout: &str) -> String {
    let local = t.local();
    let mut out = String::with_capacity(layout.len() + 10);
    let mut rest = layout;
    loop {
        let (prefix, std, tail) = next_chunk(rest);
        out.push_str(prefix);
        let Some(std) = std else { break };
        rest = tail;
        let hour = local.hour() as i64;
        match std {
            Std::LongYear => push_pad(&mut out, local.year() as i64, 4, '0'),
            Std::Year => push_pad(&mut out, (local.year() % 100) as i64, 2, '0'),
            Std::LongMonth => out.push_str(MONTHS[local.month0() as usize]),
            Std::Month => out.push_str(&MONTHS[local.month0() as usize][..3]),
            Std::NumMonth => push_pad(&mut out, local.month() as i64, 0, '0'),
            Std::ZeroMonth => push_pad(&mut out, local.month() as i64, 2, '0'),
            Std::LongWeekDay => out.push_str(DAYS[local.weekday().num_days_from_sunday() as usize]),
            Std::WeekDay => {
                out.push_str(&DAYS[local.weekday().num_days_from_sunday() as usize][..3])
            }
            Std::Day => push_pad(&mut out, local.day() as i64, 0, '0'),
            Std::UnderDay => push_pad(&mut out, local.day() as i64, 2, ' '),
            Std::ZeroDay => push_pad(&mut out, local.day() as i64, 2, '0'),
            Std::UnderYearDay => push_pad(&mut out, local.ordinal() as i64, 3, ' '),
            Std::ZeroYearDay => push_pad(&mut out, local.ordinal() as i64, 3, '0'),
            Std::Hour => push_pad(&mut out, hour, 2, '0'),
            Std::Hour12 | Std::ZeroHour12 => {
                let h = match hour % 12 {
                    0 => 12,
                    h => h,
                };
                push_pad(&mut out, h, if std == Std::ZeroHour12 { 2 } else { 0 }, '0');
            }
            Std::Minute => push_pad(&mut out, local.minute() as i64, 0, '0'),
            Std::ZeroMinute => push_pad(&mut out, local.minute() as i64, 2, '0'),
            Std::Second => push_pad(&mut out, local.second() as i64, 0, '0'),
            Std::ZeroSecond => push_pad(&mut out, local.second() as i64, 2, '0'),
            Std::PM => out.push_str(if hour >= 12 { "PM" } else { "AM" }),
            Std::Pm => out.push_str(if hour >= 12 { "pm" } else { "am" }),
            Std::TZ => {
                if !t.zone.is_empty() {
                    out.push_str(&t.zone);
                } else {
                    format_offset(&mut out, t.offset, false, false, false);
                }
            }
            Std::ISO8601TZ
            | Std::ISO8601SecondsTZ
            | Std::ISO8601ShortTZ
            | Std::ISO8601ColonTZ
            | Std::ISO8601ColonSecondsTZ
                if t.offset == 0 =>
            {
                out.push('Z')
            }
            Std::ISO8601TZ | Std::NumTZ => format_offset(&mut out, t.offset, false, false, false),
            Std::ISO8601SecondsTZ | Std::NumSecondsTz => {
                format_offset(&mut out, t.offset, false, true, false)
            }
            Std::ISO8601ShortTZ | Std::NumShortTZ => {
                format_offset(&mut out, t.offset, false, false, true)
            }
            Std::ISO8601ColonTZ | Std::NumColonTZ => {
                format_offset(&mut out, t.offset, true, false, false)
            }
            Std::ISO8601ColonSecondsTZ | Std::NumColonSecondsTZ => {
                format_offset(&mut out, t.offset, true, true, false)
            }
            Std::Frac(digits, trim, sep) => {
                let nanos = format!("{:09}", local.nanosecond() % 1_000_000_000);
                let mut frac = nanos[..digits.min(9)].to_owned();
                if trim {
                    frac = frac.trim_end_matches('0').to_owned();
                    if !frac.is_empty() {
                        out.push(sep);
                        out.push_str(&frac);
                    }
                } else {
                    out.push(sep);
                    out.push_str(&frac);
                }
            }
        }
    }
    out
}

fn format_offset(out: &mut String, offset: i32, colon: bool, seconds: bool, short: bool) {
    out.push(if offset < 0 { '-' } else { '+' });
    let o = offset.unsigned_abs();
    out.push_str(&format!("{:02}", o / 3600));
    if short {
        return;
    }
    if colon {
        out.push(':');
    }
    out.push_str(&format!("{:02}", (o / 60) % 60));
    if seconds {
        if colon {
            out.push(':');
        }
        out.push_str(&format!("{:02}", o % 60));
    }
}

/// `time.ParseInLocation(layout, value, time.Local)` for the common layout elements.
fn parse_time(layout: &str, value: &str) -> Result<GoTime, String> {
    // Go names the remaining input and the layout element it failed on.
    let failure = |value_elem: &str, layout_elem: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            crate::print::quote(value),
            crate::print::quote(layout),
            crate::print::quote(value_elem),
            crate::print::quote(layout_elem)
        )
    };
    let (mut year, mut month, mut day, mut hour, mut min, mut sec, mut nanos) =
        (0i32, 1u32, 1u32, 0u32, 0u32, 0u32, 0u32);
    let mut pm: Option<bool> = None;
    let mut offset: Option<i32> = None;
    let mut utc = false;
    let mut zone_name: Option<&str> = None;
    let mut rest_layout = layout;
    let mut v = value;
    let take_digits = |v: &mut &str, min: usize, max: usize| -> Option<u32> {
        let n = v.bytes().take(max).take_while(u8::is_ascii_digit).count();
        if n < min {
            return None;
        }
        let (d, r) = v.split_at(n);
        *v = r;
        d.parse().ok()
    };
    loop {
        let (prefix, std, tail) = next_chunk(rest_layout);
        let Some(after) = v.strip_prefix(prefix) else {
            return Err(failure(v, prefix));
        };
        v = after;
        let Some(std) = std else { break };
        let value_elem = v;
        let layout_elem = &rest_layout[prefix.len()..rest_layout.len() - tail.len()];
        let bad = || failure(value_elem, layout_elem);
        rest_layout = tail;
        match std {
            Std::LongYear => year = take_digits(&mut v, 4, 4).ok_or_else(bad)? as i32,
            Std::Year => {
                let y = take_digits(&mut v, 2, 2).ok_or_else(bad)? as i32;
                year = if y >= 69 { 1900 + y } else { 2000 + y };
            }
            Std::ZeroMonth => month = take_digits(&mut v, 2, 2).ok_or_else(bad)?,
            Std::NumMonth => month = take_digits(&mut v, 1, 2).ok_or_else(bad)?,
            Std::LongMonth | Std::Month => {
                let idx = MONTHS
                    .iter()
                    .position(|m| {
                        let name = if std == Std::Month { &m[..3] } else { m };
                        v.len() >= name.len() && v[..name.len()].eq_ignore_ascii_case(name)
                    })
                    .ok_or_else(bad)?;
                let len = if std == Std::Month {
                    3
                } else {
                    MONTHS[idx].len()
                };
                v = &v[len..];
                month = idx as u32 + 1;
            }
            Std::LongWeekDay | Std::WeekDay => {
                let idx = DAYS
                    .iter()
                    .position(|d| {
                        let name = if std == Std::WeekDay { &d[..3] } else { d };
                        v.len() >= name.len() && v[..name.len()].eq_ignore_ascii_case(name)
                    })
                    .ok_or_else(bad)?;
                let len = if std == Std::WeekDay {
                    3
                } else {
                    DAYS[idx].len()
                };
                v = &v[len..];
            }
            Std::ZeroDay => day = take_digits(&mut v, 2, 2).ok_or_else(bad)?,
            Std::Day | Std::UnderDay => {
                if std == Std::UnderDay {
                    v = v.strip_prefix(' ').unwrap_or(v);
                }
                day = take_digits(&mut v, 1, 2).ok_or_else(bad)?;
            }
            Std::UnderYearDay | Std::ZeroYearDay => {
                v = v.trim_start_matches(' ');
                take_digits(&mut v, 1, 3).ok_or_else(bad)?;
            }
            Std::Hour => hour = take_digits(&mut v, 1, 2).ok_or_else(bad)?,
            Std::Hour12 => hour = take_digits(&mut v, 1, 2).ok_or_else(bad)?,
            Std::ZeroHour12 => hour = take_digits(&mut v, 2, 2).ok_or_else(bad)?,
            Std::Minute => min = take_digits(&mut v, 1, 2).ok_or_else(bad)?,
            Std::ZeroMinute => min = take_digits(&mut v, 2, 2).ok_or_else(bad)?,
            Std::Second => sec = take_digits(&mut v, 1, 2).ok_or_else(bad)?,
            Std::ZeroSecond => {
                sec = take_digits(&mut v, 2, 2).ok_or_else(bad)?;
                // Go accepts a fraction after seconds even when the layout has none.
                if (v.starts_with('.') || v.starts_with(','))
                    && v[1..].starts_with(|c: char| c.is_ascii_digit())
                    && !rest_layout.starts_with(['.', ','])
                {
                    let n = v[1..].bytes().take_while(u8::is_ascii_digit).count();
                    let digits = format!("{:0<9}", &v[1..1 + n.min(9)]);
                    nanos = digits.parse().unwrap_or(0);
                    v = &v[1 + n..];
                }
            }
            Std::PM | Std::Pm => {
                if v.len() < 2 {
                    return Err(bad());
                }
                match &v[..2] {
                    "PM" | "pm" => pm = Some(true),
                    "AM" | "am" => pm = Some(false),
                    _ => return Err(bad()),
                }
                v = &v[2..];
            }
            Std::TZ => {
                if let Some(rest) = v.strip_prefix("UTC") {
                    utc = true;
                    v = rest;
                    continue;
                }
                let n = parse_time_zone(v).ok_or_else(bad)?;
                zone_name = Some(&v[..n]);
                v = &v[n..];
            }
            Std::ISO8601TZ
            | Std::ISO8601SecondsTZ
            | Std::ISO8601ShortTZ
            | Std::ISO8601ColonTZ
            | Std::ISO8601ColonSecondsTZ
                if v.starts_with('Z') =>
            {
                v = &v[1..];
                utc = true;
            }
            Std::ISO8601TZ
            | Std::ISO8601SecondsTZ
            | Std::ISO8601ShortTZ
            | Std::ISO8601ColonTZ
            | Std::ISO8601ColonSecondsTZ
            | Std::NumTZ
            | Std::NumSecondsTz
            | Std::NumShortTZ
            | Std::NumColonTZ
            | Std::NumColonSecondsTZ => {
                let sign = match v.as_bytes().first() {
                    Some(b'+') => 1,
                    Some(b'-') => -1,
                    _ => return Err(bad()),
                };
                v = &v[1..];
                let h = take_digits(&mut v, 2, 2).ok_or_else(bad)?;
                let colon = matches!(
                    std,
                    Std::ISO8601ColonTZ
                        | Std::ISO8601ColonSecondsTZ
                        | Std::NumColonTZ
                        | Std::NumColonSecondsTZ
                );
                let mut m = 0;
                let mut s = 0;
                if !matches!(std, Std::ISO8601ShortTZ | Std::NumShortTZ) {
                    if colon {
                        v = v.strip_prefix(':').ok_or_else(bad)?;
                    }
                    m = take_digits(&mut v, 2, 2).ok_or_else(bad)?;
                    if matches!(
                        std,
                        Std::ISO8601SecondsTZ
                            | Std::ISO8601ColonSecondsTZ
                            | Std::NumSecondsTz
                            | Std::NumColonSecondsTZ
                    ) {
                        if colon {
                            v = v.strip_prefix(':').ok_or_else(bad)?;
                        }
                        s = take_digits(&mut v, 2, 2).ok_or_else(bad)?;
                    }
                }
                offset = Some(sign * (h * 3600 + m * 60 + s) as i32);
            }
            Std::Frac(digits, trim, sep) => {
                if !v.starts_with(sep) {
                    if trim {
                        continue;
                    }
                    return Err(bad());
                }
                let n = v[1..].bytes().take_while(u8::is_ascii_digit).count();
                if !trim && n != digits {
                    return Err(bad());
                }
                let frac = format!("{:0<9}", &v[1..1 + n.min(9)]);
                nanos = frac.parse().unwrap_or(0);
                v = &v[1 + n..];
            }
        }
    }
    if !v.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            crate::print::quote(value),
            crate::print::quote(v)
        ));
    }
    if let Some(is_pm) = pm {
        if is_pm && hour < 12 {
            hour += 12;
        } else if !is_pm && hour == 12 {
            hour = 0;
        }
    }
    let range_err = || {
        format!(
            "parsing time {}: day out of range",
            crate::print::quote(value)
        )
    };
    let naive = chrono::NaiveDate::from_ymd_opt(year, month, day)
        .and_then(|d| d.and_hms_nano_opt(hour, min, sec, nanos))
        .ok_or_else(range_err)?;
    Ok(if utc {
        GoTime::date(naive, Loc::Utc)
    } else if let Some(offset) = offset {
        place_with_offset(naive, offset, zone_name)
    } else if let Some(name) = zone_name {
        // Local's zone when it goes by that name then; else a zone of that name at
        // the offset a `GMT+h` name gives, or none.
        let local = GoTime::at(naive.and_utc(), Loc::Local);
        if local.zone == name {
            GoTime::at(
                naive.and_utc() - ChronoDuration::seconds(local.offset as i64),
                Loc::Local,
            )
        } else {
            let hours: i32 = name
                .strip_prefix("GMT")
                .and_then(|h| h.parse().ok())
                .unwrap_or(0);
            let offset = hours * 3600;
            GoTime::at(
                naive.and_utc() - ChronoDuration::seconds(offset as i64),
                Loc::Fixed(name.into(), offset),
            )
        }
    } else {
        GoTime::date(naive, Loc::Local)
    })
}

/// Go's `parseTimeZone`: the length of the zone abbreviation `value` starts with.
fn parse_time_zone(value: &str) -> Option<usize> {
    let b = value.as_bytes();
    if b.len() < 3 {
        return None;
    }
    if value.starts_with("ChST") || value.starts_with("MeST") {
        return Some(4);
    }
    if let Some(rest) = value.strip_prefix("GMT") {
        // `GMT` and an hour offset, `GMT+3`.
        let sign = rest.as_bytes().first().copied();
        if matches!(sign, Some(b'+' | b'-')) {
            let digits = rest[1..].bytes().take_while(u8::is_ascii_digit).count();
            let hours: i64 = rest[1..1 + digits].parse().unwrap_or(99);
            if digits > 0 && hours <= 23 && !(digits > 1 && rest.as_bytes()[1] == b'0') {
                return Some(4 + digits);
            }
        }
        return Some(3);
    }
    if matches!(b[0], b'+' | b'-') {
        let digits = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        return (digits == 2).then_some(3);
    }
    let upper = b
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_uppercase())
        .count();
    match upper {
        3 => Some(3),
        4 if b[3] == b'T' || value.starts_with("WITA") => Some(4),
        5 if b[4] == b'T' => Some(5),
        _ => None,
    }
}

const UNITS: &[(&str, i128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// `time.ParseDuration`, in nanoseconds.
pub(crate) fn parse_duration(s: &str) -> Result<i128, String> {
    let orig = s;
    let invalid = || format!("time: invalid duration {}", crate::print::quote(orig));
    let (neg, mut s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !s.is_empty() {
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let int_part = &s[..int_len];
        s = &s[int_len..];
        let mut frac_part = "";
        if let Some(r) = s.strip_prefix('.') {
            let n = r.bytes().take_while(u8::is_ascii_digit).count();
            frac_part = &r[..n];
            s = &r[n..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(invalid());
        }
        let unit_len = s
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit() || *c == '.')
            .map_or(s.len(), |(i, _)| i);
        let unit = &s[..unit_len];
        s = &s[unit_len..];
        if unit.is_empty() {
            return Err(format!(
                "time: missing unit in duration {}",
                crate::print::quote(orig)
            ));
        }
        let Some((_, scale)) = UNITS.iter().find(|(u, _)| *u == unit) else {
            return Err(format!(
                "time: unknown unit {} in duration {}",
                crate::print::quote(unit),
                crate::print::quote(orig)
            ));
        };
        let number: f64 = format!(
            "{}.{}",
            if int_part.is_empty() { "0" } else { int_part },
            frac_part
        )
        .trim_end_matches('.')
        .parse()
        .map_err(|_| invalid())?;
        total += number * *scale as f64;
    }
    let nanos = total.round() as i128;
    Ok(if neg { -nanos } else { nanos })
}

fn round_duration(d: i128, m: i128) -> i128 {
    let r = d % m;
    if d < 0 {
        let r = -r;
        if r + r < m { d + r } else { d - m + r }
    } else if r + r < m {
        d - r
    } else {
        d + m - r
    }
}

/// `time.Duration.String()`.
pub(crate) fn format_duration(d: i128) -> String {
    if d == 0 {
        return "0s".into();
    }
    let neg = d < 0;
    let u = d.unsigned_abs();
    let mut out = String::new();
    let frac = |u: u128, prec: u32| -> (String, u128) {
        let div = 10u128.pow(prec);
        let (int, f) = (u / div, u % div);
        if f == 0 {
            return (String::new(), int);
        }
        let digits = format!("{:0width$}", f, width = prec as usize);
        (format!(".{}", digits.trim_end_matches('0')), int)
    };
    if u < 1_000_000_000 {
        let (unit, prec) = if u < 1_000 {
            ("ns", 0)
        } else if u < 1_000_000 {
            ("µs", 3)
        } else {
            ("ms", 6)
        };
        let (f, int) = frac(u, prec);
        out.push_str(&format!("{int}{f}{unit}"));
    } else {
        let (f, secs) = frac(u, 9);
        let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
        if h > 0 {
            out.push_str(&format!("{h}h{m}m"));
        } else if m > 0 {
            out.push_str(&format!("{m}m"));
        }
        out.push_str(&format!("{s}{f}s"));
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

fn duration_round(d: i128) -> String {
    let u = d.unsigned_abs();
    const SECOND: u128 = 1_000_000_000;
    const MINUTE: u128 = 60 * SECOND;
    const HOUR: u128 = 60 * MINUTE;
    const DAY: u128 = 24 * HOUR;
    const MONTH: u128 = 30 * DAY;
    const YEAR: u128 = 365 * DAY;
    for (unit, suffix) in [
        (YEAR, "y"),
        (MONTH, "mo"),
        (DAY, "d"),
        (HOUR, "h"),
        (MINUTE, "m"),
        (SECOND, "s"),
    ] {
        if u > unit {
            return format!("{}{suffix}", u / unit);
        }
    }
    "0s".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_layouts() {
        let t = parse_time("2006-01-02T15:04:05Z07:00", "2023-03-04T05:06:07+02:00").unwrap();
        assert_eq!(
            format_time(&t, "2006-01-02 15:04:05 -0700"),
            "2023-03-04 05:06:07 +0200"
        );
        assert_eq!(
            format_time(&t, "Jan _2 3:04PM Monday"),
            "Mar  4 5:06AM Saturday"
        );
        let u = GoTime::in_zone(t.instant, "UTC");
        assert_eq!(format_time(&u, time_rfc3339()), "2023-03-04T03:06:07Z");
        assert_eq!(u.instant.timestamp().to_string(), "1677899167");
    }

    fn time_rfc3339() -> &'static str {
        "2006-01-02T15:04:05Z07:00"
    }

    #[test]
    fn durations() {
        assert_eq!(format_duration(90 * 1_000_000_000), "1m30s");
        assert_eq!(
            format_duration(3_600_000_000_000 + 1_500_000_000),
            "1h0m1.5s"
        );
        assert_eq!(format_duration(1_500_000), "1.5ms");
        assert_eq!(parse_duration("1h30m").unwrap(), 5_400_000_000_000);
        assert_eq!(parse_duration("-1.5s").unwrap(), -1_500_000_000);
        assert!(parse_duration("5").is_err());
        assert_eq!(duration_round(2 * 86_400_000_000_000 + 5), "2d");
    }
}
