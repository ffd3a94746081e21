#![no_main]
//! Any bytes: parse as an index, and when that works, write and read back the same index.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(loaded) = chartkit_index::parse_index(data, "fuzz") {
        let yaml = chartkit_index::to_yaml(&loaded.index);
        let again = chartkit_index::parse_index(yaml.as_bytes(), "again");
        assert!(again.is_ok(), "our own output must read back: {again:?}");
        let compact = chartkit_index::compact::encode(
            &loaded.index,
            chartkit_index::compact::SourceStamp { sha256: [0; 32], size: 0, file_stamp: 0 },
        );
        if let Ok(opened) = chartkit_index::compact::CompactIndex::open(compact) {
            for name in loaded.index.entries.keys() {
                let _ = opened.get(name, "");
            }
        }
    }
});
