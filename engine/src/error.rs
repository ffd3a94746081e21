use chartkit_cluster::manifest::ManifestError;
use chartkit_cluster::{ApplyError, WaitError};
use chartkit_release::StorageError;
use chartkit_render::RenderError;

/// Why a release operation failed. The messages are helm's where helm has one.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Render(#[from] RenderError),
    // Boxed: these two are large, and every engine result carries the error type.
    #[error(transparent)]
    Apply(Box<ApplyError>),
    #[error(transparent)]
    Wait(Box<WaitError>),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The API server's answer, in its words.
    #[error("{0}")]
    Kube(String),
    /// A request that got no answer (the server down, refusing the connection or the TLS
    /// handshake), kept whole so the command line can say what to check.
    #[error("{}", chartkit_cluster::kube_error::describe(.0))]
    Unreachable(#[source] Box<kube::Error>),
    /// The release's newest revision is pending and no operation holds the release.
    #[error("{0}")]
    Stuck(Box<crate::Stuck>),
    /// Anything else, already worded for the user.
    #[error("{0}")]
    Message(String),
}

impl EngineError {
    pub(crate) fn msg(text: impl Into<String>) -> EngineError {
        EngineError::Message(text.into())
    }

    /// The error with words in front, keeping the message (`failed pre-install: ...`).
    pub(crate) fn context(self, words: &str) -> EngineError {
        EngineError::Message(format!("{words}: {self}"))
    }
}

impl From<kube::Error> for EngineError {
    fn from(error: kube::Error) -> Self {
        if chartkit_cluster::kube_error::is_unreachable(&error) {
            return EngineError::Unreachable(Box::new(error));
        }
        EngineError::Kube(chartkit_cluster::kube_error::describe(&error))
    }
}

impl From<chartkit_cluster::MappingError> for EngineError {
    fn from(error: chartkit_cluster::MappingError) -> Self {
        EngineError::Apply(Box::new(ApplyError::Mapping(error)))
    }
}

impl From<ApplyError> for EngineError {
    fn from(error: ApplyError) -> Self {
        EngineError::Apply(Box::new(error))
    }
}

impl From<WaitError> for EngineError {
    fn from(error: WaitError) -> Self {
        EngineError::Wait(Box::new(error))
    }
}
