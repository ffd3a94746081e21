//! Building chart archives entry by entry, including hostile ones.

use std::io::Write;

/// One tar entry to write.
pub enum Entry<'a> {
    File(&'a str, &'a [u8]),
    Dir(&'a str),
    Symlink(&'a str, &'a str),
    HardLink(&'a str, &'a str),
    CharDevice(&'a str),
    BlockDevice(&'a str),
    Fifo(&'a str),
}

/// Writes a gzipped tar with exactly these entries, bypassing the `tar` crate's path
/// checks so that absolute and `..` paths can be expressed.
pub fn build(entries: &[Entry<'_>]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    for entry in entries {
        let (name, kind, data, link): (&str, tar::EntryType, &[u8], Option<&str>) = match entry {
            Entry::File(name, data) => (name, tar::EntryType::Regular, data, None),
            Entry::Dir(name) => (name, tar::EntryType::Directory, b"", None),
            Entry::Symlink(name, target) => (name, tar::EntryType::Symlink, b"", Some(target)),
            Entry::HardLink(name, target) => (name, tar::EntryType::Link, b"", Some(target)),
            Entry::CharDevice(name) => (name, tar::EntryType::Char, b"", None),
            Entry::BlockDevice(name) => (name, tar::EntryType::Block, b"", None),
            Entry::Fifo(name) => (name, tar::EntryType::Fifo, b"", None),
        };
        let mut header = tar::Header::new_gnu();
        {
            let raw = header.as_old_mut();
            raw.name = [0; 100];
            raw.name[..name.len()].copy_from_slice(name.as_bytes());
            if let Some(link) = link {
                raw.linkname = [0; 100];
                raw.linkname[..link.len()].copy_from_slice(link.as_bytes());
            }
        }
        header.set_entry_type(kind);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append(&header, data).expect("append tar entry");
    }
    let gz = builder.into_inner().expect("finish tar");
    gz.finish().expect("finish gzip")
}

/// A minimal valid Chart.yaml for a chart called `name`.
pub fn chart_yaml(name: &str) -> String {
    format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
}

/// Writes bytes to a file, creating parents.
pub fn write(path: &std::path::Path, bytes: &[u8]) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create parent");
    }
    let mut file = std::fs::File::create(path).expect("create file");
    file.write_all(bytes).expect("write file");
}
