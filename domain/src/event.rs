//! The event log of a conversation (docs/architecture.md, decision 1). Every event has a per-conversation
//! sequence number; the SSE stream sends `body.name()` as the event name and `seq` as its `id:`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod decode;
pub use decode::event_from_value;

pub use super::states::{ApprovalState, CallState, Risk, TaskStatus};
use super::{
    ids::{ApprovalId, CallId, ConversationId, GrantId, TaskId},
    rules::DecisionRules,
};

/// One stored event of a conversation. The browser decodes it by hand ([`event_from_value`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Event {
    pub seq: i64,
    pub conversation_id: ConversationId,
    /// RFC 3339 time the event was appended.
    pub at: String,
    #[serde(flatten)]
    pub body: EventBody,
}

/// What happened. Serialized with `"type": "<kebab-case name>"`, which is also the SSE event name.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum EventBody {
    UserMessage {
        task_id: TaskId,
        text: String,
        /// The approval this message answered in the chat (a yes/no confirmation). Such
        /// a reply is shown but not sent to the model: the decision it made is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply_to: Option<ApprovalId>,
        /// The id the client gave the message, when it gave one (an AG-UI client's own message
        /// id): it names the message back to that client (docs/ag-ui.md).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_id: Option<String>,
    },
    AssistantMessage {
        task_id: TaskId,
        text: String,
        /// Set when a worker agent (a sub-agent another agent delegated to) wrote it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// The model proposed a call. Every call gets one, gated or not.
    ToolCall {
        task_id: TaskId,
        call_id: CallId,
        tool: String,
        agent: String,
        args: Value,
        summary: String,
        risk: Risk,
        /// The grant that let a gated call through without asking, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grant_id: Option<GrantId>,
        /// Where the call would do something other than it seems, or than the user asked for
        /// (e.g. more than is left to refund, an action the request did not mention).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        warnings: Vec<String>,
        /// A shadow gate (`mode = "shadow"`) that would have stopped the call, which ran unasked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shadow_gate: Option<String>,
        /// Why it was asked, or why not (a grant, a shadow gate, an earlier refusal): the gate, its
        /// rule and what the rule looked at. None for a call no gate covers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
    /// A human allowed `tool` in this conversation from now on (until revoked, expired or used up).
    GrantCreated {
        task_id: TaskId,
        grant_id: GrantId,
        tool: String,
        created_by: String,
        /// RFC 3339.
        expires_at: Option<String>,
        max_uses: Option<i64>,
        /// A step of an approved plan: lets through once, in this task, only a call of `tool`
        /// with exactly these arguments. None for a standing grant ("always allow").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        args: Option<Value>,
        /// The version of the agent configuration it was made under.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        policy_version: Option<String>,
        /// The gate whose calls it covers (older grants: none, and they cover nothing).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gate: Option<String>,
        /// Bounds on the arguments it lets through (`{"exact": args}`, `{"at_most": {...}}`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bounds: Option<Value>,
    },
    GrantRevoked {
        task_id: TaskId,
        grant_id: GrantId,
        revoked_by: String,
    },
    /// A gate stopped the call; it waits for a human until `deadline`.
    ApprovalRequired {
        task_id: TaskId,
        approval_id: ApprovalId,
        call_id: CallId,
        tool: String,
        args: Value,
        gate: String,
        summary: String,
        risk: Risk,
        /// RFC 3339.
        deadline: String,
        /// Answered by the user's yes/no reply in the chat rather than the card's buttons.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        in_chat: bool,
        /// What a decision must include (older events: the defaults).
        #[serde(default, skip_serializing_if = "DecisionRules::is_default")]
        rules: DecisionRules,
        /// Why the call is risky (older events: none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        assessment: Option<super::call_facts::RiskAssessment>,
        /// 0 for the first request; n when nobody decided in time and the approval is asked again
        /// (the `retry` timeout action) for the n-th time, with the new `deadline`.
        #[serde(default, skip_serializing_if = "is_zero")]
        resent: u32,
        /// A budget gate asked: what was spent so far and its limits.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        spend: Option<super::call_facts::Spend>,
        /// Only these may decide (the gate's `approvers`, as people when it was asked).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        approvers: Option<Box<super::rules::Approvers>>,
        /// "Always allow" offered to someone who approved calls like it before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        suggestion: Option<Box<super::call_facts::GrantSuggestion>>,
    },
    /// The agent asks in the chat whether to run a call (again, after an unclear answer).
    ConfirmationAsked {
        task_id: TaskId,
        approval_id: ApprovalId,
        call_id: CallId,
        question: String,
    },
    ApprovalDecided {
        task_id: TaskId,
        approval_id: ApprovalId,
        call_id: CallId,
        outcome: ApprovalOutcome,
        /// Who decided: a user name, or `system` for timeouts and aborts.
        decided_by: String,
        reason: Option<String>,
        original_args: Value,
        /// Present when the human changed the arguments before approving.
        edited_args: Option<Value>,
        /// With edited arguments: what the call now does, and what it was, e.g.
        /// "Refund $10.00 … (edited from: Refund $249.00 …)".
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    /// The approval was handed to the admins (on demand or by a timeout); only admins decide it now.
    ApprovalEscalated {
        task_id: TaskId,
        approval_id: ApprovalId,
        call_id: CallId,
        escalated_by: String,
        /// The named user or group it went to (none: the admins), and the people who may decide.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        deciders: Vec<String>,
        /// RFC 3339: the new deadline.
        deadline: String,
    },
    /// One of the people a quorum needs approved (the gate's `quorum`); it waits for the rest.
    ApprovalCounted {
        task_id: TaskId,
        approval_id: ApprovalId,
        call_id: CallId,
        /// Who approved just now, and everyone who has so far (in order).
        by: String,
        approved_by: Vec<String>,
        /// How many approvals it needs.
        quorum: u32,
    },
    /// The approval is still waiting: its deciders are reminded (the gate's `reminder_interval_secs`).
    ApprovalReminder {
        task_id: TaskId,
        approval_id: ApprovalId,
        call_id: CallId,
        /// This is reminder number `reminder` of `of`.
        reminder: u32,
        of: u32,
    },
    ToolStarted {
        task_id: TaskId,
        call_id: CallId,
    },
    ToolResult {
        task_id: TaskId,
        call_id: CallId,
        /// `false` when the tool failed (or was interrupted); the output then describes the error.
        ok: bool,
        output: Value,
    },
    /// One model step's tokens (from the provider's `usage`; the scripted model counts
    /// deterministically) and their cost when the model has a price.
    ModelUsage {
        task_id: TaskId,
        model: String,
        #[serde(flatten)]
        usage: super::call_facts::Usage,
    },
    TaskStatus {
        task_id: TaskId,
        status: TaskStatus,
        message: Option<String>,
        /// For a worker's task: the supervisor's delegating call it answers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_call_id: Option<CallId>,
    },
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl EventBody {
    /// The SSE event name (kebab-case), e.g. `approval-required`.
    /// Every event's name (the SSE event names a client listens for), in the order of [`Self::name`].
    pub const NAMES: [&'static str; 15] = [
        "user-message",
        "assistant-message",
        "tool-call",
        "grant-created",
        "grant-revoked",
        "approval-required",
        "confirmation-asked",
        "approval-decided",
        "approval-escalated",
        "approval-reminder",
        "approval-counted",
        "tool-started",
        "tool-result",
        "model-usage",
        "task-status",
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Self::UserMessage { .. } => "user-message",
            Self::AssistantMessage { .. } => "assistant-message",
            Self::ToolCall { .. } => "tool-call",
            Self::GrantCreated { .. } => "grant-created",
            Self::GrantRevoked { .. } => "grant-revoked",
            Self::ApprovalRequired { .. } => "approval-required",
            Self::ConfirmationAsked { .. } => "confirmation-asked",
            Self::ApprovalDecided { .. } => "approval-decided",
            Self::ApprovalEscalated { .. } => "approval-escalated",
            Self::ApprovalReminder { .. } => "approval-reminder",
            Self::ApprovalCounted { .. } => "approval-counted",
            Self::ToolStarted { .. } => "tool-started",
            Self::ToolResult { .. } => "tool-result",
            Self::ModelUsage { .. } => "model-usage",
            Self::TaskStatus { .. } => "task-status",
        }
    }

    pub fn task_id(&self) -> &TaskId {
        match self {
            Self::UserMessage { task_id, .. }
            | Self::AssistantMessage { task_id, .. }
            | Self::ToolCall { task_id, .. }
            | Self::GrantCreated { task_id, .. }
            | Self::GrantRevoked { task_id, .. }
            | Self::ApprovalRequired { task_id, .. }
            | Self::ConfirmationAsked { task_id, .. }
            | Self::ApprovalDecided { task_id, .. }
            | Self::ApprovalEscalated { task_id, .. }
            | Self::ApprovalReminder { task_id, .. }
            | Self::ApprovalCounted { task_id, .. }
            | Self::ToolStarted { task_id, .. }
            | Self::ToolResult { task_id, .. }
            | Self::ModelUsage { task_id, .. }
            | Self::TaskStatus { task_id, .. } => task_id,
        }
    }
}

/// How an approval ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalOutcome {
    Approved,
    Rejected,
    /// The deadline passed and the timeout action rejected it.
    Expired,
    /// The task was aborted while the approval was pending.
    Canceled,
    /// Not run; the human's guidance went to the model instead (a DEFER decision).
    Deferred,
}

impl ApprovalOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
            Self::Canceled => "canceled",
            Self::Deferred => "deferred",
        }
    }
}

impl From<ApprovalOutcome> for ApprovalState {
    fn from(outcome: ApprovalOutcome) -> Self {
        match outcome {
            ApprovalOutcome::Approved => Self::Approved,
            ApprovalOutcome::Rejected => Self::Rejected,
            ApprovalOutcome::Expired => Self::Expired,
            ApprovalOutcome::Canceled => Self::Canceled,
            ApprovalOutcome::Deferred => Self::Deferred,
        }
    }
}

impl From<ApprovalOutcome> for CallState {
    /// A pending call takes its approval's outcome as its state.
    fn from(outcome: ApprovalOutcome) -> Self {
        match outcome {
            ApprovalOutcome::Approved => Self::Approved,
            ApprovalOutcome::Rejected => Self::Rejected,
            ApprovalOutcome::Expired => Self::Expired,
            ApprovalOutcome::Canceled => Self::Canceled,
            ApprovalOutcome::Deferred => Self::Deferred,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_serialize_with_their_kebab_case_name_as_type() {
        let body = EventBody::TaskStatus { task_id: "t".into(), status: TaskStatus::InputRequired, message: None, parent_call_id: None };
        let v = serde_json::to_value(&body).unwrap();
        assert_eq!(v["type"], "task-status");
        assert_eq!(v["status"], "input_required");
        assert_eq!(body.name(), "task-status");
    }

    #[test]
    fn an_event_round_trips_through_json() {
        let e = Event {
            seq: 3,
            conversation_id: "c".into(),
            at: "2026-11-21T10:00:00Z".into(),
            body: EventBody::ToolResult { task_id: "t".into(), call_id: "k".into(), ok: true, output: json!({"a": 1}) },
        };
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), e);
    }
}
