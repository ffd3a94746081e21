//! Go's text/template with Sprig and Helm's template functions, reproducing what
//! `helm template` renders byte for byte.
//!
//! - [`TemplateSet`]: parse a chart's templates once (`define`s are shared across the
//!   set, later definitions override earlier ones in Helm's order), then render any
//!   template with its own data.
//! - [`Value`]: the runtime value: shared, mutable maps with Go's reference semantics,
//!   typed numbers and slices, and host [`Object`]s with methods.
//! - Errors read like Go's (`template: x.yaml:3:12: executing "x.yaml" at <.a.b>: ...`);
//!   [`Error::helm_message`] applies Helm's rewording.

mod budget;
mod complex;
mod error;
mod exec;
mod format;
pub mod funcs;
pub mod gostr;
pub mod objects;
pub mod parse;
pub mod print;
mod set;
mod value;

pub use budget::{DEFAULT_MEMORY_LIMIT, MEMORY_LIMIT_EXCEEDED, MemoryBudget};
pub use error::{Error, ExecError, ParseError};
pub use exec::MissingKey;
pub use format::sprintf;
pub use gostr::{Output, go_lossy, go_yaml_decode};
pub use set::{ROOT_NAME, TemplateSet, helm_parse_order};
pub use value::{
    Entries, Field, List, ListKind, MapCell, MapKind, MethodSig, Object, Ty, Value, format_struct,
};

/// How many threads may usefully run at once here, asked once per process (the answer
/// comes from the affinity mask and cgroup limits, which takes a few system calls).
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
