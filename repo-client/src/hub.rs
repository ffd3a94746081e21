//! `helm search hub`: Artifact Hub's Monocular-compatible search API
//! (`GET ENDPOINT/api/chartsvc/v1/charts/search?q=TERM`), read into the fields helm
//! prints.

/// The path of the search API under an endpoint.
pub const SEARCH_PATH: &str = "api/chartsvc/v1/charts/search";

/// One chart found, with the fields `helm search hub` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubChart {
    /// The package's page (Artifact Hub's `packageUrl`, else `ENDPOINT/charts/ID`).
    pub url: String,
    pub version: String,
    pub app_version: String,
    pub description: String,
    pub repository_url: String,
    pub repository_name: String,
}

/// Why a search failed.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    #[error("unable to create connection to \"{endpoint}\": {reason}")]
    Endpoint { endpoint: String, reason: String },
    #[error("unable to perform search against \"{endpoint}\": {reason}")]
    Search { endpoint: String, reason: String },
}

/// Go's `url.QueryEscape`: letters, digits and `-_.~` kept, spaces as `+`, every other
/// byte `%XX`.
fn query_escape(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Searches `endpoint` for `term`, as helm's Monocular client does.
pub fn search_hub(endpoint: &str, term: &str, user_agent: &str) -> Result<Vec<HubChart>, HubError> {
    let parsed = reqwest::Url::parse(endpoint).map_err(|e| HubError::Endpoint {
        endpoint: endpoint.to_owned(),
        reason: e.to_string(),
    })?;
    let mut url = parsed.clone();
    let base = parsed.path().trim_end_matches('/');
    url.set_path(&format!("{base}/{SEARCH_PATH}"));
    url.set_query(Some(&format!("q={}", query_escape(term))));
    let failed = |reason: String| HubError::Search {
        endpoint: endpoint.to_owned(),
        reason,
    };
    let client = reqwest::blocking::Client::builder()
        .user_agent(user_agent)
        .build()
        .map_err(|e| failed(chartkit_oci::registry::chain(&e)))?;
    let response = client
        .get(url.clone())
        .send()
        .map_err(|e| failed(chartkit_oci::registry::chain(&e)))?;
    if !response.status().is_success() {
        return Err(failed(format!(
            "failed to fetch {url} : {}",
            response.status()
        )));
    }
    let bytes = response
        .bytes()
        .map_err(|e| failed(chartkit_oci::registry::chain(&e)))?;
    let body: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| failed(format!("the answer from {url} is not JSON: {e}")))?;
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let results = body["data"].as_array().cloned().unwrap_or_default();
    Ok(results
        .iter()
        .map(|r| {
            let package_url = text(&r["artifactHub"]["packageUrl"]);
            let latest = &r["relationships"]["latestChartVersion"]["data"];
            HubChart {
                url: if package_url.is_empty() {
                    format!("{endpoint}/charts/{}", text(&r["id"]))
                } else {
                    package_url
                },
                version: text(&latest["version"]),
                app_version: text(&latest["app_version"]),
                description: text(&r["attributes"]["description"]),
                repository_url: text(&r["attributes"]["repo"]["url"]),
                repository_name: text(&r["attributes"]["repo"]["name"]),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_escaped_as_go_escapes_them() {
        assert_eq!(query_escape("nginx ingress/x*"), "nginx+ingress%2Fx%2A");
    }
}
