//! Running an approved call exactly once, and recording its result (or that it was interrupted).

use std::sync::Arc;

use anyhow::Context;
use domain::{AuditKind, CallState, EventBody, TaskStatus};
use serde_json::json;

use super::TaskDriver;
use crate::{
    clock::now_ms,
    orchestrator::SYSTEM,
    store::{
        Write,
        calls::{self, CallRow},
        client_calls,
        tasks::{self, Lease},
    },
    tools::{ToolError, answer, plan},
};

impl TaskDriver {
    /// Runs one approved call. A built-in tool's effect, the call's new state and its result
    /// are one transaction: all of it commits or none of it (docs/architecture.md, decision 4). An external
    /// tool is marked executing (committed) first, then called, then its result recorded.
    /// `for_client`: an outside client proposed the call, which runs only while it still waits
    /// (read afresh here: the client may have left while the call waited for a person).
    pub(super) async fn execute(self: &Arc<Self>, call: &CallRow, for_client: bool, lease: &Lease) -> crate::Result<()> {
        if for_client
            && let Some(client) = client_calls::get(&self.ctx.store, &call.task_id).await?
            && client.client_gone(now_ms())
        {
            return self.client_gone(call, &client, lease).await;
        }
        let tool = self.ctx.tools.get(&call.tool).cloned();
        if let Some(worker) = tool.as_ref().and_then(|t| t.delegate()) {
            return self.start_worker(call, worker, lease).await;
        }
        if let Some(tool) = tool.as_ref().filter(|t| t.is_external()) {
            let mut w = self.ctx.store.write_as(lease).await?;
            if !calls::transition(&mut w.tx, &call.id, CallState::Approved, CallState::Executing, None).await? {
                return Ok(());
            }
            w.append(&call.conversation_id, EventBody::ToolStarted { task_id: call.task_id.clone(), call_id: call.id.clone() }).await?;
            w.commit().await?;
            let started = std::time::Instant::now();
            let result = tool.call(&call.args()).await;
            self.ctx.metrics.tool_ran(&call.tool, started.elapsed().as_secs_f64());
            let outcome = match result {
                Ok(output) => Ok(output),
                Err(ToolError::Failed(failure)) => Err(failure.0),
                Err(ToolError::Internal(err)) => Err(format!("{err:#}")),
            };
            let mut w = self.ctx.store.write_as(lease).await?;
            self.ctx.record_result(&mut w, call, outcome).await?;
            w.commit().await?;
            return Ok(());
        }
        let mut w = self.ctx.store.write_as(lease).await?;
        if !calls::transition(&mut w.tx, &call.id, CallState::Approved, CallState::Executing, None).await? {
            return Ok(()); // someone else ran or canceled it
        }
        let answer = tool.as_ref().filter(|t| t.spec().name == answer::NAME).and(answer::text_of(&call.args()).map(str::to_owned));
        w.append(&call.conversation_id, EventBody::ToolStarted { task_id: call.task_id.clone(), call_id: call.id.clone() }).await?;
        let outcome = match tool {
            None => Err(format!("unknown tool {}", call.tool)),
            Some(tool) => self.ctx.run_in_savepoint(&mut w, tool.as_ref(), &call.args()).await?,
        };
        let approved_answer = answer.filter(|_| outcome.is_ok());
        let approved_plan = call.tool == plan::NAME && outcome.is_ok();
        self.ctx.record_result(&mut w, call, outcome).await?;
        if let Some(text) = approved_answer {
            self.send_answer(&mut w, call, text).await?;
        }
        if approved_plan {
            let args = call.args();
            self.grant_plan(&mut w, call, &plan::steps(&args)).await?;
        }
        if let Some(hook) = &self.ctx.before_commit {
            hook(&call.id)?;
        }
        w.commit().await?;
        Ok(())
    }

    /// An approved final answer: the agent's message, and the turn is done.
    async fn send_answer(&self, w: &mut Write, call: &CallRow, text: String) -> crate::Result<()> {
        let load = async |w: &mut Write| tasks::get(&mut *w.tx, &call.task_id).await?.context("BUG: a call's task exists");
        let mut task = load(w).await?;
        let worker = task.parent_call_id.as_ref().and(task.agent.clone());
        w.append(&call.conversation_id, EventBody::AssistantMessage { task_id: task.id.clone(), text, agent: worker }).await?;
        // The task state machine goes input_required → working → completed (domain/src/states.rs).
        if task.status() == TaskStatus::InputRequired {
            tasks::transition(w, &task, &[TaskStatus::InputRequired], TaskStatus::Working, None).await?;
            task = load(w).await?;
        }
        tasks::transition(w, &task, &[TaskStatus::Working], TaskStatus::Completed, None).await?;
        Ok(())
    }

    /// A call found `executing` by a driver was cut off by a crash: it is never re-run silently.
    pub(super) async fn interrupted(&self, call: &CallRow, lease: &Lease) -> crate::Result<()> {
        let mut w = self.ctx.store.write_as(lease).await?;
        if calls::transition(&mut w.tx, &call.id, CallState::Executing, CallState::Failed, None).await? {
            let output = json!({ "status": "interrupted", "error": "interrupted — not retried", "message": "interrupted — not retried" });
            w.audit(
                AuditKind::ToolOutcome,
                SYSTEM,
                json!({ "call_id": call.id, "conversation_id": call.conversation_id, "tool": call.tool, "ok": false, "output": output }),
            );
            w.append(
                &call.conversation_id,
                EventBody::ToolResult { task_id: call.task_id.clone(), call_id: call.id.clone(), ok: false, output },
            )
            .await?;
        }
        w.commit().await?;
        Ok(())
    }
}
