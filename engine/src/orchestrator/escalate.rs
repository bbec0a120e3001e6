//! Handing a pending approval to the admins: on demand by its owner, as an `escalate` timeout
//! action (with a fresh deadline), or when the gate's escalation timeout passes (the deadline
//! stays); see `app::domain::rules` for who may decide it then.

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
