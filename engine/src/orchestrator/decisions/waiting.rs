//! What happens while an approval waits, besides its deadline: its deciders are reminded on the
//! gate's schedule (`reminder_interval_secs`), and a `retry` timeout asks it again with a fresh
//! deadline. Both are stored times the sweeper acts on, through conditional writes.

use crate::Error;

use domain::{ApprovalId, AuditKind, EventBody};
use serde_json::json;

use super::{
    Decisions,
    authority::{SYSTEM, pending_approval},
};
use crate::clock::{now_ms, rfc3339};
use crate::store::{
    Write, WriteScope,
    approvals::{self, ApprovalRow},
    tasks::TaskRow,
};

impl Decisions {
    /// Nobody decided in time and the gate says `retry`: the same approval is asked again with a
    /// fresh deadline (as long as the first), announced by an `approval-required` event that says
    /// which time it is.
    pub(super) async fn ask_again(&self, w: &mut Write, task: &TaskRow, approval: &ApprovalRow) -> Result<(), Error> {
        let deadline = now_ms() + (approval.deadline - approval.created_at).max(100);
        let Some(resent) = approvals::renew(&mut w.tx, &approval.id, deadline).await? else {
            return Err(Error::WrongState(format!("approval {} can no longer be asked again", approval.id)));
        };
        w.append(
            &approval.conversation_id,
            EventBody::ApprovalRequired {
                task_id: task.id.clone(),
                approval_id: approval.id.clone(),
                call_id: approval.call_id.clone(),
                tool: approval.tool.clone(),
                args: approval.args(),
                gate: approval.gate.clone(),
                summary: approval.summary.clone(),
                risk: approval.risk,
                deadline: rfc3339(deadline),
                in_chat: approval.confirm == "chat",
                rules: approval.rules(),
                assessment: approval.assessment(),
                resent: u32::try_from(resent).unwrap_or(u32::MAX),
                spend: approval.context().spend,
                approvers: approval.approvers().map(Box::new),
                suggestion: None,
            },
        )
        .await?;
        w.audit(
            AuditKind::ApprovalTimedOut,
            SYSTEM,
            json!({ "approval_id": approval.id, "action": "retry", "asked_again": resent, "deadline": rfc3339(deadline) }),
        );
        Ok(())
    }

    /// Reminds the deciders of a pending approval when its next reminder is due.
    pub async fn remind_when_due(&self, approval_id: &ApprovalId) -> Result<(), Error> {
        let mut w = self.ctx.store.write(WriteScope::Approval(approval_id)).await?;
        let approval = pending_approval(&mut w.tx, approval_id).await?;
        let Some((reminder, of)) = approvals::take_reminder(&mut w.tx, approval_id, now_ms()).await? else { return Ok(()) };
        let (reminder, of) = (u32::try_from(reminder).unwrap_or(u32::MAX), u32::try_from(of).unwrap_or(u32::MAX));
        // The people its gate emails get the reminder too.
        crate::orchestrator::task_driver::queue_emails(&mut w, &approval.id, &approval.notify(), reminder).await?;
        w.append(
            &approval.conversation_id,
            EventBody::ApprovalReminder {
                task_id: approval.task_id.clone(),
                approval_id: approval.id.clone(),
                call_id: approval.call_id.clone(),
                reminder,
                of,
            },
        )
        .await?;
        w.audit(
            AuditKind::ApprovalReminded,
            SYSTEM,
            json!({ "approval_id": approval.id, "conversation_id": approval.conversation_id, "tool": approval.tool, "reminder": reminder, "of": of }),
        );
        w.commit().await?;
        Ok(())
    }
}
