//! Parsing arbitrary text must never panic, and every parse error must carry Go's
//! message shape.

#![no_main]

use chartkit_template::TemplateSet;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut set = TemplateSet::new();
    if let Err(e) = set.add("fuzz.yaml", text) {
        let message = e.to_string();
        assert!(message.starts_with("template: fuzz.yaml:"), "{message}");
        let _ = e.helm_message();
    }
});
