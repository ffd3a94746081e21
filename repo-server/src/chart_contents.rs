//! ChartMuseum's `/api/charts/NAME/VERSION/templates` and `/values`: what is inside a
//! stored package, read from the package itself.

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;

use crate::api::AppState;
use crate::error::{ApiError, json};

/// The package of NAME VERSION (`latest` for the newest) loaded with every file kept.
async fn load(
    state: &AppState,
    name: &str,
    version: &str,
) -> Result<chartkit_chart::Chart, ApiError> {
    let not_found = || ApiError::not_found("chart version not found");
    let entry = state
        .repo
        .chart_version(name, version)
        .ok_or_else(not_found)?;
    let file = state
        .repo
        .file_of(name, entry.version())
        .ok_or_else(not_found)?;
    load_file(state, &file).await
}

/// A stored package file loaded with every file kept, inflated and parsed off the async
/// workers: what ChartMuseum's content routes and the web view read.
pub(crate) async fn load_file(
    state: &AppState,
    file: &str,
) -> Result<chartkit_chart::Chart, ApiError> {
    let data = state
        .repo
        .storage()
        .get(file)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("{file} not found")))?;
    let options = chartkit_chart::LoadOptions {
        retain: chartkit_chart::archive::Retain::All,
        ..chartkit_chart::LoadOptions::for_index(state.repo.rules().limits)
    };
    let file = file.to_owned();
    tokio::task::spawn_blocking(move || chartkit_chart::load_archive(&data, &file, &options))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

/// `{"templates":[{"name":...,"data":BASE64}...],"values":{...}}`, as ChartMuseum writes
/// Helm's chart.File list and values map.
pub async fn templates(
    State(state): State<AppState>,
    Path((name, version)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let chart = load(&state, &name, &version).await?;
    let mut out = String::from(r#"{"templates":["#);
    for (i, file) in chart.templates.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(r#"{"name":"#);
        chartkit_yaml::gojson::write_string(&mut out, &file.name);
        out.push_str(r#","data":""#);
        out.push_str(&base64::engine::general_purpose::STANDARD.encode(&file.data));
        out.push_str("\"}");
    }
    out.push_str(r#"],"values":"#);
    chartkit_yaml::gojson::write_value(&mut out, &chartkit_yaml::Value::Map(chart.values));
    out.push('}');
    Ok(json(StatusCode::OK, out))
}

/// The package's values.yaml as it is stored.
pub async fn values(
    State(state): State<AppState>,
    Path((name, version)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let chart = load(&state, &name, &version).await?;
    let file = chart
        .raw
        .into_iter()
        .find(|f| f.name == chartkit_chart::VALUES_FILE)
        .ok_or_else(|| ApiError::not_found("values.yaml not found"))?;
    Ok(([(header::CONTENT_TYPE, "application/yaml")], file.data).into_response())
}
