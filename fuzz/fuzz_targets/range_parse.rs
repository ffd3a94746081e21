#![no_main]
//! Any text as a range, checked against a few versions.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(range) = chartkit_version::VersionRange::parse(text) {
        for v in ["0.0.0", "1.2.3", "1.2.3-rc.1", "v2", "10.0.0+meta"] {
            let _ = range.matches(&chartkit_version::Version::parse(v).unwrap());
        }
    }
});
