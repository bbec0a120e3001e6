//! JSON bodies of the REST API, shared by the server and its Rust clients (the hydrated UI).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    ApprovalId, ApprovalState, CallId, ConversationId, Event, Risk, Role, TaskId, TaskStatus, UserId,
    fold::{ConversationView, TaskSummary},
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

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GrantRequest {
    /// Seconds the grant lasts; none: until revoked.
    #[serde(default, deserialize_with = "whole_or_none")]
    pub ttl_secs: Option<u64>,
    /// How many calls it may let through; none: unlimited.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    #[serde(default, deserialize_with = "whole_or_none")]
    pub max_uses: Option<u32>,
    /// Which arguments it lets through besides the gate's own bounds: `any` (the default),
    /// `exact` (only the approved arguments), or `at_most` (numbers no larger than approved).
    #[serde(default)]
    pub args: GrantArgs,
}

/// An optional whole number, also when written as a float (`2.0`), as clients that carry every
/// JSON number as a float send it and as tool arguments are read. A fraction, a negative number
/// or one too large for the field is refused, saying so.
fn whole_or_none<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    use serde::de::Error;
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else { return Ok(None) };
    // `u64::MAX as f64` is 2^64, exactly.
    let whole =
        number.as_u64().or_else(|| number.as_f64().filter(|f| f.fract() == 0.0 && (0.0..u64::MAX as f64).contains(f)).map(|f| f as u64));
    let Some(whole) = whole else { return Err(D::Error::custom(format!("must be a whole number of at least 0, not {number}"))) };
    T::try_from(whole).map(Some).map_err(|_| D::Error::custom(format!("{number} is too large")))
}

/// How far a grant reaches over the arguments of the calls its gate stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum GrantArgs {
    /// Any call the same gate stops.
    #[default]
    Any,
    /// Only calls with exactly the approved arguments.
    Exact,
    /// Only calls whose numeric arguments are no larger than the approved ones (e.g. `amount`),
    /// the rest equal.
    AtMost,
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

/// Can the call's effect be undone?
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Reversibility {
    /// It changes nothing, or what it changes is easily put back.
    Fully,
    /// Some of it can be undone, by hand.
    #[default]
    Partially,
    /// It cannot be undone.
    Irreversible,
}

/// Why a call is risky, beyond its level: from the tool's metadata and its own description of
/// the call read against the data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RiskAssessment {
    /// Short reasons, e.g. "moves money", "more than is left to refund".
    #[serde(default)]
    pub factors: Vec<String>,
    /// What happens if it runs, in one sentence.
    #[serde(default)]
    pub consequences: String,
    #[serde(default)]
    pub reversibility: Reversibility,
    /// The agent's confidence in the call, 0–1, when the model reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// What to check before deciding, read against the data ("$300.00 is more than the $249.00
    /// left to refund: the call will fail"): shown as warnings wherever the call is decided.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Tokens and cost of model steps, added up (a task's, or a conversation's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// US dollars, when the model has a price in the configuration (`[prices]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Usage {
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// Both added up; a cost is known once any part of it is.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }
}

/// What was spent so far when a budget gate asked, and the gate's limits (the card shows both).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Spend {
    /// The task's (or, for a gate with `per = "conversation"`, the conversation's) usage so far,
    /// including the model step that proposed the call.
    pub spent: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_threshold: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_threshold: Option<f64>,
    /// `task` or `conversation`.
    pub per: String,
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

/// A piece of an assistant reply while the model is still writing it. Sent live over SSE as
/// `assistant-delta` without an `id:`; never stored: the finished reply arrives as the
/// `assistant-message` event and replaces it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AssistantDelta {
    pub conversation_id: ConversationId,
    pub task_id: TaskId,
    /// The conversation's last stored event when the model was asked: a delta is stale (its
    /// reply is already stored) once the view has folded anything after it.
    pub after_seq: i64,
    /// Byte offset of `text` in the reply so far; 0 starts the reply over (e.g. after a retry).
    pub offset: usize,
    pub text: String,
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

/// "You approved this N times here: always allow it?" — offered on a card to the person who
/// approved the same tool with the same shape of arguments `count` times in the conversation
/// (`[defaults] suggest_grant_after`); accepting approves with `grant`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantSuggestion {
    pub by: String,
    pub count: u32,
    /// The scope offered: this tool in this conversation, for this long.
    pub grant: GrantRequest,
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
