//! Go's `time` package values as templates see them: `time.Time` with every method a
//! template can call, and the `time.Duration`, `time.Month`, `time.Weekday` and
//! `*time.Location` values those methods give.
//!
//! Go's `time.Local` comes from `$TZ` or `/etc/localtime`; here it is the zone named by
//! `$TZ` when that is an IANA name, and UTC otherwise.

use std::any::Any;
use std::rc::Rc;

use chrono::{
    DateTime, Datelike, Duration as ChronoDuration, FixedOffset, NaiveDateTime, Offset, TimeZone,
    Timelike, Utc,
};

use super::date::{format_duration, format_time};
use crate::value::{MethodSig, Object, Ty, Value};

pub(crate) const TIME: Ty = Ty::Object("time.Time");
pub(crate) const DURATION: Ty = Ty::NamedInt("time.Duration");
const LOCATION: Ty = Ty::Object("*time.Location");

const NANOS_PER_SECOND: i128 = 1_000_000_000;
/// Seconds from Go's zero time (January 1, year 1, UTC) to the Unix epoch.
const SECONDS_BEFORE_UNIX: i128 = 62_135_596_800;

pub(crate) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
pub(crate) const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

fn local_zone() -> Option<chrono_tz::Tz> {
    std::env::var("TZ").ok().and_then(|tz| tz.parse().ok())
}

/// A `*time.Location`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Loc {
    Utc,
    Local,
    Tz(chrono_tz::Tz),
    /// `time.FixedZone(name, offset)`; the name may be empty.
    Fixed(Rc<str>, i32),
}

impl Loc {
    /// `time.LoadLocation(name)`, falling back to UTC for unknown names as Sprig does.
    pub(crate) fn load(name: &str) -> Loc {
        match name {
            "" | "UTC" => Loc::Utc,
            "Local" => Loc::Local,
            name => name.parse().map_or(Loc::Utc, Loc::Tz),
        }
    }

    /// `Location.String()`.
    fn name(&self) -> String {
        match self {
            Loc::Utc => "UTC".into(),
            Loc::Local => "Local".into(),
            Loc::Tz(tz) => tz.name().into(),
            Loc::Fixed(name, _) => name.to_string(),
        }
    }

    /// The offset east of UTC, the zone's abbreviation and whether it is daylight time,
    /// at an instant.
    fn zone_at(&self, instant: DateTime<Utc>) -> (i32, String, bool) {
        let tz = match self {
            Loc::Utc => return (0, "UTC".into(), false),
            Loc::Fixed(name, offset) => return (*offset, name.to_string(), false),
            Loc::Local => match local_zone() {
                Some(tz) => tz,
                None => return (0, "UTC".into(), false),
            },
            Loc::Tz(tz) => *tz,
        };
        let local = instant.with_timezone(&tz);
        let offset = local.offset();
        (
            offset.fix().local_minus_utc(),
            local.format("%Z").to_string(),
            chrono_tz::OffsetComponents::dst_offset(offset).num_seconds() != 0,
        )
    }

    /// The instant a wall-clock time names here, as Go's `time.Date` picks it.
    fn instant_of(&self, wall: NaiveDateTime) -> DateTime<Utc> {
        let as_utc = wall.and_utc();
        let tz = match self {
            Loc::Local => local_zone(),
            Loc::Tz(tz) => Some(*tz),
            _ => None,
        };
        if let Some(tz) = tz {
            use chrono::LocalResult;
            match tz.from_local_datetime(&wall) {
                LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => {
                    return t.with_timezone(&Utc);
                }
                LocalResult::None => {}
            }
        }
        as_utc - ChronoDuration::seconds(self.zone_at(as_utc).0 as i64)
    }

    /// `%#v` of the location inside a `time.Date(...)`.
    fn go_string(&self) -> String {
        match self {
            Loc::Utc => "time.UTC".into(),
            Loc::Local => "time.Local".into(),
            other => format!("time.Location({})", crate::print::quote(&other.name())),
        }
    }
}

/// A Go `time.Time`: an instant, its location, and the offset and zone abbreviation
/// in effect there.
#[derive(Clone, Debug)]
pub(crate) struct GoTime {
    pub(crate) instant: DateTime<Utc>,
    pub(crate) loc: Loc,
    pub(crate) offset: i32,
    pub(crate) zone: String,
    /// `time.Now()` values print their monotonic clock reading.
    pub(crate) monotonic: bool,
}

impl GoTime {
    pub(crate) fn at(instant: DateTime<Utc>, loc: Loc) -> GoTime {
        let (offset, zone, _) = loc.zone_at(instant);
        GoTime {
            instant,
            loc,
            offset,
            zone,
            monotonic: false,
        }
    }

    /// A wall-clock time in a location (`time.Date`).
    pub(crate) fn date(wall: NaiveDateTime, loc: Loc) -> GoTime {
        GoTime::at(loc.instant_of(wall), loc)
    }

    pub(crate) fn now() -> GoTime {
        GoTime {
            monotonic: true,
            ..GoTime::at(Utc::now(), Loc::Local)
        }
    }

    /// Go's zero time, January 1 of year 1, UTC.
    pub(crate) fn zero() -> GoTime {
        GoTime::at(zero_instant(), Loc::Utc)
    }

    pub(crate) fn from_unix(secs: i64) -> GoTime {
        let instant = Utc.timestamp_opt(secs, 0).single().unwrap_or_else(Utc::now);
        GoTime::at(instant, Loc::Local)
    }

    /// The instant shown in the location `zone` names (`time.LoadLocation`).
    pub(crate) fn in_zone(instant: DateTime<Utc>, zone: &str) -> GoTime {
        GoTime::at(instant, Loc::load(zone))
    }

    /// The wall clock and offset in effect.
    pub(crate) fn local(&self) -> DateTime<FixedOffset> {
        let offset = FixedOffset::east_opt(self.offset).unwrap_or_else(|| Utc.fix());
        self.instant.with_timezone(&offset)
    }

    pub(crate) fn nanos_since_epoch(&self) -> i128 {
        self.instant.timestamp() as i128 * NANOS_PER_SECOND
            + self.instant.timestamp_subsec_nanos() as i128
    }

    /// Nanoseconds since Go's zero time, which `Round` and `Truncate` count from.
    fn nanos_since_zero(&self) -> i128 {
        self.nanos_since_epoch() + SECONDS_BEFORE_UNIX * NANOS_PER_SECOND
    }

    /// The same location at another instant given in nanoseconds since the epoch;
    /// `None` past the range of dates kept.
    fn with_nanos(&self, nanos: i128) -> Option<GoTime> {
        let secs = i64::try_from(nanos.div_euclid(NANOS_PER_SECOND)).ok()?;
        let instant = DateTime::from_timestamp(secs, nanos.rem_euclid(NANOS_PER_SECOND) as u32)?;
        Some(GoTime::at(instant, self.loc.clone()))
    }

    /// `t.Add(d)`.
    pub(crate) fn add(&self, nanos: i128) -> GoTime {
        let mut t = self
            .with_nanos(self.nanos_since_epoch() + nanos)
            .unwrap_or_else(|| self.clone());
        t.monotonic = false;
        t
    }

    /// `t.AddDate(years, months, days)`: the wall clock moved by calendar units, with
    /// Go's normalisation (October 31 plus a month is December 1).
    fn add_date(&self, years: i64, months: i64, days: i64) -> GoTime {
        let local = self.local();
        let month0 = local.year() as i64 * 12 + local.month0() as i64 + years * 12 + months;
        let (year, month0) = (month0.div_euclid(12), month0.rem_euclid(12));
        let first = i32::try_from(year)
            .ok()
            .and_then(|y| chrono::NaiveDate::from_ymd_opt(y, month0 as u32 + 1, 1));
        let wall = first.and_then(|first| {
            first
                .checked_add_signed(ChronoDuration::days(local.day() as i64 - 1 + days))?
                .and_hms_nano_opt(
                    local.hour(),
                    local.minute(),
                    local.second(),
                    local.nanosecond(),
                )
        });
        match wall {
            Some(wall) => GoTime::date(wall, self.loc.clone()),
            None => self.clone(),
        }
    }

    /// `t.Round(d)` or `t.Truncate(d)`: to a multiple of `d` since the zero time.
    fn round(&self, d: i128, up_from_half: bool) -> GoTime {
        let mut t = self.clone();
        t.monotonic = false;
        if d <= 0 {
            return t;
        }
        let r = self.nanos_since_zero().rem_euclid(d);
        let nanos = self.nanos_since_epoch();
        let rounded = if up_from_half && r + r >= d {
            nanos + d - r
        } else {
            nanos - r
        };
        t.with_nanos(rounded).unwrap_or(t)
    }

    /// `t.Sub(u)`, saturating like Go's.
    fn sub(&self, other: &GoTime) -> i64 {
        let d = self.nanos_since_epoch() - other.nanos_since_epoch();
        d.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// `Time.String()`.
    pub(crate) fn string(&self) -> String {
        let mut s = format_time(self, "2006-01-02 15:04:05.999999999 -0700 MST");
        if self.monotonic {
            s.push_str(" m=+0.000000001");
        }
        s
    }

    /// `Time.MarshalBinary()`: Go's version 1 or 2 encoding.
    fn marshal_binary(&self) -> Vec<u8> {
        let secs = (self.instant.timestamp() as i128 + SECONDS_BEFORE_UNIX) as i64;
        let nanos = self.instant.timestamp_subsec_nanos() as i32;
        let (minutes, seconds) = match self.loc {
            Loc::Utc => (-1i16, 0i8),
            _ => ((self.offset / 60) as i16, (self.offset % 60) as i8),
        };
        let mut out = vec![if seconds == 0 { 1 } else { 2 }];
        out.extend_from_slice(&secs.to_be_bytes());
        out.extend_from_slice(&nanos.to_be_bytes());
        out.extend_from_slice(&minutes.to_be_bytes());
        if seconds != 0 {
            out.push(seconds as u8);
        }
        out
    }
}

fn zero_instant() -> DateTime<Utc> {
    chrono::NaiveDate::from_ymd_opt(1, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .unwrap_or_default()
        .and_utc()
}

/// A `time.Time` argument, if it is one.
pub(crate) fn time_of(v: &Value) -> Option<GoTime> {
    match v {
        Value::Object(o) => o.as_any().downcast_ref::<GoTime>().cloned(),
        _ => None,
    }
}

/// A `time.Duration` argument, in nanoseconds.
fn duration_of(v: &Value) -> i64 {
    match v {
        Value::Object(o) => o.as_any().downcast_ref::<NamedInt>().map_or(0, |n| n.value),
        _ => 0,
    }
}

fn time_value(t: GoTime) -> Value {
    Value::Object(Rc::new(t))
}

const fn sig(params: &'static [Ty]) -> Option<MethodSig> {
    Some(MethodSig {
        params,
        variadic: None,
    })
}

/// Bytes, as a `[]byte` result.
fn bytes_value(b: &[u8]) -> Value {
    Value::Bytes(Rc::from(b))
}

impl Object for GoTime {
    fn type_name(&self) -> String {
        "time.Time".into()
    }

    fn method(&self, name: &str) -> Option<MethodSig> {
        match name {
            "Add" | "Round" | "Truncate" => sig(&[DURATION]),
            "AddDate" => sig(&[Ty::Int, Ty::Int, Ty::Int]),
            "After" | "Before" | "Compare" | "Equal" | "Sub" => sig(&[TIME]),
            "AppendFormat" => sig(&[Ty::Bytes, Ty::String]),
            "Format" => sig(&[Ty::String]),
            "In" => sig(&[LOCATION]),
            "Day" | "GoString" | "GobEncode" | "Hour" | "IsDST" | "IsZero" | "Local"
            | "Location" | "MarshalBinary" | "MarshalJSON" | "MarshalText" | "Minute" | "Month"
            | "Nanosecond" | "Second" | "String" | "UTC" | "Unix" | "UnixMicro" | "UnixMilli"
            | "UnixNano" | "Weekday" | "Year" | "YearDay" => sig(&[]),
            _ => None,
        }
    }

    fn uncallable(&self, name: &str) -> Option<String> {
        Some(match name {
            "Clock" | "Date" => format!("function {name} has 3 return values; should be 1 or 2"),
            "ISOWeek" | "Zone" => format!(
                "invalid function signature for {name}: second return value should be error; is int"
            ),
            "ZoneBounds" => format!(
                "invalid function signature for {name}: second return value should be error; is time.Time"
            ),
            _ => return None,
        })
    }

    fn unexported_field(&self, name: &str) -> bool {
        matches!(name, "wall" | "ext" | "loc")
    }

    fn call(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        let local = self.local();
        let other = || time_of(&args[0]).unwrap_or_else(GoTime::zero);
        let int = |i: usize| super::arg::int(&args[i]);
        let named = |type_name: &'static str, value: i64, names: &'static [&'static str]| {
            Value::Object(Rc::new(NamedInt {
                type_name,
                value,
                names,
            }))
        };
        Ok(match name {
            "Add" => time_value(self.add(duration_of(&args[0]) as i128)),
            "AddDate" => time_value(self.add_date(int(0), int(1), int(2))),
            "After" => Value::Bool(self.instant > other().instant),
            "Before" => Value::Bool(self.instant < other().instant),
            "Equal" => Value::Bool(self.instant == other().instant),
            "Compare" => Value::Int(match self.instant.cmp(&other().instant) {
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
                std::cmp::Ordering::Greater => 1,
            }),
            "Sub" => duration(self.sub(&other())),
            "Round" => time_value(self.round(duration_of(&args[0]) as i128, true)),
            "Truncate" => time_value(self.round(duration_of(&args[0]) as i128, false)),
            "AppendFormat" => {
                let mut out = match &args[0] {
                    Value::Bytes(b) => b.to_vec(),
                    _ => Vec::new(),
                };
                out.extend_from_slice(format_time(self, super::arg::str(&args[1])).as_bytes());
                Value::Bytes(out.into())
            }
            "Format" => Value::string(format_time(self, super::arg::str(&args[0]))),
            "In" => match &args[0] {
                Value::Object(o) if let Some(loc) = o.as_any().downcast_ref::<Location>() => {
                    time_value(GoTime::at(self.instant, loc.0.clone()))
                }
                _ => return Err("time: missing Location in call to Time.In".into()),
            },
            "Local" => time_value(GoTime::at(self.instant, Loc::Local)),
            "UTC" => time_value(GoTime::at(self.instant, Loc::Utc)),
            "Location" => Value::Object(Rc::new(Location(self.loc.clone()))),
            "Unix" => Value::Int64(self.instant.timestamp()),
            "UnixMilli" => Value::Int64(self.instant.timestamp_millis()),
            "UnixMicro" => Value::Int64(self.instant.timestamp_micros()),
            "UnixNano" => Value::Int64(self.nanos_since_epoch() as i64),
            "Year" => Value::Int(local.year() as i64),
            "YearDay" => Value::Int(local.ordinal() as i64),
            "Day" => Value::Int(local.day() as i64),
            "Hour" => Value::Int(local.hour() as i64),
            "Minute" => Value::Int(local.minute() as i64),
            "Second" => Value::Int(local.second() as i64),
            "Nanosecond" => Value::Int(local.nanosecond() as i64),
            "Month" => named("time.Month", local.month() as i64, &MONTHS),
            "Weekday" => named(
                "time.Weekday",
                local.weekday().num_days_from_sunday() as i64,
                &DAYS,
            ),
            "IsDST" => Value::Bool(self.loc.zone_at(self.instant).2),
            "IsZero" => Value::Bool(self.instant == zero_instant()),
            "String" => Value::string(self.string()),
            "GoString" => Value::string(self.go_string().unwrap_or_default()),
            "MarshalJSON" => bytes_value(format!("\"{}\"", rfc3339_nano(self)).as_bytes()),
            "MarshalText" => bytes_value(rfc3339_nano(self).as_bytes()),
            "MarshalBinary" | "GobEncode" => bytes_value(&self.marshal_binary()),
            other => return Err(format!("no method {other}")),
        })
    }

    fn format(&self) -> String {
        self.string()
    }

    fn stringer(&self) -> bool {
        true
    }

    fn go_string(&self) -> Option<String> {
        let l = self.local();
        Some(format!(
            "time.Date({}, time.{}, {}, {}, {}, {}, {}, {})",
            l.year(),
            MONTHS[l.month0() as usize],
            l.day(),
            l.hour(),
            l.minute(),
            l.second(),
            l.nanosecond(),
            self.loc.go_string()
        ))
    }

    fn to_data(&self) -> Value {
        Value::string(rfc3339_nano(self))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// RFC 3339 with nanoseconds, as `MarshalJSON` and `MarshalText` write times.
fn rfc3339_nano(t: &GoTime) -> String {
    format_time(t, "2006-01-02T15:04:05.999999999Z07:00")
}

/// A `time.Duration` of `nanos`.
pub(crate) fn duration(nanos: i64) -> Value {
    Value::Object(Rc::new(NamedInt {
        type_name: "time.Duration",
        value: nanos,
        names: &[],
    }))
}

/// A value of a named Go integer type with a `String` method: `time.Duration`
/// (written as Go writes durations), `time.Month` and `time.Weekday` (names).
#[derive(Debug, Clone)]
pub(crate) struct NamedInt {
    type_name: &'static str,
    value: i64,
    /// The names `String` gives by value (from 1 for months), or none for durations.
    names: &'static [&'static str],
}

/// A value of the named integer type `type_name` from an integer constant, as Go
/// converts the constant argument of a method taking one.
pub(crate) fn named_int(type_name: &'static str, value: i64) -> Value {
    match type_name {
        "time.Month" => Value::Object(Rc::new(NamedInt {
            type_name,
            value,
            names: &MONTHS,
        })),
        "time.Weekday" => Value::Object(Rc::new(NamedInt {
            type_name,
            value,
            names: &DAYS,
        })),
        _ => duration(value),
    }
}

impl NamedInt {
    fn is_duration(&self) -> bool {
        self.names.is_empty()
    }
}

/// The number of a `time.Month` or `time.Weekday`, which spf13/cast (Sprig's `int`,
/// `int64`, `float64`, and the math functions) converts as the number it is; it does
/// not know `time.Duration`, which converts to 0.
pub(crate) fn month_or_weekday(v: &Value) -> Option<i64> {
    let Value::Object(o) = v else { return None };
    let named = o.as_any().downcast_ref::<NamedInt>()?;
    (!named.is_duration()).then_some(named.value)
}

impl Object for NamedInt {
    fn type_name(&self) -> String {
        self.type_name.into()
    }

    fn kind(&self) -> &'static str {
        if self.is_duration() { "int64" } else { "int" }
    }

    fn method(&self, name: &str) -> Option<MethodSig> {
        if !self.is_duration() {
            return (name == "String").then_some(MethodSig {
                params: &[],
                variadic: None,
            });
        }
        match name {
            "Round" | "Truncate" => sig(&[DURATION]),
            "Abs" | "Hours" | "Microseconds" | "Milliseconds" | "Minutes" | "Nanoseconds"
            | "Seconds" | "String" => sig(&[]),
            _ => None,
        }
    }

    fn call(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        let d = self.value;
        let in_units = |unit: i64| (d / unit) as f64 + (d % unit) as f64 / unit as f64;
        Ok(match name {
            "String" => Value::string(self.format()),
            "Abs" => duration(if d == i64::MIN { i64::MAX } else { d.abs() }),
            "Hours" => Value::Float(in_units(3_600_000_000_000)),
            "Minutes" => Value::Float(in_units(60_000_000_000)),
            "Seconds" => Value::Float(in_units(1_000_000_000)),
            "Milliseconds" => Value::Int64(d / 1_000_000),
            "Microseconds" => Value::Int64(d / 1_000),
            "Nanoseconds" => Value::Int64(d),
            "Truncate" => {
                let m = duration_of(&args[0]);
                duration(if m <= 0 { d } else { d - d % m })
            }
            "Round" => duration(round_duration(d, duration_of(&args[0]))),
            other => return Err(format!("no method {other}")),
        })
    }

    fn format(&self) -> String {
        if self.is_duration() {
            return format_duration(self.value as i128);
        }
        let first = usize::from(self.type_name == "time.Month");
        match usize::try_from(self.value)
            .ok()
            .and_then(|i| i.checked_sub(first))
            .and_then(|i| self.names.get(i))
        {
            Some(name) => (*name).to_owned(),
            None => format!("%!{}({})", &self.type_name[5..], self.value),
        }
    }

    fn stringer(&self) -> bool {
        true
    }

    fn to_data(&self) -> Value {
        self.underlying().unwrap_or_default()
    }

    fn underlying(&self) -> Option<Value> {
        Some(if self.is_duration() {
            Value::Int64(self.value)
        } else {
            Value::Int(self.value)
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `Duration.Round`, saturating like Go's.
fn round_duration(d: i64, m: i64) -> i64 {
    if m <= 0 {
        return d;
    }
    let less_than_half = |r: i64| (r as u64).wrapping_add(r as u64) < m as u64;
    let r = d % m;
    if d < 0 {
        let r = -r;
        if less_than_half(r) {
            return d + r;
        }
        return d.checked_sub(m - r).unwrap_or(i64::MIN);
    }
    if less_than_half(r) {
        return d - r;
    }
    d.checked_add(m - r).unwrap_or(i64::MAX)
}

/// A `*time.Location`.
#[derive(Debug, Clone)]
pub(crate) struct Location(pub(crate) Loc);

impl Object for Location {
    fn type_name(&self) -> String {
        "*time.Location".into()
    }

    fn kind(&self) -> &'static str {
        "ptr"
    }

    fn method(&self, name: &str) -> Option<MethodSig> {
        (name == "String").then_some(MethodSig {
            params: &[],
            variadic: None,
        })
    }

    fn call(&self, _name: &str, _args: &[Value]) -> Result<Value, String> {
        Ok(Value::string(self.0.name()))
    }

    fn format(&self) -> String {
        self.0.name()
    }

    fn stringer(&self) -> bool {
        true
    }

    fn to_data(&self) -> Value {
        // A struct of unexported fields.
        Value::empty_map()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> GoTime {
        let wall = chrono::NaiveDate::from_ymd_opt(y, mo, d)
            .unwrap()
            .and_hms_opt(h, mi, s)
            .unwrap();
        GoTime::date(wall, Loc::Fixed("".into(), 7200))
    }

    #[test]
    fn calendar_arithmetic_normalises_like_go() {
        let t = utc(2024, 10, 31, 13, 0, 0);
        assert_eq!(
            t.add_date(0, 1, 0).string(),
            "2024-12-01 13:00:00 +0200 +0200"
        );
        assert_eq!(
            t.add_date(0, -20, 1).string(),
            "2023-03-04 13:00:00 +0200 +0200"
        );
        assert_eq!(
            utc(2024, 2, 29, 0, 0, 0).add_date(1, 0, 0).string(),
            "2025-03-01 00:00:00 +0200 +0200"
        );
    }

    #[test]
    fn rounding_counts_from_the_zero_time() {
        let t = utc(2024, 2, 29, 13, 44, 15);
        assert_eq!(
            t.round(3_600_000_000_000, true).string(),
            "2024-02-29 14:00:00 +0200 +0200"
        );
        assert_eq!(
            t.round(3_600_000_000_000, false).string(),
            "2024-02-29 13:00:00 +0200 +0200"
        );
        assert_eq!(round_duration(90, 60), 120);
        assert_eq!(round_duration(-90, 60), -120);
        assert_eq!(round_duration(i64::MAX, 7), i64::MAX);
    }

    #[test]
    fn binary_encoding_is_gos() {
        let t = GoTime::at(DateTime::from_timestamp(0, 5).unwrap(), Loc::Utc);
        assert_eq!(
            t.marshal_binary(),
            [1, 0, 0, 0, 14, 119, 145, 247, 0, 0, 0, 0, 5, 255, 255]
        );
    }
}
