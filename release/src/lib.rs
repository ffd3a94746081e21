//! Helm's release records: the model as Helm 4 stores it ([`model`]), the storage codec
//! ([`codec`]), the Secret and ConfigMap objects records live in ([`driver`]), and
//! [`Storage`], the record store over a Kubernetes client. The queries helm's read-only
//! commands make (list, history, get) and the shapes they print live in [`query`] and
//! [`views`].

pub mod codec;
pub mod driver;
mod json;
pub mod model;
pub mod status;
pub mod time;

pub use codec::CodecError;
pub use driver::Driver;
pub use json::{FieldTypeError, write_json};
pub use model::{
    Chart, Dependency, File, Hook, HookExecution, Info, Lock, Maintainer, Metadata, Release,
};
pub use status::Status;
pub use time::{GoTime, LocalZone};
pub mod query;
pub mod resources;
pub mod storage;
pub mod tables;
pub mod views;

pub use storage::{Storage, StorageError};
