//! Who may decide a pending approval, and until when: one rule for the server's decision (checked
//! inside its transaction, engine/src/orchestrator/decide.rs), the abort of a turn, and the card's
//! buttons (app/src/components/tool_card.rs). Seeing an approval is a separate, simpler rule: its
//! owner and the admins (server/src/auth/mod.rs `can_see`).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a person may not decide a pending approval now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Its deadline passed: its timeout action applies, even before the sweeper got to it.
    OutOfTime,
    /// It was handed to the admins; only an admin may decide it (or stop its turn).
    WithTheAdmins { escalated_by: String },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfTime => f.write_str("this approval ran out of time; its timeout action applies"),
            Self::WithTheAdmins { escalated_by } => write!(f, "this approval is with the admins (escalated by {escalated_by})"),
        }
    }
}

/// Held by the admins: an escalated approval, for anyone who is not an admin. `escalated_by` is
/// who escalated it, `None` while it is not escalated.
pub fn held_by_admins(decider_is_admin: bool, escalated_by: Option<&str>) -> Option<Refusal> {
    match escalated_by {
        Some(by) if !decider_is_admin => Some(Refusal::WithTheAdmins { escalated_by: by.to_owned() }),
        _ => None,
    }
}

/// May this person decide the pending approval now?
pub fn may_decide(decider_is_admin: bool, escalated_by: Option<&str>, deadline_ms: i64, now_ms: i64) -> Result<(), Refusal> {
    if deadline_ms <= now_ms {
        return Err(Refusal::OutOfTime);
    }
    held_by_admins(decider_is_admin, escalated_by).map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_combination_of_role_escalation_and_time() {
        let with_admins = || Err(Refusal::WithTheAdmins { escalated_by: "bob".into() });
        // (admin, escalated, deadline passed) → outcome
        let table = [
            (false, false, false, Ok(())),
            (true, false, false, Ok(())),
            (false, true, false, with_admins()),
            (true, true, false, Ok(())),
            (false, false, true, Err(Refusal::OutOfTime)),
            (true, false, true, Err(Refusal::OutOfTime)),
            (false, true, true, Err(Refusal::OutOfTime)),
            (true, true, true, Err(Refusal::OutOfTime)),
        ];
        for (admin, escalated, late, expected) in table {
            let (deadline, now) = if late { (100, 100) } else { (101, 100) };
            assert_eq!(
                may_decide(admin, escalated.then_some("bob"), deadline, now),
                expected,
                "admin={admin} escalated={escalated} late={late}"
            );
        }
    }

    #[test]
    fn refusals_say_why() {
        assert_eq!(held_by_admins(false, Some("bob")).unwrap().to_string(), "this approval is with the admins (escalated by bob)");
        assert!(Refusal::OutOfTime.to_string().contains("timeout action"));
    }
}

/// What a decision must include, set per gate (`require_reason`, `allow_modification`) and kept
/// with the approval from the moment it is asked. The server refuses a decision that breaks them
/// (422); the card hides or requires what they say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DecisionRules {
    /// A rejection must say why.
    #[serde(default)]
    pub require_reason: bool,
    /// The arguments may be edited before approving.
    #[serde(default = "yes")]
    pub allow_modification: bool,
}

fn yes() -> bool {
    true
}

impl Default for DecisionRules {
    fn default() -> Self {
        Self { require_reason: false, allow_modification: true }
    }
}

/// A decision that breaks its approval's rules: which field, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breach {
    pub field: &'static str,
    pub message: &'static str,
}

impl DecisionRules {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// A rejection with this reason (already trimmed; `None` or blank: none given).
    pub fn check_rejection(&self, reason: Option<&str>) -> Result<(), Breach> {
        if self.require_reason && reason.is_none_or(|r| r.trim().is_empty()) {
            return Err(Breach { field: "reason", message: "this approval's gate requires a reason to reject" });
        }
        Ok(())
    }

    /// An approval with these arguments, against the ones the agent proposed.
    pub fn check_approval(&self, proposed: &Value, edited: Option<&Value>) -> Result<(), Breach> {
        if !self.allow_modification && edited.is_some_and(|args| args != proposed) {
            return Err(Breach { field: "args", message: "this approval's gate does not allow editing the arguments" });
        }
        Ok(())
    }
}

#[cfg(test)]
mod decision_rules_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_required_reason_must_say_something() {
        let rules = DecisionRules { require_reason: true, ..Default::default() };
        assert!(rules.check_rejection(None).is_err());
        assert!(rules.check_rejection(Some("  ")).is_err());
        assert!(rules.check_rejection(Some("over the limit")).is_ok());
        assert!(DecisionRules::default().check_rejection(None).is_ok());
    }

    #[test]
    fn without_modification_only_the_proposed_arguments_are_approved() {
        let rules = DecisionRules { allow_modification: false, ..Default::default() };
        let proposed = json!({ "order_id": 1001 });
        assert!(rules.check_approval(&proposed, None).is_ok());
        assert!(rules.check_approval(&proposed, Some(&json!({ "order_id": 1001 }))).is_ok());
        assert_eq!(rules.check_approval(&proposed, Some(&json!({ "order_id": 1002 }))).unwrap_err().field, "args");
        assert!(DecisionRules::default().check_approval(&proposed, Some(&json!({}))).is_ok());
    }

    #[test]
    fn old_events_read_as_the_default_rules() {
        assert_eq!(serde_json::from_value::<DecisionRules>(json!({})).unwrap(), DecisionRules::default());
    }
}
