//! A release's status, as Helm's `common.Status` spells it.

use std::fmt;

/// Where a release revision is in its lifecycle. A status helm does not know is kept as
/// written, so a record round-trips.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Status {
    /// Also what an empty or missing status reads as in the lists helm prints (`""`).
    #[default]
    Empty,
    Unknown,
    Deployed,
    Uninstalled,
    Superseded,
    Failed,
    Uninstalling,
    PendingInstall,
    PendingUpgrade,
    PendingRollback,
    Other(String),
}

impl Status {
    pub fn parse(text: &str) -> Status {
        match text {
            "" => Status::Empty,
            "unknown" => Status::Unknown,
            "deployed" => Status::Deployed,
            "uninstalled" => Status::Uninstalled,
            "superseded" => Status::Superseded,
            "failed" => Status::Failed,
            "uninstalling" => Status::Uninstalling,
            "pending-install" => Status::PendingInstall,
            "pending-upgrade" => Status::PendingUpgrade,
            "pending-rollback" => Status::PendingRollback,
            other => Status::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Status::Empty => "",
            Status::Unknown => "unknown",
            Status::Deployed => "deployed",
            Status::Uninstalled => "uninstalled",
            Status::Superseded => "superseded",
            Status::Failed => "failed",
            Status::Uninstalling => "uninstalling",
            Status::PendingInstall => "pending-install",
            Status::PendingUpgrade => "pending-upgrade",
            Status::PendingRollback => "pending-rollback",
            Status::Other(s) => s,
        }
    }

    /// An install, upgrade or rollback is under way.
    pub fn is_pending(&self) -> bool {
        matches!(
            self,
            Status::PendingInstall | Status::PendingUpgrade | Status::PendingRollback
        )
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "",
            "unknown",
            "deployed",
            "uninstalled",
            "superseded",
            "failed",
            "uninstalling",
            "pending-install",
            "pending-upgrade",
            "pending-rollback",
            "mystery",
        ] {
            assert_eq!(Status::parse(name).as_str(), name);
        }
        assert!(Status::parse("pending-upgrade").is_pending());
        assert!(!Status::parse("deployed").is_pending());
    }
}
