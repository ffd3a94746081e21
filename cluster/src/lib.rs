//! Everything chartkit needs to talk to a Kubernetes cluster, on kube-rs: connecting with
//! helm's flags ([`connect`]), mapping kinds to API resources ([`discovery`]), splitting
//! rendered manifests into objects ([`manifest`]; Helm's kind order is
//! `chartkit_render`'s), applying and deleting them ([`apply`], as helm's field
//! manager, its client-side fields handed to its applies first by [`csa_upgrade`]),
//! waiting until they are ready ([`readiness`]), merging client-side updates by the
//! server's patch schema ([`strategic`]), and port-forward tunnels to a service's,
//! deployment's or pod's port for the length of a command ([`portforward`]). No
//! printing: progress goes through callbacks the command line draws.

pub mod apply;
pub mod connect;
pub mod csa_upgrade;
pub mod discovery;
pub mod kube_error;
pub mod manifest;
pub mod names;
pub mod portforward;
pub mod readiness;
pub mod strategic;

pub use apply::{Applier, ApplyError, Outcome, Propagation, Target, Written};
pub use connect::{ConnectError, Connection, KubeOptions, KubeconfigSource};
pub use discovery::{Discovery, DiscoveryError, MappingError};
pub use manifest::Object;
pub use readiness::{Progress, State, WaitError};
