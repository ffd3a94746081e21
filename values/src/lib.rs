//! Helm's values pipeline: the user's flags, coalescing with chart defaults, dependency
//! processing and schema validation. Everything here works on `chartkit_yaml::Map`,
//! Helm's model of values (numbers from YAML are float64, `--set` integers int64).

pub mod coalesce;
pub mod dependencies;
pub mod golog;
pub mod options;
pub mod path;
pub mod schema;
pub mod strvals;

pub use coalesce::{CoalesceError, coalesce_tables, coalesce_values, merge_tables, merge_values};
pub use dependencies::{is_compatible_range, process_dependencies};
pub use options::{OptionsError, ValueOptions, merge_maps};
pub use schema::{validate_against_schema, validate_chart_values};
pub use strvals::{
    StrvalsError, parse_set, parse_set_file, parse_set_json, parse_set_literal, parse_set_string,
};
