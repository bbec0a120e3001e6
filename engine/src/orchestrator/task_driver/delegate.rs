//! Sub-agents (supervisor → worker). A supervisor's `ask_<worker>` call, once it may
//! run, starts a worker task in the same conversation (one transaction with marking the call
//! executing). The worker is driven like any task, by its own agent and model, and its gated
//! calls wait for humans as cards marked with its name. When the worker's task ends, its answer
//! becomes the delegating call's result and the supervisor resumes. Everything is in the store,
//! so a restart picks up either side where it stopped.

use std::sync::Arc;

use anyhow::Context;
use domain::{CallState, Event, EventBody, TaskStatus};
use serde_json::json;

use super::TaskDriver;
use crate::{
    model::{ChatMessage, transcript},
    store::{
        calls::{self, CallRow},
        events,
        tasks::{self, Lease, TaskRow},
    },
};

/// What a driver should do about a supervisor's delegating call left `executing`.
pub(super) enum Delegation {
    /// The worker is still on it: drive the worker; the supervisor waits.
    Waiting,
    /// The result was recorded (or someone else recorded it): go on.
    Done,
}

impl TaskDriver {
    /// `approved → executing` and the worker's task, in one transaction.
    pub(super) async fn start_worker(self: &Arc<Self>, call: &CallRow, worker: &str, lease: &Lease) -> crate::Result<()> {
        let mut w = self.ctx.store.write_as(lease).await?;
        if !calls::transition(&mut w.tx, &call.id, CallState::Approved, CallState::Executing, None).await? {
            return Ok(());
        }
        w.append(&call.conversation_id, EventBody::ToolStarted { task_id: call.task_id.clone(), call_id: call.id.clone() }).await?;
        let worker_task = tasks::insert_worker(&mut w, &call.conversation_id, worker, &call.id).await?;
        w.commit().await?;
        self.trigger(&worker_task);
        Ok(())
    }

    /// For a delegating call found `executing`: wait for its worker, or take the worker's answer.
    pub(super) async fn follow_worker(self: &Arc<Self>, call: &CallRow, lease: &Lease) -> crate::Result<Delegation> {
        let worker = tasks::worker_for_call(&self.ctx.store, &call.id).await?.context("BUG: a delegating call executes with its worker")?;
        if !worker.status().is_final() {
            self.trigger(&worker.id);
            return Ok(Delegation::Waiting);
        }
        self.finish_worker(&worker, lease).await?;
        Ok(Delegation::Done)
    }

    /// Records a finished worker's answer as its delegating call's result; the supervisor resumes.
    /// `lease`: the driver's own (the worker's, or the supervisor's when it found the answer).
    pub(super) async fn finish_worker(self: &Arc<Self>, worker: &TaskRow, lease: &Lease) -> crate::Result<()> {
        let Some(parent_call_id) = &worker.parent_call_id else { return Ok(()) };
        let agent = worker.agent.clone().unwrap_or_default();
        let history = events::after(&self.ctx.store, &worker.conversation_id, 0).await?;
        let answer = history.iter().rev().find_map(|e| match &e.body {
            EventBody::AssistantMessage { task_id, text, .. } if task_id == &worker.id => Some(text.clone()),
            _ => None,
        });
        let status = worker.status();
        let message = history.iter().rev().find_map(|e| match &e.body {
            EventBody::TaskStatus { task_id, message, .. } if task_id == &worker.id => message.clone(),
            _ => None,
        });
        let outcome = match status {
            TaskStatus::Completed => Ok(
                json!({ "agent": agent, "answer": answer, "message": format!("{agent}: {}", answer.as_deref().unwrap_or("(no answer)")) }),
            ),
            _ => Err(format!("the {agent} agent {}: {}", status.as_str(), message.as_deref().unwrap_or("no answer"))),
        };
        let mut w = self.ctx.store.write_as(lease).await?;
        let Some(call) = calls::get(&mut *w.tx, parent_call_id).await? else { return Ok(()) };
        if call.state != CallState::Executing {
            return Ok(()); // recorded already (or the supervisor's task was aborted)
        }
        self.ctx.record_result(&mut w, &call, outcome).await?;
        w.commit().await?;
        self.trigger(&call.task_id);
        Ok(())
    }

    /// What the model driving `task` has seen: a worker sees its task as the user's request
    /// and only its own steps; a supervisor sees everything but its workers' steps.
    pub(super) async fn transcript_for(&self, task: &TaskRow, history: &[Event]) -> crate::Result<Vec<ChatMessage>> {
        if let Some(parent_call_id) = &task.parent_call_id {
            let call = calls::get(&self.ctx.store, parent_call_id).await?.context("BUG: a worker's delegating call exists")?;
            let request = call.args()["task"].as_str().unwrap_or_default().to_owned();
            let own: Vec<Event> = history.iter().filter(|e| *e.body.task_id() == task.id).cloned().collect();
            let mut messages = vec![ChatMessage::User { text: request }];
            messages.extend(transcript(&own));
            return Ok(messages);
        }
        let workers = worker_ids(history);
        if workers.is_empty() {
            return Ok(transcript(history));
        }
        let visible: Vec<Event> = history.iter().filter(|e| !workers.contains(&e.body.task_id())).cloned().collect();
        Ok(transcript(&visible))
    }
}

/// The conversation's worker tasks, from its log: a worker's task is created with a
/// `task-status` event that names its delegating call (`tasks::insert_worker`), in the same
/// transaction. Read from the history the step already holds, so a model step makes no query for it.
fn worker_ids(history: &[Event]) -> Vec<&domain::TaskId> {
    let mut workers = Vec::new();
    for event in history {
        if let EventBody::TaskStatus { task_id, parent_call_id: Some(_), .. } = &event.body
            && !workers.contains(&task_id)
        {
            workers.push(task_id);
        }
    }
    workers
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(seq: i64, body: EventBody) -> Event {
        Event { seq, conversation_id: "c".into(), at: String::new(), body }
    }

    fn status(task: &str, parent: Option<&str>) -> EventBody {
        EventBody::TaskStatus { task_id: task.into(), status: TaskStatus::Working, message: None, parent_call_id: parent.map(Into::into) }
    }

    #[test]
    fn workers_are_the_tasks_started_for_a_delegating_call_each_named_once() {
        let history = vec![
            event(1, EventBody::UserMessage { task_id: "sup".into(), text: "hi".into(), reply_to: None, client_id: None }),
            event(2, status("sup", None)),
            event(3, status("w1", Some("call-1"))),
            event(4, status("w1", Some("call-1"))),
            event(5, status("w2", Some("call-2"))),
        ];
        let workers: Vec<&str> = worker_ids(&history).into_iter().map(AsRef::as_ref).collect();
        assert_eq!(workers, ["w1", "w2"]);
        assert!(worker_ids(&history[..3]).len() == 1 && worker_ids(&history[..2]).is_empty());
    }
}
