//! The model behind an agent: given the conversation so far, it answers and/or proposes tool
//! calls. The built-in `ScriptedModel` is the default; real providers implement the same trait.

pub mod scripted;

use app::domain::{ApprovalOutcome, Event, EventBody};
use async_trait::async_trait;
use serde_json::Value;

use crate::{agents::Agent, tools::ToolSpec};

#[derive(Clone, Debug, PartialEq)]
pub struct ProposedCall {
    pub id: String,
    pub tool: String,
    pub args: Value,
}

/// The conversation as a model sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum ChatMessage {
    User { text: String },
    Assistant { text: Option<String>, calls: Vec<ProposedCall> },
    ToolResult { call_id: String, tool: String, ok: bool, output: Value, note: Option<String> },
}

pub struct ModelRequest<'a> {
    pub agent: &'a Agent,
    pub tools: Vec<&'a ToolSpec>,
    pub messages: Vec<ChatMessage>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelReply {
    pub text: Option<String>,
    pub calls: Vec<ProposedCall>,
}

#[async_trait]
pub trait Model: Send + Sync {
    async fn respond(&self, request: &ModelRequest<'_>) -> anyhow::Result<ModelReply>;
}

/// Rebuilds what the model has seen and been told from the event log. A call's result says
/// when a human edited its arguments, so the model knows what really ran.
pub fn transcript(events: &[Event]) -> Vec<ChatMessage> {
    let mut messages: Vec<ChatMessage> = Vec::new();
    let mut tools_by_call = std::collections::HashMap::new();
    let mut edits = std::collections::HashMap::new();
    for event in events {
        match &event.body {
            EventBody::UserMessage { text, .. } => messages.push(ChatMessage::User { text: text.clone() }),
            EventBody::AssistantMessage { text, .. } => {
                messages.push(ChatMessage::Assistant { text: Some(text.clone()), calls: Vec::new() })
            }
            EventBody::ToolCall { call_id, tool, args, .. } => {
                tools_by_call.insert(call_id.clone(), tool.clone());
                let call = ProposedCall { id: call_id.clone(), tool: tool.clone(), args: args.clone() };
                match messages.last_mut() {
                    Some(ChatMessage::Assistant { calls, .. }) => calls.push(call),
                    _ => messages.push(ChatMessage::Assistant { text: None, calls: vec![call] }),
                }
            }
            EventBody::ApprovalDecided { call_id, outcome: ApprovalOutcome::Approved, edited_args: Some(edited), .. } => {
                edits.insert(call_id.clone(), edited.clone());
            }
            EventBody::ToolResult { call_id, ok, output, .. } => messages.push(ChatMessage::ToolResult {
                call_id: call_id.clone(),
                tool: tools_by_call.get(call_id).cloned().unwrap_or_default(),
                ok: *ok,
                output: output.clone(),
                note: edits.get(call_id).map(|args| format!("A human edited the arguments before approving; the call ran with {args}")),
            }),
            _ => {}
        }
    }
    messages
}
