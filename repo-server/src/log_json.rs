//! The server's log as ChartMuseum's `--log-json` writes it: one JSON object per line
//! from zap's development configuration, `L` the level (`DEBUG`, `INFO`, `WARN`,
//! `ERROR`), `T` the local time (`2006-01-02T15:04:05.000Z0700`), `M` the message, then
//! the event's fields in order, numbers as numbers.

use std::io::Write;
use std::sync::Mutex;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// A tracing layer writing zap's JSON lines to `out`.
pub struct ZapJson<W> {
    out: Mutex<W>,
}

impl<W: Write> ZapJson<W> {
    pub fn new(out: W) -> ZapJson<W> {
        ZapJson {
            out: Mutex::new(out),
        }
    }
}

/// The event's fields in the order given, its message kept apart.
#[derive(Default)]
struct Fields {
    message: String,
    values: Vec<(String, serde_json::Value)>,
}

impl Fields {
    fn put(&mut self, field: &Field, value: serde_json::Value) {
        if field.name() == "message" {
            self.message = match value {
                serde_json::Value::String(text) => text,
                other => other.to_string(),
            };
        } else {
            self.values.push((field.name().to_owned(), value));
        }
    }
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, serde_json::Value::String(format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, serde_json::Value::String(value.to_owned()));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, value.into());
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.put(field, serde_json::Value::String(value.to_string()));
    }
}

/// zap's capital level names; it has no trace level.
fn level_name(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "ERROR",
        Level::WARN => "WARN",
        Level::INFO => "INFO",
        _ => "DEBUG",
    }
}

/// One line for an event at `time`.
pub fn line(
    level: &Level,
    time: chrono::DateTime<chrono::Local>,
    message: &str,
    fields: Vec<(String, serde_json::Value)>,
) -> String {
    let mut object = serde_json::Map::new();
    object.insert("L".to_owned(), level_name(level).into());
    // zap's ISO8601 encoder: Go's `Z0700`, so `Z` in UTC and `+0100` elsewhere.
    let time = if time.offset().local_minus_utc() == 0 {
        time.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
    } else {
        time.format("%Y-%m-%dT%H:%M:%S%.3f%z").to_string()
    };
    object.insert("T".to_owned(), time.into());
    object.insert("M".to_owned(), message.into());
    for (key, value) in fields {
        object.insert(key, value);
    }
    let mut text = serde_json::Value::Object(object).to_string();
    text.push('\n');
    text
}

impl<S, W> Layer<S> for ZapJson<W>
where
    S: Subscriber,
    W: Write + Send + 'static,
{
    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let text = line(
            event.metadata().level(),
            chrono::Local::now(),
            &fields.message,
            fields.values,
        );
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        // A log that cannot be written has nowhere to report it.
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn events_become_zap_lines_with_fields_in_order() {
        let out = Shared::default();
        let subscriber = tracing_subscriber::registry().with(ZapJson::new(out.clone()));
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(
                path = "/x",
                statusCode = 404u16,
                latency = 12i64,
                "[3] Request served"
            );
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let line: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        let keys: Vec<&str> = line
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["L", "T", "M", "path", "statusCode", "latency"]);
        assert_eq!(line["L"], "WARN");
        assert_eq!(line["M"], "[3] Request served");
        assert_eq!(line["statusCode"], 404);
        assert_eq!(line["latency"], 12);
    }

    #[test]
    fn times_are_zaps_iso8601() {
        use chrono::TimeZone;
        let utc = chrono::Local
            .timestamp_millis_opt(1_700_000_000_123)
            .unwrap();
        let text = line(&Level::INFO, utc, "m", Vec::new());
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let time = value["T"].as_str().unwrap();
        assert_eq!(
            time.len(),
            "2023-11-14T22:13:20.123".len() + if time.ends_with('Z') { 1 } else { 5 }
        );
        assert!(time.contains(".123"), "{time}");
    }
}
