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
    /// It was handed to a named user or group (a gate's `escalation_target`, or an escalation
    /// naming one); only its people, or an admin, may decide it.
    WithOthers { escalated_by: String, to: String },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfTime => f.write_str("this approval ran out of time; its timeout action applies"),
            Self::WithTheAdmins { escalated_by } => write!(f, "this approval is with the admins (escalated by {escalated_by})"),
            Self::WithOthers { escalated_by, to } => {
                write!(f, "this approval is with {to} (escalated by {escalated_by}); only {to} or an admin may decide it")
            }
        }
    }
}

/// Who a pending approval was handed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Escalation<'a> {
    pub by: &'a str,
    /// The named user or group and the people in it when it was escalated; `None`: the admins.
    pub to: Option<(&'a str, &'a [String])>,
}

/// Who is looking at an approval (the queue shows buttons by it; the server checks again).
#[derive(Clone, Debug, PartialEq)]
pub struct Viewer {
    pub name: String,
    pub is_admin: bool,
}

/// Who wants to decide.
#[derive(Clone, Copy, Debug)]
pub struct Decider<'a> {
    pub name: &'a str,
    pub is_admin: bool,
}

/// Held by others: an escalated approval, for anyone who is neither an admin nor one of the
/// people it was handed to. `None` while it is not escalated.
pub fn held_from(decider: Decider<'_>, escalation: Option<Escalation<'_>>) -> Option<Refusal> {
    let escalation = escalation.filter(|_| !decider.is_admin)?;
    match escalation.to {
        None => Some(Refusal::WithTheAdmins { escalated_by: escalation.by.to_owned() }),
        Some((_, people)) if people.iter().any(|p| p == decider.name) => None,
        Some((to, _)) => Some(Refusal::WithOthers { escalated_by: escalation.by.to_owned(), to: to.to_owned() }),
    }
}

/// May this person decide the pending approval now?
pub fn may_decide(decider: Decider<'_>, escalation: Option<Escalation<'_>>, deadline_ms: i64, now_ms: i64) -> Result<(), Refusal> {
    if deadline_ms <= now_ms {
        return Err(Refusal::OutOfTime);
    }
    held_from(decider, escalation).map_or(Ok(()), Err)
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
            let decider = Decider { name: "carol", is_admin: admin };
            let escalation = escalated.then_some(Escalation { by: "bob", to: None });
            assert_eq!(may_decide(decider, escalation, deadline, now), expected, "admin={admin} escalated={escalated} late={late}");
        }
    }

    #[test]
    fn an_approval_handed_to_a_group_is_decided_by_its_people_or_an_admin() {
        let finance = ["dora".to_owned(), "erin".to_owned()];
        let to_finance = Some(Escalation { by: "bob", to: Some(("finance", &finance)) });
        assert_eq!(held_from(Decider { name: "dora", is_admin: false }, to_finance), None);
        assert_eq!(held_from(Decider { name: "root", is_admin: true }, to_finance), None);
        let refusal = held_from(Decider { name: "bob", is_admin: false }, to_finance).unwrap();
        assert_eq!(refusal, Refusal::WithOthers { escalated_by: "bob".into(), to: "finance".into() });
        assert_eq!(refusal.to_string(), "this approval is with finance (escalated by bob); only finance or an admin may decide it");
    }

    #[test]
    fn refusals_say_why() {
        let held = held_from(Decider { name: "carol", is_admin: false }, Some(Escalation { by: "bob", to: None }));
        assert_eq!(held.unwrap().to_string(), "this approval is with the admins (escalated by bob)");
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
    /// Four-eyes: the person whose conversation made the call may not approve it; someone else
    /// must (an admin, or whoever it was handed to). They may still reject it.
    #[serde(default)]
    pub separate_requester: bool,
}

fn yes() -> bool {
    true
}

impl Default for DecisionRules {
    fn default() -> Self {
        Self { require_reason: false, allow_modification: true, separate_requester: false }
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

    /// Four-eyes: may `approver` approve a call made in `requester`'s conversation? (`Err`: why
    /// not, for a 403.)
    pub fn check_approver(&self, approver: &str, requester: Option<&str>) -> Result<(), String> {
        if self.separate_requester && requester.is_some_and(|r| r.eq_ignore_ascii_case(approver)) {
            return Err(format!(
                "four-eyes: {approver} asked for this call, so someone else must approve it (an admin, or whoever it is handed to); {approver} may still reject it"
            ));
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
    fn four_eyes_keeps_the_requester_from_approving_and_no_one_else() {
        let rules = DecisionRules { separate_requester: true, ..Default::default() };
        let refusal = rules.check_approver("alice", Some("alice")).unwrap_err();
        assert!(refusal.starts_with("four-eyes: alice asked for this call"), "{refusal}");
        assert!(rules.check_approver("Alice", Some("alice")).is_err(), "names are compared ignoring case");
        assert!(rules.check_approver("root", Some("alice")).is_ok());
        assert!(rules.check_approver("root", None).is_ok(), "a conversation without an owner has no requester to keep out");
        assert!(DecisionRules::default().check_approver("alice", Some("alice")).is_ok());
    }

    #[test]
    fn old_events_read_as_the_default_rules() {
        assert_eq!(serde_json::from_value::<DecisionRules>(json!({})).unwrap(), DecisionRules::default());
    }
}
