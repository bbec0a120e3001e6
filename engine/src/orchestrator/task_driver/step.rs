//! Driving one task: run approved calls (`execute.rs`), report interrupted ones, and when
//! nothing of the current step is pending, ask the model for the next step (`model_step.rs`).

use std::sync::Arc;

use domain::{CallState, TaskStatus};

use super::{Drove, TaskDriver, delegate::Delegation};
use crate::store::{
    calls, client_calls,
    tasks::{self, Lease, TaskRow},
};

/// A bound on model steps per task, against a model that never stops calling tools.
const MAX_STEPS: i64 = 16;

impl TaskDriver {
    /// Advances the task as far as it can go without a human.
    /// Every write it makes is fenced by `lease`: once the lease is lost, nothing more is stored.
    pub(super) async fn drive(self: &Arc<Self>, lease: &Lease) -> crate::Result<Drove> {
        let task_id = &lease.task_id;
        // Whether an outside client proposed this task's call (the MCP gateway): read once a drive,
        // with the task.
        let Some((first, client)) = client_calls::task_with_call(&self.ctx.store, task_id).await? else {
            return Ok(Drove::Holding);
        };
        let mut read = Some(first);
        loop {
            let task = match read.take() {
                Some(task) => task,
                None => match tasks::get(&self.ctx.store, task_id).await? {
                    Some(task) => task,
                    None => return Ok(Drove::Holding),
                },
            };
            if task.status().is_final() {
                // A finished worker hands its answer to its supervisor.
                self.finish_worker(&task, lease).await?;
                return Ok(Drove::Holding);
            }
            let calls = calls::for_step(&self.ctx.store, task_id, task.steps).await?;
            if let Some(call) = calls.iter().find(|c| c.state == CallState::Approved) {
                self.execute(call, client.is_some(), lease).await?;
                continue;
            }
            if let Some(call) = calls.iter().find(|c| c.state == CallState::Executing) {
                if self.ctx.tools.get(&call.tool).is_some_and(|t| t.delegate().is_some()) {
                    match self.follow_worker(call, lease).await? {
                        Delegation::Waiting => return Ok(Drove::Holding),
                        Delegation::Done => continue,
                    }
                }
                self.interrupted(call, lease).await?;
                continue;
            }
            if calls.iter().any(|c| c.state == CallState::PendingApproval) {
                return Ok(Drove::Holding);
            }
            if task.status() == TaskStatus::InputRequired {
                // Every approval was decided; the decision normally flips this already.
                let mut w = self.ctx.store.write_as(lease).await?;
                tasks::transition(&mut w, &task, &[TaskStatus::InputRequired], TaskStatus::Working, None).await?;
                w.commit().await?;
                continue;
            }
            if task.steps >= MAX_STEPS {
                self.fail(&task, format!("the agent stopped after {MAX_STEPS} steps without an answer"), lease).await?;
                return Ok(Drove::Holding);
            }
            if self.model_step(&task, client.as_ref(), lease).await? == Drove::Released {
                return Ok(Drove::Released);
            }
        }
    }

    pub(super) async fn fail(&self, task: &TaskRow, message: String, lease: &Lease) -> crate::Result<()> {
        let mut w = self.ctx.store.write_as(lease).await?;
        tasks::transition(&mut w, task, &[TaskStatus::Working, TaskStatus::InputRequired], TaskStatus::Failed, Some(message)).await?;
        w.commit().await?;
        Ok(())
    }
}
