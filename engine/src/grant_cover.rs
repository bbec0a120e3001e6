//! Whether a grant covers a call (docs/security.md, "Grants"): a countersignature covers exactly
//! what the gate that asked for it allowed. A standing grant covers a call only when the same
//! gate, for the same agent, under the same configuration version stops it, within the bounds on
//! the arguments it was given with; a plan's step only the exact call that was approved. Pure:
//! the task driver reads the grants (store/src/grants.rs) and asks.

use std::fmt;

use domain::wire::GrantArgs;
use serde_json::{Value, json};

use crate::agents::Gate;

/// A grant as recorded, as far as covering a call goes.
#[derive(Clone, Copy, Debug)]
pub struct Terms<'a> {
    /// The gate it was given under (none: made before grants named one).
    pub gate: Option<&'a str>,
    pub agent: Option<&'a str>,
    pub policy_version: Option<&'a str>,
    /// A plan's step: exactly these arguments, in this task.
    pub step: Option<(&'a str, &'a Value)>,
    /// `{"exact": args}` or `{"at_most": args}` ([`bounds`]).
    pub bounds: Option<&'a Value>,
}

/// The call a grant might cover: the gate that stops it and who asks.
#[derive(Clone, Copy, Debug)]
pub struct Asking<'a> {
    pub gate: &'a Gate,
    pub agent: &'a str,
    pub policy_version: &'a str,
    pub task: &'a str,
    pub args: &'a Value,
}

/// Why a grant does not cover a call (the card's "Why?" says it).
#[derive(Clone, Debug, PartialEq)]
pub enum Uncovered {
    /// Made before grants were bound to their gate.
    Unbound,
    /// Made under another configuration: grants lapse when it changes.
    OtherVersion,
    OtherAgent {
        granted: String,
    },
    OtherGate {
        granted: String,
    },
    /// The gate asks each call on its own ([`domain::rules::DecisionRules::restriction`]).
    Restricted,
    /// A plan's step, for another task or other arguments.
    OtherCall,
    /// Outside the bounds it was given with.
    OutOfBounds(String),
    /// Whoever gave it could not approve this call alone now ([`giver_may_decide`]).
    NotTheGiversToGive(String),
}

impl fmt::Display for Uncovered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unbound => f.write_str("it was made before grants were bound to their gate"),
            Self::OtherVersion => f.write_str("it was made under another version of the configuration"),
            Self::OtherAgent { granted } => write!(f, "it was given to agent {granted}"),
            Self::OtherGate { granted } => write!(f, "it was given under gate \"{granted}\""),
            Self::Restricted => f.write_str("this gate asks each call on its own"),
            Self::OtherCall => f.write_str("it lets through one other call of an approved plan"),
            Self::OutOfBounds(why) | Self::NotTheGiversToGive(why) => f.write_str(why),
        }
    }
}

/// The bounds a grant is given with, over the approved arguments: `exact` keeps them all,
/// `at_most` caps the amounts (`amount`, `…_amount`) at what was approved and leaves the rest
/// free. `Err`: there is no amount to cap.
pub fn bounds(scope: GrantArgs, approved: &Value) -> Result<Option<Value>, String> {
    match scope {
        GrantArgs::Any => Ok(None),
        GrantArgs::Exact => Ok(Some(json!({ "exact": approved }))),
        GrantArgs::AtMost => {
            let amounts: serde_json::Map<String, Value> = approved
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, v)| (*k == "amount" || k.ends_with("_amount")) && v.is_number())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            match amounts.is_empty() {
                true => Err("the call has no amount to cap: use \"any\" or \"exact\"".into()),
                false => Ok(Some(json!({ "at_most": amounts }))),
            }
        }
    }
}

/// Whether the grant covers the call; `Err`: why not.
pub fn covers(grant: Terms<'_>, call: Asking<'_>) -> Result<(), Uncovered> {
    if grant.policy_version != Some(call.policy_version) {
        return Err(Uncovered::OtherVersion);
    }
    match grant.agent {
        Some(agent) if agent == call.agent => {}
        Some(agent) => return Err(Uncovered::OtherAgent { granted: agent.to_owned() }),
        None => return Err(Uncovered::Unbound),
    }
    // Nobody's approval opens a gate that asks each call on its own (a plan's approval neither).
    if !call.gate.rules.grantable {
        return Err(Uncovered::Restricted);
    }
    if let Some((task, args)) = grant.step {
        return match task == call.task && args == call.args {
            true => Ok(()),
            false => Err(Uncovered::OtherCall),
        };
    }
    match grant.gate {
        Some(gate) if gate == call.gate.name => {}
        Some(gate) => return Err(Uncovered::OtherGate { granted: gate.to_owned() }),
        None => return Err(Uncovered::Unbound),
    }
    grant.bounds.map_or(Ok(()), |b| within(b, call.args).map_err(Uncovered::OutOfBounds))
}

/// Whether the person who gave a grant (or approved the plan a step is part of) could approve
/// this call alone, now, under what it requires (`gate`, its resolved `approvers`): they are
/// enabled (`None`: no longer), one of its approvers — or, when it names none, one who sees the
/// call (its requester, who owns the conversation, or an admin) —, not its requester under
/// four-eyes, and it asks no quorum and no fresh sign-in. A grant carries one person's
/// authority, never more.
pub fn giver_may_decide(
    gate: &Gate,
    giver: Option<domain::rules::Decider<'_>>,
    requester: Option<&str>,
    approvers: Option<&domain::rules::Approvers>,
) -> Result<(), Uncovered> {
    let refuse = |why: String| Err(Uncovered::NotTheGiversToGive(why));
    let Some(giver) = giver else { return refuse("whoever gave it can no longer decide (their account is disabled)".into()) };
    if gate.rules.quorum > 1 {
        return refuse(format!("this call needs {} approvers, and {} is one", gate.rules.quorum, giver.name));
    }
    if gate.rules.reauthenticate_secs.is_some() {
        return refuse("this call asks for a fresh sign-in for its own decision".into());
    }
    if gate.rules.check_approver(giver.name, requester).is_err() {
        return refuse(format!("four-eyes: {} asked for this call, so someone else must approve it", giver.name));
    }
    match approvers {
        Some(approvers) if !approvers.includes(giver) || !approvers.met(&[giver]) => {
            refuse(format!("{} may not approve this call alone (it needs {})", giver.name, approvers.label()))
        }
        // No approvers named: whoever sees the call decides it. Someone who could approve the
        // plan it is a step of may not see the conversation at all.
        None if !giver.is_admin && requester != Some(giver.name) => {
            refuse(format!("{} may not approve this call alone (only its requester and the admins see it)", giver.name))
        }
        _ => Ok(()),
    }
}

fn within(bounds: &Value, args: &Value) -> Result<(), String> {
    if let Some(exact) = bounds.get("exact") {
        return match exact == args {
            true => Ok(()),
            false => Err("it covers only the exact arguments approved".into()),
        };
    }
    let Some(at_most) = bounds.get("at_most").and_then(Value::as_object) else {
        return Err("its bounds are not understood".into());
    };
    for (field, limit) in at_most {
        match (limit.as_f64(), args.get(field).and_then(Value::as_f64)) {
            (Some(limit), Some(v)) if v <= limit => {}
            (Some(limit), Some(v)) => return Err(format!("{field} {v} is above the {limit} approved")),
            _ => return Err(format!("it covers only calls with a {field} of at most {limit}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use domain::{TimeoutAction, rules::DecisionRules};

    use super::*;
    use crate::agents::GateRule;

    fn gate(name: &str, grantable: bool) -> Gate {
        let rules = DecisionRules { grantable, ..DecisionRules::default() };
        Gate::plain(name, GateRule::All, Duration::from_secs(60), TimeoutAction::Reject, rules)
    }

    fn standing<'a>(gate: &'a str, bounds: Option<&'a Value>) -> Terms<'a> {
        Terms { gate: Some(gate), agent: Some("support"), policy_version: Some("v1"), step: None, bounds }
    }

    fn asking<'a>(gate: &'a Gate, args: &'a Value) -> Asking<'a> {
        Asking { gate, agent: "support", policy_version: "v1", task: "t1", args }
    }

    #[test]
    fn a_standing_grant_covers_only_its_own_gate_agent_and_version() {
        let refunds = gate("refunds", true);
        let big = gate("big-refunds", true);
        let args = json!({ "order_id": 1001, "amount": 150 });
        assert_eq!(covers(standing("refunds", None), asking(&refunds, &args)), Ok(()));
        let other = covers(standing("refunds", None), asking(&big, &args)).unwrap_err();
        assert_eq!(other, Uncovered::OtherGate { granted: "refunds".into() });
        assert_eq!(other.to_string(), "it was given under gate \"refunds\"");
        let worker = Asking { agent: "worker", ..asking(&refunds, &args) };
        assert_eq!(covers(standing("refunds", None), worker), Err(Uncovered::OtherAgent { granted: "support".into() }));
        let changed = Asking { policy_version: "v2", ..asking(&refunds, &args) };
        assert_eq!(covers(standing("refunds", None), changed), Err(Uncovered::OtherVersion));
        let old = Terms { gate: None, ..standing("refunds", None) };
        assert_eq!(covers(old, asking(&refunds, &args)), Err(Uncovered::Unbound));
    }

    #[test]
    fn no_grant_opens_a_gate_that_asks_each_call() {
        let strict = gate("refunds", false);
        let args = json!({ "order_id": 1001 });
        assert_eq!(covers(standing("refunds", None), asking(&strict, &args)), Err(Uncovered::Restricted));
        let step = Terms { step: Some(("t1", &args)), gate: Some("plans"), ..standing("plans", None) };
        assert_eq!(covers(step, asking(&strict, &args)), Err(Uncovered::Restricted), "nor does a plan's approval");
    }

    #[test]
    fn a_plans_step_covers_exactly_its_call_in_its_task() {
        let refunds = gate("refunds", true);
        let approved = json!({ "order_id": 1001, "amount": 5 });
        let step = Terms { step: Some(("t1", &approved)), gate: Some("plans"), ..standing("plans", None) };
        assert_eq!(covers(step, asking(&refunds, &json!({ "amount": 5, "order_id": 1001 }))), Ok(()));
        assert_eq!(covers(step, asking(&refunds, &json!({ "order_id": 1001, "amount": 6 }))), Err(Uncovered::OtherCall));
        let later = Asking { task: "t2", ..asking(&refunds, &approved) };
        assert_eq!(covers(step, later), Err(Uncovered::OtherCall));
    }

    #[test]
    fn a_grant_carries_only_what_its_giver_could_approve_alone() {
        let alice = domain::rules::Decider { name: "alice", is_admin: false };
        let dora = domain::rules::Decider { name: "dora", is_admin: false };
        let finance =
            domain::rules::Approvers { names: vec!["group:finance".into()], people: vec!["dora".into()], admins: false, each: Vec::new() };
        let plain = gate("refunds", true);
        assert_eq!(giver_may_decide(&plain, Some(alice), Some("alice"), None), Ok(()));
        // Without approvers only those who see the call decide it: its requester and the admins.
        let bob = domain::rules::Decider { name: "bob", is_admin: false };
        let elsewhere = giver_may_decide(&plain, Some(bob), Some("alice"), None).unwrap_err();
        assert_eq!(elsewhere.to_string(), "bob may not approve this call alone (only its requester and the admins see it)");
        let root = domain::rules::Decider { name: "root", is_admin: true };
        assert_eq!(giver_may_decide(&plain, Some(root), Some("alice"), None), Ok(()));
        assert!(giver_may_decide(&plain, None, Some("alice"), None).is_err(), "a disabled giver gives nothing");
        let guarded = Gate { rules: DecisionRules { separate_requester: true, ..plain.rules }, ..plain.clone() };
        let own = giver_may_decide(&guarded, Some(alice), Some("alice"), Some(&finance)).unwrap_err();
        assert!(own.to_string().starts_with("four-eyes: alice asked"), "{own}");
        let not_finance = giver_may_decide(&guarded, Some(alice), Some("bob"), Some(&finance)).unwrap_err();
        assert_eq!(not_finance.to_string(), "alice may not approve this call alone (it needs finance)");
        assert_eq!(giver_may_decide(&guarded, Some(dora), Some("alice"), Some(&finance)), Ok(()));
        let quorum = Gate { rules: DecisionRules { quorum: 2, ..plain.rules }, ..plain.clone() };
        assert!(giver_may_decide(&quorum, Some(dora), Some("alice"), None).is_err());
        let fresh = Gate { rules: DecisionRules { reauthenticate_secs: Some(60), ..plain.rules }, ..plain };
        assert!(giver_may_decide(&fresh, Some(dora), Some("alice"), None).is_err());
    }

    #[test]
    fn bounds_keep_a_grant_to_the_approved_arguments_or_less() {
        let refunds = gate("refunds", true);
        let approved = json!({ "order_id": 1001, "amount": 5 });
        let at_most = bounds(GrantArgs::AtMost, &approved).unwrap().unwrap();
        let exact = bounds(GrantArgs::Exact, &approved).unwrap().unwrap();
        assert_eq!(bounds(GrantArgs::Any, &approved), Ok(None));
        assert!(bounds(GrantArgs::AtMost, &json!({ "order_id": 1001 })).is_err(), "nothing to cap");
        let check = |b: &Value, args: Value| covers(standing("refunds", Some(b)), asking(&refunds, &args));
        assert_eq!(check(&at_most, json!({ "order_id": 1001, "amount": 4.5 })), Ok(()));
        assert_eq!(check(&at_most, json!({ "order_id": 1002, "amount": 5 })), Ok(()), "other arguments are free");
        let above = check(&at_most, json!({ "order_id": 1001, "amount": 150 })).unwrap_err();
        assert_eq!(above.to_string(), "amount 150 is above the 5 approved");
        assert!(check(&at_most, json!({ "order_id": 1001 })).is_err(), "a missing amount is not within bounds");
        assert_eq!(check(&exact, approved.clone()), Ok(()));
        assert!(check(&exact, json!({ "order_id": 1001, "amount": 4 })).is_err());
        assert!(check(&json!({ "other": 1 }), approved.clone()).is_err(), "unknown bounds cover nothing");
    }
}
