//! The labels users add to a release's records (`--labels`): never the ones the storage
//! driver sets itself, and on upgrade merged into the last revision's.

use std::collections::BTreeMap;

use chartkit_release::driver::SYSTEM_LABELS;

use crate::EngineError;

/// Refuses labels the storage driver owns: the record's own would overwrite them, and
/// helm refuses them in these words.
pub fn check_user_labels(labels: &BTreeMap<String, String>) -> Result<(), EngineError> {
    if labels.keys().any(|k| SYSTEM_LABELS.contains(&k.as_str())) {
        return Err(EngineError::msg(format!(
            "user supplied labels contains system reserved label name. System labels: [{}]",
            SYSTEM_LABELS.join(" ")
        )));
    }
    Ok(())
}

/// An upgrade's labels: the last revision's with the new ones over them, and any whose
/// value is the text `null` removed (how helm users unset a label).
pub(crate) fn merge_labels(
    last: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut merged = last.clone();
    merged.extend(new.iter().map(|(k, v)| (k.clone(), v.clone())));
    merged.retain(|_, v| v != "null");
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn reserved_labels_are_refused() {
        let error = check_user_labels(&map(&[("team", "a"), ("owner", "me")])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "user supplied labels contains system reserved label name. System labels: [name owner status version createdAt modifiedAt]"
        );
        assert!(check_user_labels(&map(&[("team", "a")])).is_ok());
    }

    #[test]
    fn new_labels_win_and_null_unsets() {
        let merged = merge_labels(
            &map(&[("a", "1"), ("b", "2")]),
            &map(&[("b", "null"), ("c", "3")]),
        );
        assert_eq!(merged, map(&[("a", "1"), ("c", "3")]));
        // A `null` with nothing to unset is dropped too, as in helm.
        assert_eq!(merge_labels(&map(&[]), &map(&[("x", "null")])), map(&[]));
    }
}
