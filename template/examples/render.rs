//! Renders a template given on the command line with values from a YAML file, for
//! trying things out: `cargo run -p chartkit-template --example render -- 'TEMPLATE' [values.yaml]`.

use chartkit_template::{Entries, MapKind, TemplateSet, Value};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(text) = args.next() else {
        eprintln!("usage: render TEMPLATE [VALUES_FILE]");
        std::process::exit(2);
    };
    let values = match args.next() {
        Some(path) => {
            let yaml = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                eprintln!("{path}: {e}");
                std::process::exit(1)
            });
            chartkit_yaml::parse_values(&yaml).unwrap_or_else(|e| {
                eprintln!("{path}: {e}");
                std::process::exit(1)
            })
        }
        None => chartkit_yaml::Map::new(),
    };
    let mut top = Entries::new();
    top.insert("Values".into(), Value::values_from_data(&values));
    let mut set = TemplateSet::new();
    if let Err(e) = set.add("template", &text) {
        eprintln!("{}", e.helm_message());
        std::process::exit(1);
    }
    match set.render("template", Value::map_of(MapKind::Values, top)) {
        Ok(out) => print!("{out}"),
        Err(e) => {
            eprintln!("{}", e.helm_message());
            std::process::exit(1);
        }
    }
}
