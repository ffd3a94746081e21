/// A file inside a chart, named by its path relative to the chart root with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub name: String,
    pub data: Vec<u8>,
}

impl File {
    pub fn new(name: impl Into<String>, data: impl Into<Vec<u8>>) -> File {
        File {
            name: name.into(),
            data: data.into(),
        }
    }

    /// The contents as text; invalid UTF-8 is replaced, as Go's string conversion keeps
    /// bytes but every consumer here needs text.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.data)
    }
}
