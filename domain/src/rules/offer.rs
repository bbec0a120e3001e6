//! Which decision buttons a person is offered on a pending approval: one answer for the card,
//! the queue row, Approve All, the composer's waiting line and the links the server issues, from
//! the rules the server enforces when the decision arrives (`held_from`, four-eyes, the quorum,
//! the gate's `allow_modification` and `grantable`). Offering less than allowed is harmless;
//! offering more shows a button the server answers with 403, which this keeps from happening.

use super::{Decider, Escalation, Refusal, Viewer, held_from};
use crate::fold::CardApproval;

/// Where the approval is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// In the chat that made the call.
    Chat,
    /// In the approval queue (an admin there decides other people's calls).
    Queue,
}

/// Why Approve is not offered to someone who may still reject.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoApprove {
    /// Four-eyes (`separate_requester`): they asked for the call; someone else must approve it.
    FourEyes,
    /// A quorum: they approved already and it waits for the others.
    ApprovedAlready,
}

/// What the person looking may press.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Offer {
    /// Reject and Defer (every decision needs this).
    pub decide: bool,
    /// Approve, approve links and Approve All.
    pub approve: bool,
    /// Edit the arguments before approving.
    pub edit: bool,
    /// "Always allow" (a grant).
    pub grant: bool,
    /// "Hand to admins".
    pub hand_over: bool,
    /// Why Approve is missing while Reject is there.
    pub no_approve: Option<NoApprove>,
    /// Why nothing is offered: someone else holds it. (`None` with nothing offered: it is
    /// answered in the chat with yes or no.)
    pub held: Option<Refusal>,
}

impl Offer {
    /// Nothing to press (a call that no longer waits).
    pub fn nothing() -> Self {
        Self { decide: false, approve: false, edit: false, grant: false, hand_over: false, no_approve: None, held: None }
    }
}

/// What `viewer` may press on `approval` (pending), shown at `place`; `requested`: the viewer
/// asked for the call (owns its chat); `grantable_tool`: the tool is one a grant can cover.
pub fn offer(viewer: &Viewer, requested: bool, approval: &CardApproval, place: Place, grantable_tool: bool) -> Offer {
    let escalation = approval
        .escalated_by
        .as_deref()
        .map(|by| Escalation { by, to: approval.escalated_to.as_deref().map(|to| (to, approval.deciders.as_slice())) });
    // The viewer acts as themself or as anyone they stand in for (a delegation); held only if
    // held as every one of them.
    let as_viewer = Decider { name: &viewer.name, is_admin: viewer.is_admin };
    let principals = viewer.stands_in_for.iter().map(|name| Decider { name, is_admin: false });
    let refusals: Vec<Refusal> = std::iter::once(as_viewer)
        .chain(principals)
        .map(|d| held_from(d, escalation, approval.approvers.as_ref()))
        .collect::<Option<_>>()
        .unwrap_or_default();
    let held = refusals.into_iter().next();
    let decide = held.is_none() && !approval.in_chat;
    let approved_already = std::iter::once(&viewer.name)
        .chain(&viewer.stands_in_for)
        .any(|me| approval.approved_by.iter().any(|p| p.eq_ignore_ascii_case(me)));
    let no_approve = if approval.rules.separate_requester && requested {
        Some(NoApprove::FourEyes)
    } else if approved_already {
        Some(NoApprove::ApprovedAlready)
    } else {
        None
    };
    let approve = decide && no_approve.is_none();
    Offer {
        decide,
        approve,
        edit: approve && approval.rules.allow_modification,
        grant: approve && grantable_tool && approval.rules.grantable && !(place == Place::Queue && viewer.is_admin),
        hand_over: decide && escalation.is_none() && !viewer.is_admin,
        no_approve: no_approve.filter(|_| decide),
        held: held.filter(|_| !approval.in_chat),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Approvers, DecisionRules};

    fn viewer(name: &str, is_admin: bool) -> Viewer {
        Viewer { name: name.into(), is_admin, stands_in_for: vec![] }
    }

    fn pending(rules: DecisionRules) -> CardApproval {
        CardApproval { rules, ..Default::default() }
    }

    #[test]
    fn anyone_who_sees_a_plain_approval_gets_every_button() {
        let offer = offer(&viewer("alice", false), true, &pending(DecisionRules::default()), Place::Chat, true);
        assert_eq!(offer, Offer { decide: true, approve: true, edit: true, grant: true, hand_over: true, no_approve: None, held: None });
    }

    #[test]
    fn four_eyes_leaves_the_requester_reject_only_and_others_everything() {
        let rules = DecisionRules { separate_requester: true, ..Default::default() };
        let requester = offer(&viewer("alice", false), true, &pending(rules), Place::Chat, true);
        assert!(requester.decide);
        assert!(!requester.approve && !requester.edit && !requester.grant);
        assert_eq!(requester.no_approve, Some(NoApprove::FourEyes));
        let admin = offer(&viewer("root", true), false, &pending(rules), Place::Queue, true);
        assert!(admin.approve && admin.edit);
        assert!(!admin.grant, "an admin in the queue gives no grant in someone else's chat");
        assert!(!admin.hand_over, "an admin has no one to hand it to");
    }

    #[test]
    fn a_quorum_approver_who_approved_waits_and_others_are_held() {
        let rules = DecisionRules { quorum: 2, ..Default::default() };
        let mut approval = pending(rules);
        approval.approvers = Some(Approvers {
            names: vec!["group:finance".into()],
            people: vec!["bob".into(), "dora".into()],
            admins: false,
            each: Vec::new(),
        });
        approval.approved_by = vec!["Bob".into()];
        let bob = offer(&viewer("bob", false), false, &approval, Place::Queue, true);
        assert!(bob.decide && !bob.approve);
        assert_eq!(bob.no_approve, Some(NoApprove::ApprovedAlready));
        assert!(offer(&viewer("dora", false), false, &approval, Place::Queue, true).approve);
        // The requester is not an approver: nothing to press, and the refusal says who decides.
        let alice = offer(&viewer("alice", false), true, &approval, Place::Chat, true);
        assert!(!alice.decide && !alice.approve && !alice.hand_over);
        assert_eq!(alice.held, Some(Refusal::NotAnApprover { approvers: "finance".into() }));
        // Standing in for dora (a delegation): carol decides as dora.
        let carol = Viewer { name: "carol".into(), is_admin: false, stands_in_for: vec!["dora".into()] };
        assert!(offer(&carol, false, &approval, Place::Queue, true).approve);
    }

    #[test]
    fn an_escalated_approval_is_for_its_holders_and_the_admins_only() {
        let mut approval = pending(DecisionRules::default());
        approval.escalated_by = Some("alice".into());
        approval.escalated_to = Some("finance".into());
        approval.deciders = vec!["dora".into()];
        let alice = offer(&viewer("alice", false), true, &approval, Place::Chat, true);
        assert!(!alice.decide);
        assert!(matches!(alice.held, Some(Refusal::WithOthers { .. })));
        let dora = offer(&viewer("dora", false), false, &approval, Place::Queue, true);
        assert!(dora.approve && !dora.hand_over, "handed over once already");
        assert!(offer(&viewer("root", true), false, &approval, Place::Chat, true).approve);
    }

    #[test]
    fn the_gates_rules_take_away_edit_and_grant() {
        let rules = DecisionRules { allow_modification: false, grantable: false, ..Default::default() };
        let o = offer(&viewer("alice", false), true, &pending(rules), Place::Chat, true);
        assert!(o.approve && !o.edit && !o.grant);
        let plain = offer(&viewer("alice", false), true, &pending(DecisionRules::default()), Place::Chat, false);
        assert!(!plain.grant, "a tool no grant covers (a plan, an answer) is decided one by one");
    }

    #[test]
    fn a_call_answered_in_the_chat_has_no_buttons() {
        let mut approval = pending(DecisionRules::default());
        approval.in_chat = true;
        let o = offer(&viewer("alice", false), true, &approval, Place::Chat, true);
        assert!(!o.decide && !o.approve && !o.hand_over);
        assert_eq!(o.held, None);
    }
}
