//! The API's `UpdateState` values (SEMANTICS §1), shared by runs, stages, groups, members, gates and
//! after-stage waits.

use std::fmt;

/// `UpdateState` of the Fleet API. Gates use `NotStarted` (not reached), `Pending`, `Skipped` and
/// `Completed` only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UpdateState {
    NotStarted,
    Running,
    Stopping,
    Stopped,
    Skipped,
    Failed,
    Pending,
    Completed,
}

impl UpdateState {
    pub const ALL: [UpdateState; 8] = [
        UpdateState::NotStarted,
        UpdateState::Running,
        UpdateState::Stopping,
        UpdateState::Stopped,
        UpdateState::Skipped,
        UpdateState::Failed,
        UpdateState::Pending,
        UpdateState::Completed,
    ];

    pub fn api_name(self) -> &'static str {
        match self {
            UpdateState::NotStarted => "NotStarted",
            UpdateState::Running => "Running",
            UpdateState::Stopping => "Stopping",
            UpdateState::Stopped => "Stopped",
            UpdateState::Skipped => "Skipped",
            UpdateState::Failed => "Failed",
            UpdateState::Pending => "Pending",
            UpdateState::Completed => "Completed",
        }
    }

    /// Terminal for a member: it will not be examined or started again (SEMANTICS §5.6).
    pub fn is_member_terminal(self) -> bool {
        matches!(self, UpdateState::Completed | UpdateState::Failed | UpdateState::Skipped)
    }

    /// States that carry a `completedTime` in status (SEMANTICS §11 "Status times").
    pub fn is_finished(self) -> bool {
        matches!(self, UpdateState::Completed | UpdateState::Failed | UpdateState::Skipped)
    }
}

impl fmt::Display for UpdateState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.api_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_completed_failed_and_skipped_are_terminal_and_finished() {
        use UpdateState::*;
        for state in UpdateState::ALL {
            let expected = matches!(state, Completed | Failed | Skipped);
            assert_eq!(state.is_member_terminal(), expected, "{state}");
            assert_eq!(state.is_finished(), expected, "{state}");
        }
    }

    #[test]
    fn states_print_their_api_names() {
        let names: Vec<String> = UpdateState::ALL.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            ["NotStarted", "Running", "Stopping", "Stopped", "Skipped", "Failed", "Pending", "Completed"]
        );
    }
}
