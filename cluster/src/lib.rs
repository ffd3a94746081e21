//! Everything chartkit needs to talk to a Kubernetes cluster, on kube-rs: connecting with
//! helm's flags ([`connect`]), mapping kinds to API resources ([`discovery`]), splitting
//! rendered manifests into objects ([`manifest`]; Helm's kind order is `chartkit_render`'s), applying and deleting them ([`apply`]), and
//! waiting until they are ready ([`readiness`]), and merging client-side updates by the
//! server's patch schema ([`strategic`]). No printing: progress goes through
//! callbacks the command line draws.

pub mod apply;
pub mod connect;
pub mod discovery;
pub mod manifest;
pub mod readiness;
pub mod strategic;

pub use apply::{Applier, ApplyError, Outcome, Propagation, Target, Written};
pub use connect::{ConnectError, Connection, KubeOptions, KubeconfigSource};
pub use discovery::{Discovery, DiscoveryError, MappingError};
pub use manifest::Object;
pub use readiness::{Progress, State, WaitError};
