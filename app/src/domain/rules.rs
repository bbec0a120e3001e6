//! Who may decide a pending approval, and until when: one rule for the server's decision (checked
//! inside its transaction, engine/src/orchestrator/decide.rs), the abort of a turn, and the card's
//! buttons (app/src/components/tool_card.rs). Seeing an approval is a separate, simpler rule: its
//! owner and the admins (server/src/auth/mod.rs `can_see`).

use std::fmt;

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
