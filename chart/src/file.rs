use bytes::Bytes;

/// A file inside a chart, named by its path relative to the chart root with `/` separators.
/// The contents are shared, not copied, when a chart is cloned (dependency aliases) or
/// its files are handed to templates as `.Files`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub name: String,
    pub data: Bytes,
}

impl File {
    pub fn new(name: impl Into<String>, data: impl Into<Bytes>) -> File {
        File {
            name: name.into(),
            data: data.into(),
        }
    }

    /// The contents as text; invalid UTF-8 is replaced, as Go's string conversion keeps
    /// bytes but every consumer here needs text.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        // `from_utf8` checks valid text several times faster than the lossy decoder,
        // which is only needed for the rare file that is not valid UTF-8.
        match std::str::from_utf8(&self.data) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(&self.data),
        }
    }
}
