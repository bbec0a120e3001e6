//! JSON bodies of the REST API, shared by the server and its Rust clients (the hydrated UI).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::call_facts::{AssistantDelta, GrantArgs, GrantRequest, GrantSuggestion, Reversibility, RiskAssessment, Spend, Usage};
use super::{
    ApprovalId, ApprovalState, CallId, ConversationId, Event, Risk, Role, TaskId, TaskStatus, UserId,
    fold::{Card, CardApproval, CardStatus, ConversationView, TaskSummary},
    rules::DecisionRules,
};

/// One thing wrong with a request or a call's arguments: where (a JSON pointer, `""` for the
/// whole body) and why, said for a person. Every 422's `details` is a list of these, as are the
/// schema violations a model is told about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FieldProblem {
    pub path: String,
    pub message: String,
}

impl FieldProblem {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: path.into(), message: message.into() }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Conversation {
    pub id: ConversationId,
    pub title: String,
    pub agent: String,
    pub created_at: String,
    /// Sequence number of its newest event.
    pub last_seq: i64,
    /// The user who owns it (None for chats from before accounts existed).
    pub owner_id: Option<UserId>,
    pub owner: Option<String>,
    /// Tool calls of this chat waiting for a decision.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub pending: i64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewConversation {
    #[cfg_attr(feature = "openapi", schema(max_length = 200))]
    pub title: Option<String>,
    pub agent: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConversationDetail {
    pub conversation: Conversation,
    /// Only with `?events=all`: the whole log.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
    pub view: ConversationView,
    /// The version of the agent configuration in force (grants made under another say so).
    #[serde(default)]
    pub policy_version: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewMessage {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 8000))]
    pub text: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Task {
    pub id: TaskId,
    pub conversation_id: ConversationId,
    pub status: TaskStatus,
    pub created_at: String,
    pub updated_at: String,
    /// What the turn asked of people and how long it took (folded from its events; in
    /// `GET /api/tasks/{id}` and the abort answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<TaskSummary>,
}

/// One row of the approval queue.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Approval {
    pub id: ApprovalId,
    /// User name of the conversation's owner.
    pub owner: Option<String>,
    pub conversation_id: ConversationId,
    pub conversation_title: String,
    pub task_id: TaskId,
    pub call_id: CallId,
    pub agent: String,
    pub tool: String,
    pub args: Value,
    pub gate: String,
    pub summary: String,
    pub risk: Risk,
    /// `pending`, or how it ended.
    pub state: ApprovalState,
    pub created_at: String,
    pub deadline: String,
    pub age_seconds: i64,
    pub decided_at: Option<String>,
    pub decided_by: Option<String>,
    /// Seconds from request to decision.
    pub decision_seconds: Option<i64>,
    /// Who escalated it (only admins, or the people it went to, decide it then).
    pub escalated_by: Option<String>,
    /// The named user or group it was handed to (none: the admins) and the people in it.
    #[serde(default)]
    pub escalated_to: Option<String>,
    #[serde(default)]
    pub deciders: Vec<String>,
    /// Only these may decide (the gate's `approvers`), until it is escalated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvers: Option<super::rules::Approvers>,
    /// Who approved it so far, when its gate needs a quorum (`rules.quorum` people).
    #[serde(default)]
    pub approved_by: Vec<String>,
    /// The version of the agent configuration that asked it, and the one in force when it was
    /// decided (none for approvals from before versions were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_policy_version: Option<String>,
    pub reason: Option<String>,
    pub edited_args: Option<Value>,
    /// What a decision must include (a reason to reject; whether the arguments may be edited).
    pub rules: DecisionRules,
    /// Reminders sent while it waits (the gate's `reminder_interval_secs`).
    #[serde(default)]
    pub reminders_sent: u32,
    /// What led to the call: the user's request, the agent's reasoning, the turn's steps done.
    #[serde(default)]
    pub context: ApprovalContext,
    /// Why it is risky: factors, consequences, whether it can be undone.
    #[serde(default)]
    pub assessment: RiskAssessment,
    /// Where to decide it: POST to these with the API's credentials.
    pub approve_url: String,
    pub reject_url: String,
    /// The tool's input schema (JSON Schema), for editing the arguments as a form. Only in
    /// `GET /api/approvals/{id}`, not in lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_schema: Option<Value>,
    /// The state of the call it is about (`succeeded`, `failed`, `rejected`, …): an approved call
    /// may still have failed when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_state: Option<String>,
}

/// Arguments a reviewer is trying out before approving with them.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PreviewRequest {
    /// The edited arguments; validated against the tool's JSON schema.
    pub args: Value,
}

/// What the call would do with the edited arguments, read against the data now.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CallPreview {
    /// The card's headline for the edited call.
    pub summary: String,
    /// What would make it fail or surprise ("$5,000.00 is more than the $25.00 left to refund").
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ApproveRequest {
    /// Replacement arguments; validated against the tool's JSON schema.
    pub args: Option<Value>,
    /// Also allow this tool in this conversation from now on ("always allow").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<GrantRequest>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RejectRequest {
    pub reason: Option<String>,
}

/// `POST /api/approvals/{id}/escalate`: to whom (a user or a `[[groups]]` name); without `to`,
/// the gate's `escalation_target`, or the admins.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EscalateRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 64))]
    pub to: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DeferRequest {
    /// What the agent should do instead; required.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2000))]
    pub guidance: String,
}

impl Reversibility {
    pub const ALL: [Self; 3] = [Self::Fully, Self::Partially, Self::Irreversible];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fully => "fully",
            Self::Partially => "partially",
            Self::Irreversible => "irreversible",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

/// What a decider reads besides the call itself (the user's prompt, and more).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApprovalContext {
    /// The user's message that started the turn.
    #[serde(default)]
    pub request: String,
    /// What the agent said when it proposed the call, if anything.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// The turn's calls already done before this one, as one-line summaries.
    #[serde(default)]
    pub done: Vec<String>,
    /// What the model spent so far and the budget gate's limits, when a budget gate asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<Spend>,
}

/// What a decision endpoint answers.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DecisionOutcome {
    pub approval_id: ApprovalId,
    pub call_id: CallId,
    /// How it ended, or `pending` when a quorum counted this approval and waits for more.
    pub outcome: ApprovalState,
    /// With a quorum (`quorum` people must approve): who approved so far, this decider included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approved_by: Vec<String>,
    #[serde(default, skip_serializing_if = "is_one")]
    pub quorum: u32,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// A demo-domain order (the built-in tools act on these).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Order {
    pub id: i64,
    pub customer: String,
    pub item: String,
    /// Dollars.
    pub amount: f64,
    pub refunded: f64,
    /// `open`, `canceled` or `refunded`.
    pub status: String,
}

/// How people may log in here (`GET /api/session/options`): the login page offers these.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SignInOptions {
    /// The identity provider's name ("Sign in with …"), when `[oidc]` is configured; the
    /// browser starts at `/auth/oidc/login`.
    pub provider: Option<String>,
    /// The password form is for everyone (false: only for a break-glass admin).
    pub password: bool,
}

/// The logged-in user, as pages and clients see them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Me {
    pub id: UserId,
    pub username: String,
    pub role: Role,
    /// The people this user decides in place of now (delegations to them in force).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stands_in_for: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Login {
    pub username: String,
    pub password: String,
}

/// A configured agent, for choosing whom a new conversation talks to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentInfo {
    pub name: String,
    pub description: String,
    /// Worker agents it hands tasks to (sub-agents).
    pub delegates: Vec<String>,
}

/// `GET /api/policy` (admins): the agent configuration in force, as the server read it at
/// start-up, and what `countersign policy check` warns about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LivePolicy {
    /// The file it was read from (`COUNTERSIGN_AGENTS`); `None`: the built-in demo configuration.
    pub path: Option<String>,
    /// Its version: the first 12 hex digits of the SHA-256 of its text.
    pub version: String,
    /// Its text (TOML), as read at start-up.
    pub text: String,
    /// Its agents' names, in the file's order.
    pub agents: Vec<String>,
    pub warnings: Vec<String>,
    /// The draft every call is also put to (`COUNTERSIGN_AGENTS_DRAFT`); `None`: the server runs
    /// without one.
    #[serde(default)]
    pub draft_in_shadow: Option<DraftInShadow>,
}

/// A whole draft configuration in shadow (`COUNTERSIGN_AGENTS_DRAFT`, docs/config.md, "The
/// policy's life"): every call is also put to it, and each call it would treat otherwise is
/// recorded as a shadow hit whose gate starts with `draft:` (`GET /api/shadow-hits?draft=true`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DraftInShadow {
    /// The file it was read from at start-up.
    pub path: String,
    /// Its version: the first 12 hex digits of the SHA-256 of its text.
    pub version: String,
    /// Its text (TOML), as read at start-up.
    pub text: String,
    /// When this server started with it (RFC 3339): its hits are counted from then.
    pub since: String,
    /// The draft's shadow hits recorded since then.
    pub hits: u64,
    /// Those hits per gate (`draft:big-refunds`; `draft:none`: calls it would let run unasked or
    /// refuse): this draft's only, by its version.
    pub by_gate: BTreeMap<String, u64>,
}

/// `POST /api/policy/replay` (admins): a draft configuration to put to the calls recorded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReplayRequest {
    /// The draft: an agent configuration's text (TOML), validated as start-up validates a file.
    pub draft: String,
    /// How many days back (default 30).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 365))]
    pub since_days: Option<u32>,
    /// Only this agent's calls (default: every agent's).
    pub agent: Option<String>,
}

/// A group of people who may decide approvals (a gate's `approvers = ["group:<name>"]`) or
/// receive escalations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Group {
    pub name: String,
    /// User names.
    pub members: Vec<String>,
    /// Declared in the configuration file (`[[groups]]`): changed there, not through the API.
    pub from_config: bool,
    /// Named by the identity provider (docs/sign-in.md): changed there, not through the API;
    /// each member's sign-in brings their membership up to date.
    #[serde(default)]
    pub from_idp: bool,
}

/// `POST /api/groups`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewGroup {
    /// 1 to 64 letters, digits, `.`, `_`, `-` or `@`.
    pub name: String,
    /// User names of existing accounts.
    #[serde(default)]
    pub members: Vec<String>,
}

/// `PUT /api/groups/{name}`: the group's members from now on.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GroupMembers {
    pub members: Vec<String>,
}

/// One person deciding in another's place for a period (out of office): wherever a gate's
/// `approvers` or an escalation name `from`, `to` may decide too while it is active.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Delegation {
    pub id: String,
    pub from: String,
    pub to: String,
    /// RFC 3339.
    pub starts_at: String,
    pub ends_at: String,
    pub created_by: String,
    pub revoked_at: Option<String>,
    pub revoked_by: Option<String>,
    /// In force now.
    pub active: bool,
}

/// `POST /api/delegations`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewDelegation {
    /// Who decides in your place.
    pub to: String,
    /// RFC 3339; at most 90 days after it starts.
    pub ends_at: String,
    /// RFC 3339; default now.
    #[serde(default)]
    pub starts_at: Option<String>,
    /// An admin may set up a delegation for someone else (default: yourself).
    #[serde(default)]
    pub from: Option<String>,
}

/// The shape of a call's arguments: their top-level keys, sorted (values differ call to call).
pub fn args_shape(args: &Value) -> Vec<String> {
    let mut keys: Vec<String> = args.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    keys.sort();
    keys
}

/// A call a shadow gate (`mode = "shadow"`) would have stopped (it ran unasked), or one the draft
/// configuration (`COUNTERSIGN_AGENTS_DRAFT`) would have treated otherwise (`draft`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShadowHit {
    pub conversation_id: ConversationId,
    pub conversation_title: String,
    pub owner: Option<String>,
    pub call_id: CallId,
    /// The shadow gate; for the draft's, `draft:` and the draft's gates that would stop the call
    /// (`draft:none`: none would).
    pub gate: String,
    /// The draft's hit, not a shadow gate's.
    #[serde(default)]
    pub draft: bool,
    /// For a draft's hit: the draft's configuration version (hits of several drafts, one after
    /// another, are told apart by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_version: Option<String>,
    pub tool: String,
    /// The call's summary; for the draft's, followed by what the draft would do and what the live
    /// configuration does.
    pub summary: String,
    /// RFC 3339.
    pub at: String,
}

impl Approval {
    /// The approval as its pending card, so the queue shows it as the chat does.
    pub fn as_pending_card(&self) -> Card {
        let a = self;
        Card {
            seq: 0,
            call_id: a.call_id.clone(),
            task_id: a.task_id.clone(),
            tool: a.tool.clone(),
            agent: a.agent.clone(),
            summary: a.summary.clone(),
            args: a.args.clone(),
            risk: a.risk,
            status: CardStatus::PendingApproval,
            approval: Some(CardApproval {
                approval_id: a.id.clone(),
                gate: a.gate.clone(),
                requested_at: a.created_at.clone(),
                deadline: a.deadline.clone(),
                escalated_by: a.escalated_by.clone(),
                escalated_to: a.escalated_to.clone(),
                deciders: a.deciders.clone(),
                // Admins decide with the buttons even when the user was asked in the chat.
                in_chat: false,
                rules: a.rules,
                reminded: a.reminders_sent,
                reminders: 0,
                resent: 0,
                assessment: Some(a.assessment.clone()),
                spend: a.context.spend.clone(),
                approvers: a.approvers.clone(),
                approved_by: a.approved_by.clone(),
                suggestion: None,
            }),
            decision: None,
            result: None,
            warnings: a.assessment.warnings.clone(),
            shadow_gate: None,
            why: None,
            granted_by: None,
            planned: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that writes every number as a float (`2.0`) asks for the same grant as one that
    /// writes `2`; anything that is not a whole number of the field's size is refused.
    #[test]
    fn a_grant_s_numbers_may_be_whole_floats_and_nothing_else() {
        let read = |text: &str| serde_json::from_str::<GrantRequest>(text);
        let grant = read(r#"{"max_uses": 2.0, "ttl_secs": 3600.0}"#).unwrap();
        assert_eq!((grant.max_uses, grant.ttl_secs), (Some(2), Some(3600)));
        assert_eq!(read(r#"{"max_uses": 2, "ttl_secs": null}"#).unwrap(), GrantRequest { max_uses: Some(2), ..Default::default() });
        assert_eq!(read("{}").unwrap(), GrantRequest::default());
        for (text, said) in [
            (r#"{"max_uses": 2.5}"#, "must be a whole number of at least 0, not 2.5"),
            (r#"{"ttl_secs": -1}"#, "must be a whole number of at least 0, not -1"),
            (r#"{"max_uses": 4294967296}"#, "4294967296 is too large"),
            (r#"{"max_uses": "2"}"#, "invalid type: string"),
        ] {
            let refused = read(text).unwrap_err().to_string();
            assert!(refused.contains(said), "{text}: {refused}");
        }
    }
}
