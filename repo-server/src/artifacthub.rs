//! `/artifacthub-repo.yml`: the file Artifact Hub reads to learn which of its repositories
//! this one is (and so to show it as verified), made from `--artifact-hub-repo-id` as
//! ChartMuseum makes it.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::api::AppState;
use crate::error::ApiError;

/// The file's text: `repositoryID: ID`, written as ChartMuseum writes it (sigs.k8s.io/yaml,
/// that is go-yaml v2 after a JSON round trip), so an ID that needs quoting is quoted alike.
pub fn repository_yaml(id: &str) -> String {
    let mut map = chartkit_yaml::Map::new();
    map.insert(
        "repositoryID".to_owned(),
        chartkit_yaml::Value::String(id.to_owned()),
    );
    chartkit_yaml::to_yaml(&chartkit_yaml::Value::Map(map))
}

pub async fn repository_file(State(state): State<AppState>) -> Result<Response, ApiError> {
    let id = state
        .policy
        .artifact_hub_repo_id
        .as_deref()
        .ok_or_else(|| {
            // ChartMuseum registers the route only with an ID.
            ApiError::not_found("not found: this server has no --artifact-hub-repo-id")
        })?;
    Ok((
        [(header::CONTENT_TYPE, "application/x-yaml")],
        repository_yaml(id),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_written_as_chartmuseum_writes_it() {
        assert_eq!(
            repository_yaml("6b4ad6c4-2a1f-4b59-9c3e-1f0e9b6e5a2d"),
            "repositoryID: 6b4ad6c4-2a1f-4b59-9c3e-1f0e9b6e5a2d\n"
        );
        // go-yaml quotes what would read back as another type.
        assert_eq!(repository_yaml("123"), "repositoryID: \"123\"\n");
        assert_eq!(repository_yaml("true"), "repositoryID: \"true\"\n");
    }
}
