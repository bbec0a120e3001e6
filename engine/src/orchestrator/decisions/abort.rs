//! Stopping a turn: its pending approvals, approved-but-unrun calls and running workers are
//! canceled in one transaction.

use crate::Error;
use domain::TaskId;

use domain::{
    ApprovalOutcome, AuditKind, CallState, EventBody, Role, TaskStatus,
    rules::{self},
};
use serde_json::json;

use super::{Decisions, authority::Actor};
use crate::store::{
    Write, WriteScope,
    approvals::{self},
    calls,
    tasks::{self, TaskRow},
};

impl Decisions {
    /// Stops a task: pending approvals and approved-but-unrun calls are canceled. A person's abort
    /// counts against their decision limit first ([`Self::count_attempt`]); the server's does not.
    pub async fn abort(&self, task_id: &TaskId, actor: &Actor) -> Result<(), Error> {
        self.count_attempt(actor).await?;
        let mut w = self.ctx.store.write(WriteScope::Task(task_id)).await?;
        let task = tasks::get(&mut *w.tx, task_id).await?.ok_or_else(|| Error::Unknown(format!("task {task_id} does not exist")))?;
        if task.status().is_final() {
            return Err(Error::WrongState(format!("task {task_id} is already {}", task.status().as_str())));
        }
        // Aborting cancels the pending approvals: not for a user while someone else holds one.
        if actor.role == Some(Role::User) {
            for approval in approvals::pending_for_task(&mut *w.tx, task_id).await? {
                let people = approval.deciders();
                let decider = rules::Decider { name: &actor.name, is_admin: false };
                // A gate's approvers decide whether a call runs; stopping runs nothing, so they do
                // not keep the owner from stopping their own turn.
                if let Some(why) = rules::held_from(decider, approval.escalation(&people), None) {
                    return Err(Error::NotAllowed(format!("the turn cannot be stopped: {why}")));
                }
            }
        }
        self.cancel(&mut w, &task, actor).await?;
        w.audit(AuditKind::TaskAborted,
            &actor.name,
            json!({ "task_id": task.id, "conversation_id": task.conversation_id, "role": actor.role_name(), "ip": actor.ip, "user_agent": actor.user_agent }));
        w.commit().await?;
        // A canceled worker hands "canceled" to its supervisor, which then goes on.
        self.driver.trigger(task_id);
        Ok(())
    }

    /// Cancels the task's pending approvals, its approved calls and its running workers.
    async fn cancel(&self, w: &mut Write, task: &TaskRow, actor: &Actor) -> Result<(), Error> {
        let reason = Some(format!("task aborted by {}", actor.name));
        for approval in approvals::pending_for_task(&mut *w.tx, &task.id).await? {
            self.apply(w, task, &approval, ApprovalOutcome::Canceled, actor, reason.clone(), None).await?;
        }
        for call in calls::in_states(&mut *w.tx, &task.id, &[CallState::Approved]).await? {
            if calls::transition(&mut w.tx, &call.id, CallState::Approved, CallState::Canceled, None).await? {
                let output = json!({ "status": "rejected", "reason": reason });
                w.append(&task.conversation_id, EventBody::ToolResult { task_id: task.id.clone(), call_id: call.id, ok: false, output })
                    .await?;
            }
        }
        for call in calls::in_states(&mut *w.tx, &task.id, &[CallState::Executing]).await? {
            let Some(worker) = tasks::worker_for_call(&mut *w.tx, &call.id).await? else { continue };
            if !worker.status().is_final() {
                Box::pin(self.cancel(w, &worker, actor)).await?;
            }
            if calls::transition(&mut w.tx, &call.id, CallState::Executing, CallState::Failed, None).await? {
                let output = json!({ "status": "canceled", "error": reason, "message": reason });
                w.append(&task.conversation_id, EventBody::ToolResult { task_id: task.id.clone(), call_id: call.id, ok: false, output })
                    .await?;
            }
        }
        let message = Some(format!("aborted by {}", actor.name));
        tasks::transition(w, task, &[TaskStatus::Working, TaskStatus::InputRequired], TaskStatus::Canceled, message).await?;
        Ok(())
    }
}
