//! Calls an outside client proposes (the MCP approval gateway, server/src/protocols/mcp/). Each
//! is a task whose "model" is the client: its one step is the call, recorded exactly as a model's
//! call is (the agent's allow-list, gates, grants, approvals, audit and events), and the next step
//! ends the task without asking a model. So there is no second state machine: the queue, the chat,
//! every channel and every replica see and decide these calls like any other.
//!
//! An approved call runs only while its client still waits for the outcome (`client_calls::mark`
//! heartbeats); when the client is gone the call is recorded as not run (docs/mcp-gateway.md).

use std::sync::Arc;

use domain::{CallState, EventBody, TaskId, TaskStatus, wire::Conversation};
use serde_json::Value;

use super::Orchestrator;
use crate::{
    model::{ModelReply, ProposedCall},
    store::{
        Scope,
        calls::{self, CallRow},
        client_calls::{self, ClientCall},
        tasks::{self, Lease},
        time::{new_call_id, now_ms},
    },
};

/// What the client "replies" at a step of its task: the call first, then nothing (the task ends).
pub(super) fn reply(call: &ClientCall, step: i64) -> ModelReply {
    let calls = match step {
        0 => vec![ProposedCall { id: new_call_id(), tool: call.tool.clone(), args: call.args(), confidence: None }],
        _ => Vec::new(),
    };
    ModelReply { text: None, calls, usage: None }
}

impl Orchestrator {
    /// Records a call `client` proposes in `conversation` as a new task and starts driving it.
    /// The tool must be one of the conversation's agent's tools (the gateway checks it first, with
    /// the protocol's own error).
    pub async fn propose_call(
        self: &Arc<Self>,
        conversation: &Conversation,
        client: &str,
        tool: &str,
        args: &Value,
    ) -> crate::Result<TaskId> {
        let agent = self.agents.get(&conversation.agent).ok_or_else(|| anyhow::anyhow!("no agent {:?}", conversation.agent))?;
        if !agent.tools.iter().any(|t| t == tool) {
            return Err(anyhow::anyhow!("agent {} has no tool {tool:?}", agent.name).into());
        }
        let cid = &conversation.id;
        let mut w = self.store.write(Scope::Conversation(cid)).await?;
        let task_id = tasks::insert(&mut w.tx, cid).await?;
        let call = ClientCall {
            task_id: task_id.clone(),
            conversation_id: cid.clone(),
            client: client.to_owned(),
            tool: tool.to_owned(),
            args: args.clone(),
            seen_at: now_ms(),
            gone_at: None,
        };
        client_calls::insert(&mut w.tx, &call).await?;
        // The chat says who asked: the card follows as the call is classified.
        let text = format!("{client} asks to run {tool}");
        w.append(cid, EventBody::UserMessage { task_id: task_id.clone(), text, reply_to: None }).await?;
        w.append(cid, EventBody::TaskStatus { task_id: task_id.clone(), status: TaskStatus::Working, message: None, parent_call_id: None })
            .await?;
        w.commit().await?;
        self.trigger(&task_id);
        Ok(task_id)
    }

    /// An approved call whose client stopped waiting: recorded as not run, never run.
    pub(super) async fn client_gone(&self, call: &CallRow, client: &ClientCall, lease: &Lease) -> crate::Result<()> {
        let mut w = self.store.write_as(lease).await?;
        if !calls::transition(&mut w.tx, &call.id, CallState::Approved, CallState::Executing, None).await? {
            return Ok(()); // someone else ran or canceled it
        }
        let message = format!(
            "Not run: {} stopped waiting for the decision, so the approved call was not made (it would have answered no one)",
            client.client
        );
        self.record_result(&mut w, call, Err(message)).await?;
        w.commit().await?;
        Ok(())
    }
}
