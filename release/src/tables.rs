//! The RESOURCES section of `helm status`: each group of objects as kubectl prints the
//! server's Tables, under `==> version/Kind`.

use std::collections::BTreeMap;

use serde_json::Value as Json;

/// Go's tabwriter as kubectl sets it up: cells padded to the widest in their column plus
/// three spaces, at least six wide; the last cell of a line is not padded.
fn tabwrite(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter(|r| c + 1 < r.len())
                .map(|r| r[c].chars().count() + 3)
                .max()
                .unwrap_or(0)
                .max(6)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        for (c, cell) in row.iter().enumerate() {
            out.push_str(cell);
            if c + 1 < row.len() {
                let pad = widths[c].saturating_sub(cell.chars().count());
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push('\n');
    }
    out
}

/// A cell as kubectl prints it.
fn cell(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        Json::Null => "<none>".to_string(),
        Json::Number(n) => n.to_string(),
        Json::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// What kubectl's printer remembers between tables: a table with the same columns as
/// the last one printed gets no header of its own.
#[derive(Default)]
struct Printer {
    last_columns: Option<Json>,
    printed_headers: bool,
}

impl Printer {
    fn print(&mut self, table: &Json, out: &mut String) {
        let columns = table["columnDefinitions"].clone();
        let mut headers = true;
        if self.printed_headers && self.last_columns.as_ref() == Some(&columns) {
            headers = false;
        }
        if self.last_columns.as_ref() != Some(&columns) {
            self.last_columns = Some(columns.clone());
            self.printed_headers = false;
        }
        let rows = table["rows"].as_array().cloned().unwrap_or_default();
        if !rows.is_empty() {
            self.printed_headers = true;
        }
        // Only the columns of priority 0: the others are `-o wide`'s.
        let shown: Vec<(usize, String)> = columns
            .as_array()
            .map(|c| {
                c.iter()
                    .enumerate()
                    .filter(|(_, d)| d["priority"].as_i64().unwrap_or(0) == 0)
                    .map(|(i, d)| (i, d["name"].as_str().unwrap_or("").to_uppercase()))
                    .collect()
            })
            .unwrap_or_default();
        let mut lines = Vec::new();
        if headers && !rows.is_empty() {
            lines.push(shown.iter().map(|(_, n)| n.clone()).collect());
        }
        for row in &rows {
            let cells = row["cells"].as_array().cloned().unwrap_or_default();
            lines.push(
                shown
                    .iter()
                    .map(|(i, _)| cells.get(*i).map(cell).unwrap_or_default())
                    .collect(),
            );
        }
        out.push_str(&tabwrite(&lines));
    }
}

/// The section's body: for each key, `==> key`, its objects' tables, a blank line.
/// Objects the server did not give as a Table are left out.
pub fn resources_text(resources: &BTreeMap<String, Vec<Json>>) -> String {
    let mut printer = Printer::default();
    let mut out = String::new();
    for (key, objects) in resources {
        out.push_str(&format!("==> {key}\n"));
        for table in objects.iter().filter(|o| o["kind"] == "Table") {
            printer.print(table, &mut out);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table(names: &[&str], rows: &[&[Json]]) -> Json {
        json!({
            "kind": "Table",
            "columnDefinitions": names.iter().map(|n| json!({"name": n, "priority": 0}))
                .chain([json!({"name": "Selector", "priority": 1})]).collect::<Vec<_>>(),
            "rows": rows.iter().map(|r| json!({"cells": r})).collect::<Vec<_>>(),
        })
    }

    /// Each object's table is laid out on its own (kubectl's printer gets a fresh
    /// tabwriter per object), and one with the same columns as the last gets no header.
    #[test]
    fn tables_print_as_kubectl_prints_them() {
        let mut resources = BTreeMap::new();
        resources.insert(
            "v1/Deployment".to_string(),
            vec![table(
                &["Name", "Ready", "Up-to-date", "Available", "Age"],
                &[&[
                    json!("web-my-chart"),
                    json!("0/1"),
                    json!(1),
                    json!(0),
                    json!("0s"),
                    json!("app=web"),
                ]],
            )],
        );
        let services = |name: &str| {
            table(
                &[
                    "Name",
                    "Type",
                    "Cluster-IP",
                    "External-IP",
                    "Port(s)",
                    "Age",
                ],
                &[&[
                    json!(name),
                    json!("ClusterIP"),
                    json!("10.102.160.116"),
                    json!("<none>"),
                    json!("80/TCP"),
                    json!("0s"),
                    json!(null),
                ]],
            )
        };
        resources.insert(
            "v1/Service".to_string(),
            vec![services("web"), services("web-metrics")],
        );
        assert_eq!(
            resources_text(&resources),
            "==> v1/Deployment\n\
             NAME           READY   UP-TO-DATE   AVAILABLE   AGE\n\
             web-my-chart   0/1     1            0           0s\n\
             \n\
             ==> v1/Service\n\
             NAME   TYPE        CLUSTER-IP       EXTERNAL-IP   PORT(S)   AGE\n\
             web    ClusterIP   10.102.160.116   <none>        80/TCP    0s\n\
             web-metrics   ClusterIP   10.102.160.116   <none>   80/TCP   0s\n\
             \n"
        );
    }
}
