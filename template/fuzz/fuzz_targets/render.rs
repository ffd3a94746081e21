//! Rendering whatever parses must never panic. Inputs that could legitimately run for
//! a long time (loops over large ranges, recursion) are skipped.

#![no_main]

use chartkit_template::{Entries, MapKind, TemplateSet, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.len() > 512
        || ["range", "template", "include", "tpl", "until", "seq", "repeat", "gen", "derive", "bcrypt", "htpasswd", "block", "now"]
            .iter()
            .any(|w| text.contains(w))
    {
        return;
    }
    let mut set = TemplateSet::new();
    if set.add("fuzz.yaml", text).is_err() {
        return;
    }
    let values = chartkit_yaml::parse_values("a: 1\nb: [x, 2.5, null]\nc: {d: true}\n").unwrap_or_default();
    let mut top = Entries::new();
    top.insert("Values".into(), Value::values_from_data(&values));
    let _ = set.render("fuzz.yaml", Value::map_of(MapKind::Values, top));
});
