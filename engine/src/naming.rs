//! Release names helm makes up for `install`: `--generate-name` and `--name-template`.

use chartkit_template::{TemplateSet, Value};

use crate::EngineError;

/// `--generate-name`: the last element of the chart as given (`./web-1.2.0.tgz`,
/// `repo/web`), cut at its first dot, then a dash and the Unix time, as helm builds it.
/// A chart given as `.` is named `chart`.
pub fn generated_name(chart_argument: &str, unix_seconds: i64) -> String {
    let trimmed = chart_argument.trim_end_matches('/');
    // Go's filepath.Base: "" is "." and "///" is "/".
    let base = if chart_argument.is_empty() {
        "."
    } else if trimmed.is_empty() {
        "/"
    } else {
        trimmed.rsplit('/').next().unwrap_or(trimmed)
    };
    let base = if base == "." { "chart" } else { base };
    let base = base.split('.').next().unwrap_or(base);
    format!("{base}-{unix_seconds}")
}

/// `--name-template`: the template executed with no data, so a field reads as Go's
/// `<no value>` (which the release name check then refuses, as helm's does).
pub fn template_name(template: &str) -> Result<String, EngineError> {
    const NAME: &str = "name-template";
    let mut set = TemplateSet::new();
    set.add(NAME, template)
        .map_err(|e| EngineError::msg(e.to_string()))?;
    set.execute(NAME, Value::Nil)
        .map_err(|e| EngineError::msg(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_follow_the_chart_argument() {
        assert_eq!(generated_name("./web", 7), "web-7");
        assert_eq!(generated_name("web/", 7), "web-7");
        assert_eq!(generated_name("repo/podinfo", 7), "podinfo-7");
        assert_eq!(generated_name("/tmp/web-1.2.0.tgz", 7), "web-1-7");
        assert_eq!(generated_name(".", 7), "chart-7");
        assert_eq!(
            generated_name("https://charts.example.com/nginx-1.0.0.tgz", 7),
            "nginx-1-7"
        );
    }

    #[test]
    fn name_templates_render_with_sprig_and_no_data() {
        assert_eq!(
            template_name("{{ \"web\" }}-{{ add 1 2 }}").unwrap(),
            "web-3"
        );
        assert_eq!(template_name("{{ .Foo }}").unwrap(), "<no value>");
        let error = template_name("{{ bad").unwrap_err().to_string();
        assert!(error.starts_with("template: name-template:1:"), "{error}");
    }
}
