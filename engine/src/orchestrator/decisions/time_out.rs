//! An approval whose deadline passed: its timeout action applies (approve, reject, skip, ask
//! again, escalate, abort), as the server's own decision. A timeout that would approve is
//! checked first against the configuration in force now ([`Decisions::timeout_action_now`]).

use domain::{ApprovalId, ApprovalOutcome, ApprovalState, AuditKind, TimeoutAction};
use serde_json::json;

use super::{
    Decisions,
    authority::{Actor, SYSTEM},
};
use crate::{
    Error,
    clock::now_ms,
    policy,
    store::{
        Write, WriteScope,
        approvals::{self, ApprovalRow},
        events,
    },
    tools::answer,
};

impl Decisions {
    /// Applies an approval's timeout action; a no-op when a human decided first.
    pub async fn time_out(&self, approval_id: &ApprovalId) -> Result<(), Error> {
        let mut w = self.ctx.store.write(WriteScope::Approval(approval_id)).await?;
        let Some(approval) = approvals::get(&mut *w.tx, approval_id).await? else { return Ok(()) };
        if approval.state != ApprovalState::Pending || approval.deadline > now_ms() {
            return Ok(());
        }
        let task = self.waiting_task(&mut w, &approval.task_id).await?;
        let system = Actor::system();
        // The action kept with the approval when it was asked; one that approves runs the call
        // only if the configuration in force now still says so (it may have changed since).
        let (action, instead) = match approval.timeout_action {
            TimeoutAction::Approve => match self.timeout_action_now(&mut w, &approval).await? {
                None => (TimeoutAction::Approve, None),
                Some((action, why)) => (action, Some(why)),
            },
            other => (other, None),
        };
        // An escalated approval that times out again is rejected: escalation happens once.
        let action = match action {
            TimeoutAction::Escalate if approval.escalated_at.is_some() => TimeoutAction::Reject,
            // Asked as often as the gate allows: the last time out rejects.
            TimeoutAction::Retry if approval.retries_left <= 0 => TimeoutAction::Reject,
            other => other,
        };
        if let Some(why) = &instead {
            tracing::info!(approval_id = %approval.id, action = action.as_str(), "a timeout that approved no longer does: {why}");
            // An abort records itself in a write of its own.
            if action != TimeoutAction::Abort {
                w.audit(
                    AuditKind::PolicyReclassified,
                    SYSTEM,
                    json!({
                        "approval_id": approval.id, "tool": approval.tool, "outcome": "timeout does not approve", "action": action.as_str(),
                        "why": why, "policy_version": self.ctx.agents.version,
                    }),
                );
            }
        }
        // What the model and the card are told: the timeout, and why it did not approve.
        let said = |reason: String| match &instead {
            Some(why) => Some(format!("{reason}: {why}")),
            None => Some(reason),
        };
        self.ctx.metrics.timed_out(action.as_str());
        match action {
            TimeoutAction::Abort => {
                drop(w);
                return self.abort(&task.id, &system).await;
            }
            TimeoutAction::Escalate => {
                let to = self.gate_target(&mut w, &approval).await?;
                self.hand_over(&mut w, &task, &approval, &system.name, super::escalate::Deadline::Fresh, to).await?
            }
            TimeoutAction::Approve => {
                self.apply(&mut w, &task, &approval, ApprovalOutcome::Approved, &system, Some("timed out".into()), None).await?;
            }
            TimeoutAction::Skip => {
                let reason = said("timed out; skipped without a decision".into());
                self.apply(&mut w, &task, &approval, ApprovalOutcome::Expired, &system, reason, None).await?;
            }
            TimeoutAction::Reject => {
                let reason = match approval.resent {
                    0 => "timed out".to_owned(),
                    n => format!("timed out (asked {} times)", n + 1),
                };
                self.apply(&mut w, &task, &approval, ApprovalOutcome::Expired, &system, said(reason), None).await?;
            }
            TimeoutAction::Retry => self.ask_again(&mut w, &task, &approval).await?,
        }
        w.commit().await?;
        self.driver.trigger(&task.id);
        Ok(())
    }

    /// Whether a timeout may still approve the call, judged when it would release it: the call's
    /// requirement under the configuration in force now ([`policy::check`], as when a call is
    /// proposed: its tool, its arguments as proposed, the conversation's owner, the model's
    /// confidence as assessed, what the model has spent so far) approves on time-out, or no gate
    /// stops the call any more: then `None`. Otherwise the action that applies instead (the
    /// current requirement's), and why; a reject when the call cannot be judged (its agent or
    /// tool is no longer configured).
    ///
    /// The spend read now is never less than when the call was proposed (the task waits, so only
    /// the conversation's other turns can add to it), so a budget gate can only add to what is
    /// required, never take a gate away.
    async fn timeout_action_now(&self, w: &mut Write, approval: &ApprovalRow) -> Result<Option<(TimeoutAction, String)>, Error> {
        let unsure =
            |why: String| -> Result<_, Error> { Ok(Some((TimeoutAction::Reject, format!("under the configuration in force now, {why}")))) };
        let Some(agent) = self.ctx.agents.get(&approval.agent) else {
            return unsure(format!("agent {} is no longer configured", approval.agent));
        };
        let timeout_action = if approval.tool == answer::NAME {
            // An answer held for review belongs to the agent's final-answer gate, as when it was asked.
            agent.final_response_gate().map(|gate| (gate.name.clone(), gate.timeout_action))
        } else {
            let tool = self.ctx.tools.get(&approval.tool).filter(|_| agent.tools.iter().any(|t| t == &approval.tool));
            let Some(tool) = tool else {
                return unsure(format!("{} is no longer one of {}'s tools", approval.tool, agent.name));
            };
            let spent = match agent.gates.iter().any(|g| g.rule.budget().is_some()) {
                true => policy::Spent::of(&events::after(&mut *w.tx, &approval.conversation_id, 0).await?, &approval.task_id),
                false => policy::Spent::default(),
            };
            let args = approval.args();
            let call = policy::Call {
                tool: tool.spec(),
                args: &args,
                user: approval.owner.as_deref().unwrap_or_default(),
                confidence: approval.assessment.as_ref().and_then(|a| a.confidence),
                spent: &spent,
            };
            policy::check(agent, &call).requirement.map(|r| (r.gate.name, r.gate.timeout_action))
        };
        Ok(match timeout_action {
            // No gate stops the call now, or the gates that do approve it on time-out.
            None | Some((_, TimeoutAction::Approve)) => None,
            Some((gate, action)) => {
                Some((action, format!("under the configuration in force now, gate \"{gate}\" does not approve on time-out ({action})")))
            }
        })
    }
}
