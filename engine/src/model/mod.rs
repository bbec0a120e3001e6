//! The model behind an agent: given the conversation so far, it answers and/or proposes tool
//! calls. The built-in `ScriptedModel` is the default; real providers implement the same trait.

pub mod openai;
pub mod scripted;

use async_trait::async_trait;
use domain::CallId;
use domain::{ApprovalOutcome, Event, EventBody};
use serde_json::Value;

use crate::{agents::Agent, tools::ToolSpec};

#[derive(Clone, Debug, PartialEq)]
pub struct ProposedCall {
    /// Countersign's id (a provider's own call ids are replaced: they repeat across replies).
    pub id: CallId,
    pub tool: String,
    pub args: Value,
    /// How sure the model is of this call, 0–1, when it says (docs/config.md, "Confidence").
    pub confidence: Option<f64>,
}

/// The conversation as a model sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum ChatMessage {
    User {
        text: String,
    },
    Assistant {
        text: Option<String>,
        calls: Vec<ProposedCall>,
    },
    ToolResult {
        call_id: CallId,
        tool: String,
        ok: bool,
        output: Value,
        note: Option<String>,
    },
    /// A reviewer did not let the agent's final answer through (a `final_response` gate).
    AnswerRejected {
        draft: String,
        reason: Option<String>,
    },
}

/// A person's text (a rejection's reason) set in parentheses inside a sentence that ends with its
/// own period: without its own final period, so the sentence never ends ".)." ("too much." →
/// "too much"); an ellipsis stays.
pub(crate) fn clause(text: &str) -> &str {
    let text = text.trim();
    match text.strip_suffix('.') {
        Some(short) if !short.ends_with('.') => short.trim_end(),
        _ => text,
    }
}

pub struct ModelRequest<'a> {
    pub agent: &'a Agent,
    pub tools: Vec<&'a ToolSpec>,
    pub messages: Vec<ChatMessage>,
    /// Called with `(offset, text)` for each piece of reply text as it streams in; offset 0
    /// starts the reply over (a retry).
    pub on_text: Option<&'a TextSink>,
}

pub type TextSink = dyn Fn(usize, &str) + Send + Sync;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelReply {
    pub text: Option<String>,
    pub calls: Vec<ProposedCall>,
    /// Tokens in and out, when the provider reports them (no cost: the task driver prices them).
    pub usage: Option<domain::wire::Usage>,
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
    let mut drafts = std::collections::HashMap::new();
    for event in events {
        match &event.body {
            // A yes/no reply to a chat confirmation reaches the model as the decision it made.
            EventBody::UserMessage { reply_to: Some(_), .. } => {}
            EventBody::UserMessage { text, .. } => messages.push(ChatMessage::User { text: text.clone() }),
            EventBody::AssistantMessage { text, .. } => {
                messages.push(ChatMessage::Assistant { text: Some(text.clone()), calls: Vec::new() })
            }
            // A held final answer is the agent's text, not a call it made: the model hears of it
            // only when a reviewer sends it back.
            EventBody::ToolCall { call_id, tool, args, .. } if tool == crate::tools::answer::NAME => {
                drafts.insert(call_id.clone(), crate::tools::answer::text_of(args).unwrap_or_default().to_owned());
            }
            EventBody::ToolResult { call_id, ok, output, .. } if drafts.contains_key(call_id) => {
                if let (false, Some(draft)) = (*ok, drafts.remove(call_id)) {
                    let reason = ["reason", "guidance", "error"]
                        .iter()
                        .find_map(|key| output.get(*key).and_then(Value::as_str).filter(|r| !r.is_empty()))
                        .map(str::to_owned);
                    messages.push(ChatMessage::AnswerRejected { draft, reason });
                }
            }
            EventBody::ToolCall { call_id, tool, args, .. } => {
                tools_by_call.insert(call_id.clone(), tool.clone());
                let call = ProposedCall { id: call_id.clone(), tool: tool.clone(), args: args.clone(), confidence: None };
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

/// The model for each agent, built from the agent configuration at start-up.
pub struct Models {
    by_agent: std::collections::HashMap<String, std::sync::Arc<dyn Model>>,
}

impl Models {
    /// `override_all` (tests) replaces every agent's model.
    pub fn build(agents: &crate::agents::AgentsConfig, override_all: Option<std::sync::Arc<dyn Model>>) -> anyhow::Result<Self> {
        use crate::agents::ModelConfig;
        let mut by_agent = std::collections::HashMap::new();
        for agent in &agents.agents {
            let model: std::sync::Arc<dyn Model> = match (&override_all, &agent.model) {
                (Some(model), _) => model.clone(),
                (None, ModelConfig::Scripted) => std::sync::Arc::new(scripted::ScriptedModel::default()),
                (None, ModelConfig::Openai { base_url, model, api_key_env, temperature, max_retries, timeout_secs }) => {
                    let api_key = match api_key_env {
                        Some(var) => Some(
                            std::env::var(var)
                                .map_err(|_| anyhow::anyhow!("agent {:?}: model.api_key_env names {var}, which is not set", agent.name))?,
                        ),
                        None => None,
                    };
                    let timeout = std::time::Duration::from_secs_f64(*timeout_secs);
                    std::sync::Arc::new(openai::OpenAiModel::new(base_url, model, api_key, *temperature, *max_retries, timeout)?)
                }
            };
            by_agent.insert(agent.name.clone(), model);
        }
        Ok(Self { by_agent })
    }

    pub fn for_agent(&self, name: &str) -> Option<&std::sync::Arc<dyn Model>> {
        self.by_agent.get(name)
    }
}
