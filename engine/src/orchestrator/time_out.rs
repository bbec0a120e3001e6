//! An approval whose deadline passed: its timeout action applies (approve, reject, skip, ask
//! again, escalate, abort), as the server's own decision.

use domain::{ApprovalId, ApprovalOutcome, ApprovalState, TimeoutAction};

use super::{Decisions, authority::Actor};
use crate::{
    Error,
    store::{Scope, approvals, time::now_ms},
};

impl Decisions {
    /// Applies an approval's timeout action; a no-op when a human decided first.
    pub async fn time_out(&self, approval_id: &ApprovalId) -> Result<(), Error> {
        let mut w = self.driver.store.write(Scope::Approval(approval_id)).await?;
        let Some(approval) = approvals::get(&mut *w.tx, approval_id).await? else { return Ok(()) };
        if approval.state != ApprovalState::Pending || approval.deadline > now_ms() {
            return Ok(());
        }
        let task = self.waiting_task(&mut w, &approval.task_id).await?;
        let system = Actor::system();
        // An escalated approval that times out again is rejected: escalation happens once.
        let action = match approval.timeout_action {
            TimeoutAction::Escalate if approval.escalated_at.is_some() => TimeoutAction::Reject,
            // Asked as often as the gate allows: the last time out rejects.
            TimeoutAction::Retry if approval.retries_left <= 0 => TimeoutAction::Reject,
            other => other,
        };
        self.driver.metrics.timed_out(action.as_str());
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
                let reason = Some("timed out; skipped without a decision".into());
                self.apply(&mut w, &task, &approval, ApprovalOutcome::Expired, &system, reason, None).await?;
            }
            TimeoutAction::Reject => {
                let reason = match approval.resent {
                    0 => "timed out".to_owned(),
                    n => format!("timed out (asked {} times)", n + 1),
                };
                self.apply(&mut w, &task, &approval, ApprovalOutcome::Expired, &system, Some(reason), None).await?;
            }
            TimeoutAction::Retry => self.ask_again(&mut w, &task, &approval).await?,
        }
        w.commit().await?;
        self.driver.trigger(&task.id);
        Ok(())
    }
}
