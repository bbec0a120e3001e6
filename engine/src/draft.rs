//! Shadow for a whole draft (`COUNTERSIGN_AGENTS_DRAFT`, docs/config.md, "The policy's life"):
//! every proposed call the live configuration judges is also put to a draft configuration, with
//! the same engine functions ([`policy::check`], as the task driver and `policy replay` do), and
//! where the draft would do otherwise the difference is recorded as a shadow hit. The draft only
//! watches: what happens to the call is the live configuration's alone. Pure: the task driver
//! records the hit (orchestrator/task_driver/model_step.rs).
//!
//! What is compared is what each configuration requires of the call — whether a gate stops it,
//! which gates, who must decide and what they must meet (a quorum, four-eyes, a fresh sign-in, a
//! reason, no edits, in the chat or on a card) — not what happened next: a standing grant or an
//! earlier refusal answers a call the live gates stop, and the draft, another configuration
//! version, would have grants of its own (docs/security.md, "Grants"). Approvers are compared as
//! the gates name them: who a name stands for is the database's to say when a call is asked (a
//! replay resolves them, engine/src/replay/people.rs).

use crate::{
    agents::AgentsConfig,
    policy::{self, Requirement},
    replay,
    store::shadow_hits::DRAFT_PREFIX,
    tools::{self, Registry},
};

/// What the draft does with a call.
#[derive(Debug)]
pub enum Judged<'a> {
    /// The draft's agent lacks the tool (or a tool of a plan's steps): the call would fail its
    /// checks before any gate, for this reason.
    Refuses(String),
    /// No gate of the draft stops it.
    Runs,
    /// The draft's gates stop it: a human would decide. (Boxed: a requirement holds a whole gate.)
    Asks(Box<Requirement<'a>>),
}

/// What `draft` does with `call`, proposed to the agent named `agent` (the one the live
/// configuration judged it for): `None` when the draft has no agent of that name. `held`: the call
/// is an answer the live configuration holds for a reviewer (a `final_response` gate); the draft
/// holds it only if its agent has such a gate too. The live checks before any gate (a known tool,
/// arguments that fit its schema) are the caller's: a call that fails them is not compared.
pub fn judge<'a>(draft: &'a AgentsConfig, registry: &Registry, agent: &str, call: &policy::Call<'_>, held: bool) -> Option<Judged<'a>> {
    let agent = draft.get(agent)?;
    let tool = call.tool.name.as_str();
    if held && tool == tools::answer::NAME {
        return Some(match agent.final_response_gate() {
            Some(gate) => Judged::Asks(Box::new(Requirement::one(gate))),
            None => Judged::Runs,
        });
    }
    if !agent.tools.iter().any(|t| t == tool) {
        return Some(Judged::Refuses(format!("{} has no tool {tool} in the draft", agent.name)));
    }
    if tool == tools::plan::NAME && !tools::plan::step_violations(call.args, &agent.tools, registry).is_empty() {
        return Some(Judged::Refuses(format!("a step of the plan is not a tool of {} in the draft", agent.name)));
    }
    Some(match policy::check(agent, call).requirement {
        Some(requirement) => Judged::Asks(Box::new(requirement)),
        None => Judged::Runs,
    })
}

/// How the draft differs from the live configuration on one call, as its shadow hit says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// `draft:` and the draft's gates that would stop the call (joined with " + " when several
    /// apply), or `draft:none` when none would (it runs, or fails its checks).
    pub gate: String,
    /// What the draft would do and what the live configuration does: "draft would ask:
    /// big-refunds (deciders: anyone); live lets it run unasked".
    pub what: String,
}

/// The difference between `live`, the requirement of the live configuration (`None`: no gate
/// stops the call), and what the draft does: the draft would stop a call the live configuration
/// lets run, let run one it stops, refuse one it does not, or both stop it under other gates or
/// with other deciders or other rules for them (as `policy replay` says them). `None` when they
/// agree.
pub fn difference(live: Option<&Requirement<'_>>, draft: &Judged<'_>) -> Option<Difference> {
    let requires = |r: &Requirement<'_>| format!("{} (deciders: {})", r.gate.name, replay::decides(r));
    let live_does = match live {
        None => "live lets it run unasked".to_owned(),
        Some(r) => format!("live requires {}", requires(r)),
    };
    let none = format!("{DRAFT_PREFIX}none");
    let (gate, what) = match (live, draft) {
        (None, Judged::Runs) => return None,
        (Some(l), Judged::Asks(d)) if l.gate.name == d.gate.name && replay::decides(l) == replay::decides(d.as_ref()) => return None,
        (_, Judged::Refuses(why)) => (none, format!("draft would refuse it ({why})")),
        (Some(_), Judged::Runs) => (none, "draft would run it unasked".to_owned()),
        (None, Judged::Asks(d)) => (format!("{DRAFT_PREFIX}{}", d.gate.name), format!("draft would ask: {}", requires(d.as_ref()))),
        (Some(_), Judged::Asks(d)) => (format!("{DRAFT_PREFIX}{}", d.gate.name), format!("draft would require {}", requires(d.as_ref()))),
    };
    Some(Difference { gate, what: format!("{what}; {live_does}") })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const TOOLS: &str = "tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n";

    fn config(gates: &str) -> AgentsConfig {
        let text = format!("[[agents]]\nname = \"support\"\n{TOOLS}{gates}");
        AgentsConfig::parse(&text, "test.toml", &Registry::builtin()).unwrap()
    }

    /// What `draft` and `live` (its requirement) make of `tool` with `args`: the difference, if any.
    fn compare(live: &AgentsConfig, draft: &AgentsConfig, tool: &str, args: serde_json::Value) -> Option<Difference> {
        let registry = Registry::builtin();
        let spent = policy::Spent::default();
        let call = policy::Call { tool: registry.get(tool).unwrap().spec(), args: &args, user: "alice", confidence: None, spent: &spent };
        let live_agent = live.get("support").unwrap();
        let requirement = policy::check(live_agent, &call).requirement;
        let judged = judge(draft, &registry, "support", &call, false).expect("the draft has the agent");
        difference(requirement.as_ref(), &judged)
    }

    const BIG_REFUNDS: &str = "[[agents.gates]]\nname = \"big-refunds\"\nkind = \"rule\"\n\
                               rule = \"tool == 'process_refund' && args.amount > 100\"\n";
    const CANCELLATIONS: &str = "[[agents.gates]]\nname = \"cancellations\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\n";

    #[test]
    fn a_draft_that_would_stop_a_call_the_live_policy_lets_run_says_so() {
        let (live, draft) = (config(CANCELLATIONS), config(BIG_REFUNDS));
        let big = compare(&live, &draft, "process_refund", json!({ "order_id": 1004, "amount": 150 }));
        assert_eq!(
            big,
            Some(Difference {
                gate: "draft:big-refunds".into(),
                what: "draft would ask: big-refunds (deciders: anyone); live lets it run unasked".into()
            })
        );
        assert_eq!(compare(&live, &draft, "process_refund", json!({ "order_id": 1001, "amount": 5 })), None, "both let it run");
        let cancel = compare(&live, &draft, "cancel_order", json!({ "order_id": 1003 })).unwrap();
        assert_eq!(cancel.gate, "draft:none");
        assert_eq!(cancel.what, "draft would run it unasked; live requires cancellations (deciders: anyone)");
    }

    #[test]
    fn both_stopping_a_call_differ_only_by_their_gates_or_their_deciders() {
        let live = config(CANCELLATIONS);
        assert_eq!(compare(&live, &config(CANCELLATIONS), "cancel_order", json!({ "order_id": 1003 })), None, "the same gate");
        let root = config(&format!("{CANCELLATIONS}approvers = [\"user:root\"]\n"));
        let other = compare(&live, &root, "cancel_order", json!({ "order_id": 1003 })).unwrap();
        assert_eq!(other.gate, "draft:cancellations");
        assert_eq!(other.what, "draft would require cancellations (deciders: root); live requires cancellations (deciders: anyone)");
        let renamed = config("[[agents.gates]]\nname = \"orders\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\n");
        let other = compare(&live, &renamed, "cancel_order", json!({ "order_id": 1003 })).unwrap();
        assert_eq!(other.gate, "draft:orders");
    }

    #[test]
    fn four_eyes_or_a_card_instead_of_the_chat_is_a_difference_too() {
        let live = config(CANCELLATIONS);
        let four_eyes = config(&format!("{CANCELLATIONS}separate_requester = true\n"));
        let other = compare(&live, &four_eyes, "cancel_order", json!({ "order_id": 1003 })).unwrap();
        assert_eq!(other.gate, "draft:cancellations");
        assert_eq!(
            other.what,
            "draft would require cancellations (deciders: anyone; not the requester (four-eyes)); live requires cancellations (deciders: anyone)"
        );
        let in_chat = config(&format!("{CANCELLATIONS}confirm = \"chat\"\n"));
        let card = compare(&in_chat, &live, "cancel_order", json!({ "order_id": 1003 })).unwrap();
        assert_eq!(
            card.what,
            "draft would require cancellations (deciders: anyone); live requires cancellations (deciders: the requester, in the chat)"
        );
        assert_eq!(compare(&four_eyes, &four_eyes, "cancel_order", json!({ "order_id": 1003 })), None, "the same rules");
    }

    #[test]
    fn a_draft_without_the_tool_would_refuse_the_call_and_one_without_the_agent_says_nothing() {
        let live = config("");
        let text = "[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\"]\n";
        let draft = AgentsConfig::parse(text, "draft.toml", &Registry::builtin()).unwrap();
        let refused = compare(&live, &draft, "cancel_order", json!({ "order_id": 1003 })).unwrap();
        assert_eq!(refused.gate, "draft:none");
        assert_eq!(refused.what, "draft would refuse it (support has no tool cancel_order in the draft); live lets it run unasked");
        let registry = Registry::builtin();
        let spent = policy::Spent::default();
        let args = json!({ "order_id": 1003 });
        let call = policy::Call { tool: registry.get("get_order").unwrap().spec(), args: &args, user: "", confidence: None, spent: &spent };
        assert!(judge(&draft, &registry, "billing", &call, false).is_none(), "no agent of that name in the draft");
    }
}
