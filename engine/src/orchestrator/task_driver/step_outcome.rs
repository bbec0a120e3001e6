//! The pure part of a model step (model_step.rs gathers and records around it): what a reply
//! becomes, why each call was or was not asked, and what the verdicts make of the task. No reads,
//! no writes, so every outcome has a table test below.

use domain::{CallState, GrantId, TaskStatus};
use serde_json::json;

use crate::{agents::Gate, grant_cover::Uncovered, model::ProposedCall, policy::Verdict, tools::answer};

/// A reply as the step records it.
#[derive(Debug, PartialEq)]
pub(super) struct Shaped {
    /// Text for the chat as an assistant message.
    pub message: Option<String>,
    /// The calls to classify, in the model's order.
    pub calls: Vec<ProposedCall>,
    /// Whether the only call is the final answer, held for a reviewer by a `final_response` gate.
    pub answer_held: bool,
}

/// A reply's text (blank counts as none) and calls. A final answer (text, no calls) that a
/// `final_response` gate holds becomes one call of `final_answer` that waits for approval,
/// instead of a message. Each call gets its id from the step afterwards.
pub(super) fn shape_reply(text: Option<String>, calls: Vec<ProposedCall>, holds_answers: bool) -> Shaped {
    let text = text.filter(|t| !t.trim().is_empty());
    match text {
        Some(text) if holds_answers && calls.is_empty() => Shaped {
            message: None,
            calls: vec![ProposedCall {
                id: String::new().into(),
                tool: answer::NAME.into(),
                args: json!({ "text": text }),
                confidence: None,
            }],
            answer_held: true,
        },
        message => Shaped { message, calls, answer_held: false },
    }
}

/// What let a call run under a standing grant: who granted it, and its id.
pub(super) struct UsedGrant<'a> {
    pub by: &'a str,
    pub id: &'a GrantId,
}

/// Why a call was asked, or not, for the card and the audit trail. `gate` is the enforcing gate
/// that matched (before a grant or an earlier refusal), `shadows` the shadow gates that would have,
/// `uncovered` a grant in force that does not cover the call and why, and `why_gate` says what a
/// gate's rule looked at.
pub(super) fn why(
    verdict: &Verdict<'_>,
    tool: &str,
    gate: Option<&Gate>,
    shadows: &[&Gate],
    uncovered: Option<&(GrantId, Uncovered)>,
    grant: Option<UsedGrant<'_>>,
    why_gate: impl Fn(&Gate) -> String,
) -> Option<String> {
    match (verdict, gate) {
        (Verdict::Ask { gate }, _) => Some(match uncovered {
            Some((id, why_not)) => format!("Asked because {}; grant {id} does not cover it: {why_not}", why_gate(gate)),
            None => format!("Asked because {}", why_gate(gate)),
        }),
        (Verdict::Run { grant: Some(_) }, Some(gated)) => {
            grant.map(|g| format!("Not asked: {} allowed {tool} here (grant {}); without it, {}", g.by, g.id, why_gate(gated)))
        }
        (Verdict::Run { grant: None }, _) if !shadows.is_empty() => {
            let each: Vec<String> = shadows.iter().map(|&s| format!("shadow {}", why_gate(s))).collect();
            Some(format!("Not asked: no enforcing gate covers it; {}", each.join("; ")))
        }
        (Verdict::RepeatRefused { .. }, _) => Some("Refused without asking: the same call was rejected before in this chat".into()),
        _ => None,
    }
}

/// What a step's verdicts make of its task.
#[derive(Debug, PartialEq)]
pub(super) struct Outcome {
    /// The task's new status (none: it stays working and the driver goes on).
    pub status: Option<TaskStatus>,
    /// Whether the driver has nothing more to do, so the step's write releases the lease.
    pub release: bool,
}

/// `states` are the states the step's calls were recorded in; `worker` says the task is a
/// sub-agent's, whose end its supervisor's driver takes up.
pub(super) fn outcome(states: &[CallState], worker: bool) -> Outcome {
    let pending = states.contains(&CallState::PendingApproval);
    // Calls that run without asking anyone: the driver goes on to run them.
    let runs = states.contains(&CallState::Approved);
    let status = match (states.is_empty(), pending) {
        (true, _) => Some(TaskStatus::Completed),
        (false, true) => Some(TaskStatus::InputRequired),
        (false, false) => None,
    };
    Outcome { status, release: (states.is_empty() && !worker) || (pending && !runs) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::{GateRule, TimeoutAction};
    use std::time::Duration;

    fn call(tool: &str) -> ProposedCall {
        ProposedCall { id: "call_1".to_string().into(), tool: tool.into(), args: json!({ "order": 1 }), confidence: None }
    }

    fn gate(name: &str) -> Gate {
        Gate::plain(name, GateRule::All, Duration::from_secs(1), TimeoutAction::Reject, Default::default())
    }

    #[test]
    fn a_reply_becomes_a_message_and_calls_unless_a_final_answer_is_held() {
        let text = || Some("All done.".to_string());
        // (text, calls, holds answers) → (message, tools, held)
        type Case = (Option<String>, Vec<ProposedCall>, bool, Option<&'static str>, Vec<&'static str>, bool);
        let cases: [Case; 7] = [
            (text(), vec![], false, Some("All done."), vec![], false),
            (text(), vec![call("refund")], false, Some("All done."), vec!["refund"], false),
            // Text beside calls is not a final answer: a held answer gate lets it through.
            (text(), vec![call("refund")], true, Some("All done."), vec!["refund"], false),
            (text(), vec![], true, None, vec![answer::NAME], true),
            (Some("  \n".into()), vec![], true, None, vec![], false),
            (Some("  \n".into()), vec![call("refund")], false, None, vec!["refund"], false),
            (None, vec![], false, None, vec![], false),
        ];
        for (text, calls, holds, message, tools, held) in cases {
            let shaped = shape_reply(text.clone(), calls, holds);
            let what = format!("{text:?} holds={holds}");
            assert_eq!(shaped.message.as_deref(), message, "{what}");
            assert_eq!(shaped.calls.iter().map(|c| c.tool.as_str()).collect::<Vec<_>>(), tools, "{what}");
            assert_eq!(shaped.answer_held, held, "{what}");
        }
        let held = shape_reply(text(), vec![], true);
        assert_eq!(held.calls[0].args, json!({ "text": "All done." }), "the held call carries the answer");
    }

    #[test]
    fn every_verdict_says_why_it_was_or_was_not_asked() {
        let (refunds, shadow) = (gate("refunds"), gate("try-all"));
        let grant_id: GrantId = "g1".to_string().into();
        let used = || Some(UsedGrant { by: "alice", id: &grant_id });
        let uncovered = (grant_id.clone(), Uncovered::OtherVersion);
        let why_gate = |g: &Gate| format!("gate \"{}\" matched", g.name);
        let why = |verdict: &Verdict<'_>, gate, shadows: &[&Gate], uncovered, grant| {
            why(verdict, "refund", gate, shadows, uncovered, grant, why_gate)
        };
        let ask = Verdict::Ask { gate: &refunds };
        assert_eq!(why(&ask, Some(&refunds), &[], None, None).as_deref(), Some("Asked because gate \"refunds\" matched"));
        let asked = why(&ask, Some(&refunds), &[], Some(&uncovered), None).unwrap();
        assert!(asked.starts_with("Asked because gate \"refunds\" matched; grant g1 does not cover it: "), "{asked}");
        assert_eq!(
            asked.strip_prefix("Asked because gate \"refunds\" matched; grant g1 does not cover it: "),
            Some(Uncovered::OtherVersion.to_string().as_str())
        );
        let granted = Verdict::Run { grant: Some(grant_id.clone()) };
        assert_eq!(
            why(&granted, Some(&refunds), &[], None, used()).as_deref(),
            Some("Not asked: alice allowed refund here (grant g1); without it, gate \"refunds\" matched")
        );
        // A grant whose last use went to another call asks instead; the verdict says so first.
        assert_eq!(why(&granted, Some(&refunds), &[], None, None), None);
        let free = Verdict::Run { grant: None };
        assert_eq!(why(&free, None, &[], None, None), None, "an ungated call needs no why");
        assert_eq!(
            why(&free, None, &[&shadow], None, None).as_deref(),
            Some("Not asked: no enforcing gate covers it; shadow gate \"try-all\" matched")
        );
        assert_eq!(
            why(&free, None, &[&refunds, &shadow], None, None).as_deref(),
            Some("Not asked: no enforcing gate covers it; shadow gate \"refunds\" matched; shadow gate \"try-all\" matched"),
            "every shadow gate that would have asked"
        );
        let refused = Verdict::RepeatRefused { output: json!({}) };
        assert_eq!(
            why(&refused, Some(&refunds), &[], None, None).as_deref(),
            Some("Refused without asking: the same call was rejected before in this chat")
        );
        assert_eq!(why(&Verdict::Invalid { output: json!({}) }, None, &[], None, None), None, "the failed result says why");
    }

    #[test]
    fn every_mix_of_verdicts_leaves_the_task_where_the_driver_expects_it() {
        use CallState::{Approved as Run, Failed as Invalid, PendingApproval as Ask, Rejected as Refused};
        let (completed, waits) = (Some(TaskStatus::Completed), Some(TaskStatus::InputRequired));
        // (states, worker) → (status, release)
        let cases: &[(&[CallState], bool, Option<TaskStatus>, bool)] = &[
            // A final answer ends the turn; a worker's end is taken up by its supervisor's driver.
            (&[], false, completed, true),
            (&[], true, completed, false),
            // Calls that run: the driver runs them and asks the model again.
            (&[Run], false, None, false),
            (&[Run, Run], true, None, false),
            // Every call waits for a human: the driver lets go until someone decides.
            (&[Ask], false, waits, true),
            (&[Ask, Ask], true, waits, true),
            // Some wait, some run: the driver runs those first, holding the lease.
            (&[Run, Ask], false, waits, false),
            // Failed or refused calls go back to the model at once.
            (&[Invalid], false, None, false),
            (&[Refused, Invalid], false, None, false),
            (&[Invalid, Ask], false, waits, true),
            (&[Refused, Run], false, None, false),
        ];
        for (states, worker, status, release) in cases {
            let what = format!("{states:?} worker={worker}");
            assert_eq!(outcome(states, *worker), Outcome { status: *status, release: *release }, "{what}");
        }
    }
}
