//! Handing a pending approval to the admins: on demand by its owner, or as an `escalate` timeout
//! action (with a fresh deadline; see `app::domain::rules` for who may decide it then).

use app::domain::ApprovalId;
use std::sync::Arc;

use app::domain::{AuditKind, EventBody};
use serde_json::json;

use super::{
    Orchestrator,
    decide::{Actor, DecisionError, pending_approval},
};
use crate::store::{
    Scope, Write,
    approvals::{self, ApprovalRow},
    tasks::TaskRow,
    time::now_ms,
};

/// The deadline of an approval handed to the admins.
#[derive(Clone, Copy, Debug)]
pub(super) enum Deadline {
    /// As long again as the gate gave (on demand, and the `escalate` timeout action).
    Fresh,
    /// Unchanged (the gate's escalation timeout, which comes before its deadline).
    Keep,
}

impl Orchestrator {
    /// A user hands a pending approval to the admins (on demand).
    pub async fn escalate(self: &Arc<Self>, approval_id: &ApprovalId, actor: &Actor) -> Result<(), DecisionError> {
        let mut w = self.store.write(Scope::Approval(approval_id)).await?;
        let approval = pending_approval(&mut w, approval_id).await?;
        if approval.escalated_at.is_some() {
            return Err(DecisionError::Conflict(format!("approval {approval_id} is already with the admins")));
        }
        let task = self.waiting_task(&mut w, &approval.task_id).await?;
        self.hand_to_admins(&mut w, &task, &approval, &actor.name, Deadline::Fresh).await?;
        w.commit().await?;
        Ok(())
    }

    /// The gate's escalation timeout passed and no one decided: the admins get it, and the
    /// deadline stays (the timeout action still applies then).
    pub async fn escalate_when_due(self: &Arc<Self>, approval_id: &ApprovalId) -> Result<(), DecisionError> {
        let mut w = self.store.write(Scope::Approval(approval_id)).await?;
        let approval = pending_approval(&mut w, approval_id).await?;
        if approval.escalated_at.is_some() || approval.escalate_at.is_none_or(|at| at > now_ms()) {
            return Ok(());
        }
        let task = self.waiting_task(&mut w, &approval.task_id).await?;
        self.hand_to_admins(&mut w, &task, &approval, super::decide::SYSTEM, Deadline::Keep).await?;
        w.commit().await?;
        Ok(())
    }

    /// Nobody decided in time and the gate says `retry`: the same approval is asked again with a
    /// fresh deadline (as long as the first), announced by an `approval-required` event that says
    /// which time it is.
    pub(super) async fn ask_again(&self, w: &mut Write, task: &TaskRow, approval: &ApprovalRow) -> Result<(), DecisionError> {
        let deadline = now_ms() + (approval.deadline - approval.created_at).max(100);
        let Some(resent) = approvals::renew(&mut w.tx, &approval.id, deadline).await? else {
            return Err(DecisionError::Conflict(format!("approval {} can no longer be asked again", approval.id)));
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
                deadline: crate::store::time::rfc3339(deadline),
                in_chat: approval.confirm == "chat",
                rules: approval.rules(),
                assessment: approval.assessment(),
                resent: u32::try_from(resent).unwrap_or(u32::MAX),
            },
        )
        .await?;
        w.audit(
            AuditKind::ApprovalTimedOut,
            super::decide::SYSTEM,
            json!({ "approval_id": approval.id, "action": "retry", "asked_again": resent, "deadline": crate::store::time::rfc3339(deadline) }),
        );
        Ok(())
    }

    /// Reminds the deciders of a pending approval when its next reminder is due.
    pub async fn remind_when_due(self: &Arc<Self>, approval_id: &ApprovalId) -> Result<(), DecisionError> {
        let mut w = self.store.write(Scope::Approval(approval_id)).await?;
        let approval = pending_approval(&mut w, approval_id).await?;
        let Some((reminder, of)) = approvals::take_reminder(&mut w.tx, approval_id, now_ms()).await? else { return Ok(()) };
        let (reminder, of) = (u32::try_from(reminder).unwrap_or(u32::MAX), u32::try_from(of).unwrap_or(u32::MAX));
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
            super::decide::SYSTEM,
            json!({ "approval_id": approval.id, "conversation_id": approval.conversation_id, "tool": approval.tool, "reminder": reminder, "of": of }),
        );
        w.commit().await?;
        Ok(())
    }

    pub(super) async fn hand_to_admins(
        &self,
        w: &mut Write,
        task: &TaskRow,
        approval: &ApprovalRow,
        by: &str,
        deadline: Deadline,
    ) -> Result<(), DecisionError> {
        let deadline = match deadline {
            // The admins get as long as the gate originally gave.
            Deadline::Fresh => now_ms() + (approval.deadline - approval.created_at).max(100),
            Deadline::Keep => approval.deadline,
        };
        if !approvals::escalate(&mut w.tx, &approval.id, by, deadline).await? {
            return Err(DecisionError::Conflict(format!("approval {} can no longer be escalated", approval.id)));
        }
        w.append(
            &approval.conversation_id,
            EventBody::ApprovalEscalated {
                task_id: task.id.clone(),
                approval_id: approval.id.clone(),
                call_id: approval.call_id.clone(),
                escalated_by: by.to_owned(),
                deadline: crate::store::time::rfc3339(deadline),
            },
        )
        .await?;
        w.audit(AuditKind::ApprovalEscalated,
            by,
            json!({ "approval_id": approval.id, "conversation_id": approval.conversation_id, "tool": approval.tool, "deadline": crate::store::time::rfc3339(deadline) }));
        Ok(())
    }
}
