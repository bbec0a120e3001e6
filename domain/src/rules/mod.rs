//! Who may decide a pending approval, and until when: one rule for the server's decision (checked
//! inside its transaction, engine/src/orchestrator/decisions/authority.rs), the abort of a turn,
//! and the card's buttons (`offer`, in rules/offer.rs). Seeing an approval is a separate, simpler
//! rule: its owner and the admins (server/src/auth/mod.rs `can_see`).

mod offer;

use std::fmt;

pub use offer::{NoApprove, Offer, Place, offer};

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
    /// Its gate names who may decide it (`approvers`), and this person is not one of them.
    NotAnApprover { approvers: String },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfTime => f.write_str("this approval ran out of time; its timeout action applies"),
            Self::WithTheAdmins { escalated_by } => write!(f, "this approval is with the admins (escalated by {escalated_by})"),
            Self::WithOthers { escalated_by, to } => {
                write!(f, "this approval is with {to} (escalated by {escalated_by}); only {to} or an admin may decide it")
            }
            Self::NotAnApprover { approvers } => write!(f, "only {approvers} may decide this approval (its gate's approvers)"),
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

/// Who may decide an approval, from its gate's `approvers` as they stood when it was asked
/// (`group:finance`, `user:ada`, `role:admin`); kept with the approval and re-resolved when an
/// admin changes a group it names (engine/src/people/groups.rs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Approvers {
    /// As the gate names them.
    pub names: Vec<String>,
    /// The people those names stand for (group members and named users with an account).
    #[serde(default)]
    pub people: Vec<String>,
    /// Any admin may decide: the gate named `role:admin`, or its names stood for no one (then the
    /// admins decide rather than nobody).
    #[serde(default)]
    pub admins: bool,
    /// When several gates match the call: each one's share, every one of which must be met
    /// before the call runs (the fields above are then their union: who may decide at all).
    /// Empty: one gate, whose approvers are the fields above.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub each: Vec<Share>,
}

/// One matching gate's share of who must approve a call (docs/security.md, "A call's
/// requirement"): `quorum` distinct people among its approvers. One person's approval counts
/// for every share that includes them, and once within each.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Share {
    /// The gate.
    pub gate: String,
    /// How many distinct people of this share must approve.
    pub quorum: u32,
    /// Its approvers as the gate names them; empty: anyone who may decide the call.
    #[serde(default)]
    pub names: Vec<String>,
    #[serde(default)]
    pub people: Vec<String>,
    #[serde(default)]
    pub admins: bool,
}

impl Share {
    pub fn includes(&self, decider: Decider<'_>) -> bool {
        self.names.is_empty() || (self.admins && decider.is_admin) || self.people.iter().any(|p| p.eq_ignore_ascii_case(decider.name))
    }

    /// How many of `approved` (distinct people) count toward it.
    fn counted(&self, approved: &[Decider<'_>]) -> u32 {
        approved.iter().filter(|d| self.includes(**d)).count() as u32
    }

    /// "finance", "2 of finance", "anyone".
    fn label(&self) -> String {
        match (self.names.is_empty(), self.quorum) {
            (true, 0 | 1) => "anyone".to_owned(),
            (true, n) => format!("{n} people"),
            (false, 0 | 1) => names_label(&self.names, self.admins),
            (false, n) => format!("{n} of {}", names_label(&self.names, self.admins)),
        }
    }
}

/// "finance, ada or an admin" for approver names (`group:finance`, `user:ada`, `role:admin`).
fn names_label(names: &[String], admins: bool) -> String {
    let mut names: Vec<&str> =
        names.iter().filter(|n| *n != "role:admin").map(|n| n.split_once(':').map_or(n.as_str(), |(_, v)| v)).collect();
    if admins {
        names.push("an admin");
    }
    match names.as_slice() {
        [] => "no one".into(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

impl Approvers {
    pub fn includes(&self, decider: Decider<'_>) -> bool {
        (self.admins && decider.is_admin) || self.people.iter().any(|p| p.eq_ignore_ascii_case(decider.name))
    }

    /// "finance, ada or an admin", for people; for several gates, every share: "finance and bob".
    pub fn label(&self) -> String {
        match self.each.as_slice() {
            [] => names_label(&self.names, self.admins),
            shares => {
                let labels: Vec<String> = shares.iter().map(Share::label).collect();
                match labels.as_slice() {
                    [one] => one.clone(),
                    [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
                    [] => unreachable!("shares is not empty"),
                }
            }
        }
    }

    /// Whether `approved` (distinct people, each counted once) meet every gate's share; with one
    /// gate, always (its quorum is counted by the caller).
    pub fn met(&self, approved: &[Decider<'_>]) -> bool {
        self.each.iter().all(|share| share.counted(approved) >= share.quorum)
    }

    /// The shares `approved` do not meet yet, as people read them ("bob", "2 of finance").
    pub fn still_needed(&self, approved: &[Decider<'_>]) -> Vec<String> {
        self.each.iter().filter(|share| share.counted(approved) < share.quorum).map(Share::label).collect()
    }

    /// Whether `decider`'s approval would count toward a share `approved` do not meet yet.
    pub fn adds_to(&self, approved: &[Decider<'_>], decider: Decider<'_>) -> bool {
        self.each.is_empty() || self.each.iter().any(|share| share.counted(approved) < share.quorum && share.includes(decider))
    }
}

/// What deciding a call requires beyond a click, for the doors that show it as text (email, Slack,
/// the signed-link page, A2A, AG-UI, MCP): "Needs: an admin and bob; 2 different people; not the requester
/// (four-eyes); a fresh sign-in". `None` when anyone who sees it may decide it alone.
pub fn needs(approvers: Option<&Approvers>, rules: &DecisionRules) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(approvers) = approvers {
        parts.push(approvers.label());
    }
    if rules.quorum > 1 && approvers.is_none_or(|a| a.each.is_empty()) {
        parts.push(format!("{} different people", rules.quorum));
    }
    if rules.separate_requester {
        parts.push("not the requester (four-eyes)".to_owned());
    }
    if rules.reauthenticate_secs.is_some() {
        parts.push("a fresh sign-in".to_owned());
    }
    (!parts.is_empty()).then(|| format!("Needs: {}", parts.join("; ")))
}

/// Who is looking at an approval (the queue shows buttons by it; the server checks again).
#[derive(Clone, Debug, PartialEq)]
pub struct Viewer {
    pub name: String,
    pub is_admin: bool,
    /// The people they decide in place of (delegations in force).
    pub stands_in_for: Vec<String>,
}

/// Who wants to decide.
#[derive(Clone, Copy, Debug)]
pub struct Decider<'a> {
    pub name: &'a str,
    pub is_admin: bool,
}

/// Held by others: an escalated approval, for anyone who is neither an admin nor one of the
/// people it was handed to; before any escalation, one whose gate names its `approvers`, for
/// anyone not among them. An escalation replaces the approvers (it is how an owner or an admin
/// hands a call over when its approvers do not answer).
pub fn held_from(decider: Decider<'_>, escalation: Option<Escalation<'_>>, approvers: Option<&Approvers>) -> Option<Refusal> {
    let Some(escalation) = escalation else {
        return approvers.filter(|a| !a.includes(decider)).map(|a| Refusal::NotAnApprover { approvers: a.label() });
    };
    if decider.is_admin {
        return None;
    }
    match escalation.to {
        None => Some(Refusal::WithTheAdmins { escalated_by: escalation.by.to_owned() }),
        Some((_, people)) if people.iter().any(|p| p == decider.name) => None,
        Some((to, _)) => Some(Refusal::WithOthers { escalated_by: escalation.by.to_owned(), to: to.to_owned() }),
    }
}

/// May this person decide the pending approval now?
pub fn may_decide(
    decider: Decider<'_>,
    escalation: Option<Escalation<'_>>,
    approvers: Option<&Approvers>,
    deadline_ms: i64,
    now_ms: i64,
) -> Result<(), Refusal> {
    if deadline_ms <= now_ms {
        return Err(Refusal::OutOfTime);
    }
    held_from(decider, escalation, approvers).map_or(Ok(()), Err)
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
            assert_eq!(may_decide(decider, escalation, None, deadline, now), expected, "admin={admin} escalated={escalated} late={late}");
        }
    }

    #[test]
    fn an_approval_handed_to_a_group_is_decided_by_its_people_or_an_admin() {
        let finance = ["dora".to_owned(), "erin".to_owned()];
        let to_finance = Some(Escalation { by: "bob", to: Some(("finance", &finance)) });
        assert_eq!(held_from(Decider { name: "dora", is_admin: false }, to_finance, None), None);
        assert_eq!(held_from(Decider { name: "root", is_admin: true }, to_finance, None), None);
        let refusal = held_from(Decider { name: "bob", is_admin: false }, to_finance, None).unwrap();
        assert_eq!(refusal, Refusal::WithOthers { escalated_by: "bob".into(), to: "finance".into() });
        assert_eq!(refusal.to_string(), "this approval is with finance (escalated by bob); only finance or an admin may decide it");
    }

    #[test]
    fn a_gates_approvers_decide_until_someone_hands_it_over() {
        let finance = Approvers {
            names: vec!["group:finance".into(), "user:ada".into()],
            people: vec!["dora".into(), "ada".into()],
            admins: false,
            each: Vec::new(),
        };
        let decide = |name, is_admin, escalation| held_from(Decider { name, is_admin }, escalation, Some(&finance));
        assert_eq!(decide("dora", false, None), None);
        assert_eq!(decide("Ada", false, None), None, "names match ignoring case");
        let refusal = decide("root", true, None).expect("an admin the gate does not name is refused");
        assert_eq!(refusal.to_string(), "only finance or ada may decide this approval (its gate's approvers)");
        assert!(decide("bob", false, None).is_some());
        // Handed to the admins: the approvers' list no longer applies.
        let to_admins = Some(Escalation { by: "alice", to: None });
        assert_eq!(decide("root", true, to_admins), None);
        assert!(decide("dora", false, to_admins).is_some());
        let with_admins = Approvers {
            names: vec!["group:finance".into(), "role:admin".into()],
            people: vec!["dora".into()],
            admins: true,
            each: Vec::new(),
        };
        assert_eq!(held_from(Decider { name: "root", is_admin: true }, None, Some(&with_admins)), None);
        assert_eq!(with_admins.label(), "finance or an admin");
        assert_eq!(held_from(Decider { name: "bob", is_admin: false }, None, None), None, "no approvers: anyone who sees it");
    }

    #[test]
    fn several_gates_each_need_their_share_and_one_person_counts_for_every_share_naming_them() {
        let share = |gate: &str, quorum, names: &[&str], people: &[&str]| Share {
            gate: gate.into(),
            quorum,
            names: names.iter().map(|n| n.to_string()).collect(),
            people: people.iter().map(|n| n.to_string()).collect(),
            admins: false,
        };
        let finance = share("guarded", 1, &["group:finance"], &["dora", "bob"]);
        let bob = share("big-refunds", 1, &["user:bob"], &["bob"]);
        let both = Approvers {
            names: vec!["group:finance".into(), "user:bob".into()],
            people: vec!["dora".into(), "bob".into()],
            admins: false,
            each: vec![finance.clone(), bob.clone()],
        };
        let who = |name| Decider { name, is_admin: false };
        assert_eq!(both.label(), "finance and bob");
        assert!(!both.met(&[]));
        assert!(!both.met(&[who("dora")]), "finance alone is not bob");
        assert_eq!(both.still_needed(&[who("dora")]), ["bob"]);
        assert!(both.met(&[who("bob")]), "bob is in finance: his one approval meets both shares");
        assert!(both.met(&[who("dora"), who("Bob")]));
        assert!(!both.adds_to(&[who("dora")], who("erin")), "a second finance approver adds nothing");
        assert!(both.adds_to(&[who("dora")], who("bob")));
        let two = Approvers { each: vec![share("big", 2, &["group:finance"], &["dora", "bob", "erin"]), bob], ..both.clone() };
        assert_eq!(two.label(), "2 of finance and bob");
        assert!(!two.met(&[who("bob")]), "bob counts once within a share");
        assert!(two.met(&[who("bob"), who("erin")]));
        let anyone = Approvers { each: vec![share("refunds", 1, &[], &[]), finance], ..both };
        assert!(anyone.met(&[who("dora")]), "a gate without approvers is met by whoever may decide");
        assert_eq!(anyone.label(), "anyone and finance");
        assert!(Approvers::default().met(&[]), "one gate: the caller counts its quorum");
    }

    #[test]
    fn what_a_call_needs_reads_as_one_line() {
        let rules = DecisionRules::default();
        assert_eq!(needs(None, &rules), None, "anyone who sees it decides alone");
        let bob = Approvers { names: vec!["user:bob".into()], people: vec!["bob".into()], admins: false, each: Vec::new() };
        let strict = DecisionRules { quorum: 2, separate_requester: true, reauthenticate_secs: Some(60), ..rules };
        assert_eq!(needs(Some(&bob), &strict).unwrap(), "Needs: bob; 2 different people; not the requester (four-eyes); a fresh sign-in");
        assert_eq!(needs(None, &DecisionRules { quorum: 3, ..rules }).unwrap(), "Needs: 3 different people");
    }

    #[test]
    fn refusals_say_why() {
        let held = held_from(Decider { name: "carol", is_admin: false }, Some(Escalation { by: "bob", to: None }), None);
        assert_eq!(held.unwrap().to_string(), "this approval is with the admins (escalated by bob)");
        assert!(Refusal::OutOfTime.to_string().contains("timeout action"));
    }
}

/// What a decision must include, set per gate (`require_reason`, `allow_modification`) and kept
/// with the approval from the moment it is asked. The server refuses a decision that breaks them
/// (422); the card hides or requires what they say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// How many distinct people must approve before the call runs (the gate's `quorum`); one
    /// rejection rejects it.
    #[serde(default = "one")]
    pub quorum: u32,
    /// May be approved "for good" (a standing grant). False for a gate that names approvers,
    /// asks a quorum or four-eyes, allows no edits or requires a reason, unless the gate says
    /// `grantable = true` ([`DecisionRules::restriction`]).
    #[serde(default = "yes")]
    pub grantable: bool,
    /// The gate's `reauthenticate = true`: whoever decides must have signed in within this many
    /// seconds (a session older than that signs in again first; tokens, links and chat apps
    /// cannot decide it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reauthenticate_secs: Option<u32>,
}

fn yes() -> bool {
    true
}

fn one() -> u32 {
    1
}

impl Default for DecisionRules {
    fn default() -> Self {
        Self {
            require_reason: false,
            allow_modification: true,
            separate_requester: false,
            quorum: 1,
            grantable: true,
            reauthenticate_secs: None,
        }
    }
}

/// How far apart the clocks of two replicas may be (ms): a sign-in recorded on one may look
/// that far ahead on another.
pub const CLOCK_SKEW_MS: i64 = 60_000;

impl DecisionRules {
    /// Whether a person who last signed in at `signed_in_at` (ms; `None`: through no sign-in at
    /// all, e.g. a token or a link) may decide at `now` under these rules; the refusal says what
    /// to do. Sign-in times are kept no later than when they were recorded, so one ahead of `now`
    /// by more than the clocks of two replicas may differ ([`CLOCK_SKEW_MS`]) came from a clock
    /// that cannot be trusted, and is no fresh sign-in.
    pub fn check_sign_in(&self, signed_in_at: Option<i64>, now: i64) -> Result<(), String> {
        let Some(within) = self.reauthenticate_secs else { return Ok(()) };
        match signed_in_at {
            Some(at) if at <= now.saturating_add(CLOCK_SKEW_MS) && now.saturating_sub(at) <= i64::from(within) * 1000 => Ok(()),
            Some(_) => Err(format!(
                "this gate asks for a fresh sign-in: sign in again (within the last {}) to decide it",
                crate::time::duration_words(i64::from(within) * 1000)
            )),
            None => {
                Err("this gate asks for a fresh sign-in: decide it in Countersign after signing in, not with a token, link or chat app"
                    .into())
            }
        }
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

    /// Why a gate with these rules (and `approvers`) asks each call on its own, so that no one
    /// approval of it may become a standing grant; `None`: it may. A gate's `grantable = true`
    /// overrides this (then only its deciders can grant, since only they can approve).
    pub fn restriction(&self, has_approvers: bool) -> Option<&'static str> {
        if has_approvers {
            Some("its gate names who approves each call (approvers)")
        } else if self.quorum > 1 {
            Some("its gate needs several approvers for each call (quorum)")
        } else if self.separate_requester {
            Some("its gate needs someone other than the requester to approve each call (separate_requester)")
        } else if !self.allow_modification {
            Some("its gate allows no edits, so each call is approved as proposed (allow_modification = false)")
        } else if self.require_reason {
            Some("its gate requires a reason for each rejection (require_reason)")
        } else if self.reauthenticate_secs.is_some() {
            Some("its gate asks for a fresh sign-in for each decision (reauthenticate)")
        } else {
            None
        }
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
    fn a_gate_that_asks_for_a_fresh_sign_in_takes_only_a_recent_one() {
        let rules = DecisionRules { reauthenticate_secs: Some(300), ..DecisionRules::default() };
        let now = 1_000_000_000;
        assert_eq!(rules.check_sign_in(Some(now - 300_000), now), Ok(()));
        let stale = rules.check_sign_in(Some(now - 300_001), now).unwrap_err();
        assert!(stale.contains("sign in again (within the last 5 minutes)"), "{stale}");
        let none = rules.check_sign_in(None, now).unwrap_err();
        assert!(none.contains("not with a token, link or chat app"), "{none}");
        // A sign-in time ahead of the clock by more than replicas' clocks differ counts as no
        // fresh one, however far ahead.
        assert_eq!(rules.check_sign_in(Some(now), now), Ok(()));
        assert_eq!(rules.check_sign_in(Some(now + CLOCK_SKEW_MS), now), Ok(()));
        for ahead in [CLOCK_SKEW_MS + 1, 300_000, 3_600_000, i64::MAX - now] {
            let future = rules.check_sign_in(Some(now + ahead), now).unwrap_err();
            assert!(future.contains("sign in again"), "{ahead}: {future}");
        }
        // Any sign-in, or none, decides a gate that does not ask.
        assert_eq!(DecisionRules::default().check_sign_in(None, now), Ok(()));
        assert_eq!(rules.restriction(false), Some("its gate asks for a fresh sign-in for each decision (reauthenticate)"));
    }

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
    fn a_gate_that_restricts_who_or_what_may_not_be_granted() {
        assert_eq!(DecisionRules::default().restriction(false), None);
        assert!(DecisionRules::default().restriction(true).unwrap().contains("approvers"));
        let strict = [
            (DecisionRules { quorum: 2, ..Default::default() }, "quorum"),
            (DecisionRules { separate_requester: true, ..Default::default() }, "separate_requester"),
            (DecisionRules { allow_modification: false, ..Default::default() }, "allow_modification"),
            (DecisionRules { require_reason: true, ..Default::default() }, "require_reason"),
        ];
        for (rules, key) in strict {
            assert!(rules.restriction(false).is_some_and(|why| why.contains(key)), "{key}");
        }
    }

    #[test]
    fn old_events_read_as_the_default_rules() {
        assert_eq!(serde_json::from_value::<DecisionRules>(json!({})).unwrap(), DecisionRules::default());
    }
}
