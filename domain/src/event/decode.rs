//! The browser's decoder of events: the same JSON the derive reads on the server, read from a
//! `serde_json::Value` field by field. serde decodes an internally tagged enum inside a flattened
//! field through a buffered copy of the input, once for maps and once for sequences, for every
//! variant: about 89 KB of the WASM for this one type (docs/performance-notes.md, "The bundle").
//! `domain/tests/fold_props.rs` checks that both decoders read every event, and every event with a
//! field missing, the same way.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{Event, EventBody};

/// An event from its JSON, as the derived `Deserialize` reads it: unknown fields are ignored,
/// optional ones may be missing or null, and a missing required one is an error naming it.
pub fn event_from_value(value: Value) -> Result<Event, String> {
    let Value::Object(map) = value else { return Err("an event is a JSON object".to_owned()) };
    let mut f = Fields(map);
    let seq = f.i64("seq")?;
    let conversation_id = f.string("conversation_id")?.into();
    let at = f.string("at")?;
    let kind = f.string("type")?;
    let body = body(&kind, &mut f)?;
    Ok(Event { seq, conversation_id, at, body })
}

fn body(kind: &str, f: &mut Fields) -> Result<EventBody, String> {
    let task_id = f.string("task_id")?.into();
    Ok(match kind {
        "user-message" => EventBody::UserMessage {
            task_id,
            text: f.string("text")?,
            reply_to: f.opt_string("reply_to")?.map(Into::into),
            client_id: f.opt_string("client_id")?,
        },
        "assistant-message" => EventBody::AssistantMessage { task_id, text: f.string("text")?, agent: f.opt_string("agent")? },
        "tool-call" => EventBody::ToolCall {
            task_id,
            call_id: f.string("call_id")?.into(),
            tool: f.string("tool")?,
            agent: f.string("agent")?,
            args: f.value("args")?,
            summary: f.string("summary")?,
            risk: f.parse("risk")?,
            grant_id: f.opt_string("grant_id")?.map(Into::into),
            warnings: f.strings_or_none("warnings")?,
            shadow_gate: f.opt_string("shadow_gate")?,
            why: f.opt_string("why")?,
        },
        "grant-created" => EventBody::GrantCreated {
            task_id,
            grant_id: f.string("grant_id")?.into(),
            tool: f.string("tool")?,
            created_by: f.string("created_by")?,
            expires_at: f.opt_string("expires_at")?,
            max_uses: f.opt_parse("max_uses")?,
            args: f.opt_value("args"),
            policy_version: f.opt_string("policy_version")?,
            gate: f.opt_string("gate")?,
            bounds: f.opt_value("bounds"),
        },
        "grant-revoked" => EventBody::GrantRevoked { task_id, grant_id: f.string("grant_id")?.into(), revoked_by: f.string("revoked_by")? },
        "approval-required" => EventBody::ApprovalRequired {
            task_id,
            approval_id: f.string("approval_id")?.into(),
            call_id: f.string("call_id")?.into(),
            tool: f.string("tool")?,
            args: f.value("args")?,
            gate: f.string("gate")?,
            summary: f.string("summary")?,
            risk: f.parse("risk")?,
            deadline: f.string("deadline")?,
            in_chat: f.parse_or_default("in_chat")?,
            rules: f.parse_or_default("rules")?,
            assessment: f.opt_parse("assessment")?,
            resent: f.parse_or_default("resent")?,
            spend: f.opt_parse("spend")?,
            approvers: f.opt_parse("approvers")?,
            suggestion: f.opt_parse("suggestion")?,
        },
        "confirmation-asked" => EventBody::ConfirmationAsked {
            task_id,
            approval_id: f.string("approval_id")?.into(),
            call_id: f.string("call_id")?.into(),
            question: f.string("question")?,
        },
        "approval-decided" => EventBody::ApprovalDecided {
            task_id,
            approval_id: f.string("approval_id")?.into(),
            call_id: f.string("call_id")?.into(),
            outcome: f.parse("outcome")?,
            decided_by: f.string("decided_by")?,
            reason: f.opt_string("reason")?,
            original_args: f.value("original_args")?,
            edited_args: f.opt_value("edited_args"),
            summary: f.opt_string("summary")?,
        },
        "approval-escalated" => EventBody::ApprovalEscalated {
            task_id,
            approval_id: f.string("approval_id")?.into(),
            call_id: f.string("call_id")?.into(),
            escalated_by: f.string("escalated_by")?,
            to: f.opt_string("to")?,
            deciders: f.strings_or_none("deciders")?,
            deadline: f.string("deadline")?,
        },
        "approval-counted" => EventBody::ApprovalCounted {
            task_id,
            approval_id: f.string("approval_id")?.into(),
            call_id: f.string("call_id")?.into(),
            by: f.string("by")?,
            approved_by: f.parse("approved_by")?,
            quorum: f.parse("quorum")?,
        },
        "approval-reminder" => EventBody::ApprovalReminder {
            task_id,
            approval_id: f.string("approval_id")?.into(),
            call_id: f.string("call_id")?.into(),
            reminder: f.parse("reminder")?,
            of: f.parse("of")?,
        },
        "tool-started" => EventBody::ToolStarted { task_id, call_id: f.string("call_id")?.into() },
        "tool-result" => {
            EventBody::ToolResult { task_id, call_id: f.string("call_id")?.into(), ok: f.parse("ok")?, output: f.value("output")? }
        }
        // Its usage is flattened: what is left of the object once the other fields are taken.
        "model-usage" => {
            let model = f.string("model")?;
            let usage = serde_json::from_value(Value::Object(std::mem::take(&mut f.0))).map_err(|e| e.to_string())?;
            EventBody::ModelUsage { task_id, model, usage }
        }
        "task-status" => EventBody::TaskStatus {
            task_id,
            status: f.parse("status")?,
            message: f.opt_string("message")?,
            parent_call_id: f.opt_string("parent_call_id")?.map(Into::into),
        },
        other => return Err(format!("unknown event type `{other}`")),
    })
}

/// An event's fields, each taken once.
struct Fields(Map<String, Value>);

impl Fields {
    fn required(&mut self, key: &str) -> Result<Value, String> {
        self.0.remove(key).ok_or_else(|| format!("missing field `{key}`"))
    }

    /// Missing and null are both none, as for an `Option` field of the derive.
    fn optional(&mut self, key: &str) -> Option<Value> {
        self.0.remove(key).filter(|v| !v.is_null())
    }

    fn string(&mut self, key: &str) -> Result<String, String> {
        match self.required(key)? {
            Value::String(s) => Ok(s),
            _ => Err(format!("`{key}` is not a string")),
        }
    }

    fn opt_string(&mut self, key: &str) -> Result<Option<String>, String> {
        match self.optional(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("`{key}` is not a string")),
        }
    }

    fn i64(&mut self, key: &str) -> Result<i64, String> {
        self.required(key)?.as_i64().ok_or_else(|| format!("`{key}` is not an integer"))
    }

    /// Any JSON, null included.
    fn value(&mut self, key: &str) -> Result<Value, String> {
        self.required(key)
    }

    fn opt_value(&mut self, key: &str) -> Option<Value> {
        self.optional(key)
    }

    /// A list that may be left out (`#[serde(default)]`); null is an error there, as for the derive.
    fn strings_or_none(&mut self, key: &str) -> Result<Vec<String>, String> {
        if self.0.contains_key(key) { self.parse(key) } else { Ok(Vec::new()) }
    }

    fn parse<T: DeserializeOwned>(&mut self, key: &str) -> Result<T, String> {
        let value = self.required(key)?;
        serde_json::from_value(value).map_err(|e| format!("`{key}`: {e}"))
    }

    fn opt_parse<T: DeserializeOwned>(&mut self, key: &str) -> Result<Option<T>, String> {
        self.optional(key).map(|value| serde_json::from_value(value).map_err(|e| format!("`{key}`: {e}"))).transpose()
    }

    /// A field the derive defaults when it is left out (`#[serde(default)]`).
    fn parse_or_default<T: DeserializeOwned + Default>(&mut self, key: &str) -> Result<T, String> {
        if self.0.contains_key(key) { self.parse(key) } else { Ok(T::default()) }
    }
}

/// The browser reads events with the decoder above; the server keeps the derive.
#[cfg(target_arch = "wasm32")]
impl<'de> serde::Deserialize<'de> for Event {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        event_from_value(Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}
