//! The one fold from a conversation's events to what the UI shows (docs/architecture.md, decision 1).
//! The server runs it to render a page and to answer `GET /api/conversations/{id}`; the browser
//! runs the same `apply` on every live SSE event. Nothing else decides a card's state.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    call_facts::{AssistantDelta, GrantSuggestion, RiskAssessment, Spend, Usage},
    event::{ApprovalOutcome, Event, EventBody, Risk, TaskStatus},
    ids::{ApprovalId, CallId, GrantId, TaskId},
    rules::DecisionRules,
};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConversationView {
    /// Sequence number of the last event folded in; live events at or below it are ignored.
    pub last_seq: i64,
    pub items: Vec<Item>,
    pub tasks: Vec<TaskView>,
    /// Standing permissions in this conversation, live and revoked.
    #[serde(default)]
    pub grants: Vec<GrantView>,
    /// Tokens and cost of every model step in the conversation.
    #[serde(default)]
    pub usage: Usage,
    /// This view is a page (domain/src/page.rs): items before this sequence number were left
    /// out (all waiting and running cards are always in); `GET /api/conversations/{id}/items?before=`
    /// returns them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier: Option<i64>,
    /// The reply the model is writing right now (live deltas only; never stored or rendered
    /// by the server).
    #[serde(skip)]
    pub draft: Option<Draft>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Draft {
    pub task_id: TaskId,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantView {
    pub grant_id: GrantId,
    pub tool: String,
    pub created_by: String,
    pub expires_at: Option<String>,
    pub max_uses: Option<i64>,
    /// Calls it let through so far.
    pub uses: i64,
    pub revoked_by: Option<String>,
    /// A step of an approved plan: the exact arguments it lets through (once, in its task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// The version of the agent configuration it was made under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_version: Option<String>,
    /// The gate whose calls it covers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// Bounds on the arguments it lets through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Value>,
}

/// One entry of the chat, in the order it happened. Decisions are not items: they change cards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    User {
        seq: i64,
        task_id: TaskId,
        text: String,
    },
    /// `agent` is set for a worker's reply (a sub-agent's answer to its supervisor).
    Assistant {
        seq: i64,
        task_id: TaskId,
        text: String,
        #[serde(default)]
        agent: Option<String>,
    },
    Card(Box<Card>),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskView {
    pub task_id: TaskId,
    pub status: TaskStatus,
    pub message: Option<String>,
    /// A worker's task (a sub-agent) names the supervisor's call it answers.
    #[serde(default)]
    pub parent_call_id: Option<CallId>,
    /// What the turn asked of people and how long it took.
    #[serde(default)]
    pub summary: TaskSummary,
}

/// A turn's human-in-the-loop record (what other systems call a `HITLResult`), folded from its events: the same
/// numbers under the finished turn in the chat and in `GET /api/tasks/{id}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskSummary {
    /// Approvals asked for, the agent's questions (`ask_user`) left out: they are counted in
    /// `questions`, and in none of the approval numbers below.
    pub approvals_requested: u32,
    pub approved: u32,
    /// Approved with edited arguments (also counted in `approved`).
    pub edited: u32,
    pub rejected: u32,
    pub deferred: u32,
    /// Ran out of time (whatever the timeout action did).
    pub expired: u32,
    pub canceled: u32,
    /// The agent's questions to the person (`ask_user`): an approval underneath, whose answer
    /// is added to the call's arguments, but an answer, not an edited approval.
    #[serde(default)]
    pub questions: u32,
    /// Questions answered.
    #[serde(default)]
    pub answered: u32,
    /// Questions declined (the rest of `questions` went unanswered: timed out or canceled).
    #[serde(default)]
    pub declined: u32,
    /// How long the turn waited for people: the time during which at least one of its approvals
    /// was waiting (approvals that waited side by side count once), in milliseconds.
    pub waiting_ms: i64,
    /// Each approval's wait (asked, decided), in milliseconds since the epoch: what `waiting_ms` is
    /// the union of.
    #[serde(skip)]
    pub(crate) waits: Vec<(i64, i64)>,
    /// RFC 3339: when the turn started and when it finished (none while it runs).
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Tokens and cost of the turn's model steps.
    #[serde(default)]
    pub usage: Usage,
}

impl TaskSummary {
    /// One approval waited from `.0` to `.1`: the turn's waiting time is the union of such spans.
    fn add_wait(&mut self, wait: (i64, i64)) {
        self.waits.push(wait);
        self.waits.sort_unstable();
        let mut total = 0;
        let mut covered_until = i64::MIN;
        for &(from, to) in &self.waits {
            let from = from.max(covered_until);
            if to > from {
                total += to - from;
                covered_until = to;
            }
        }
        self.waiting_ms = total;
    }

    /// Milliseconds from start to finish, once finished.
    pub fn duration_ms(&self) -> Option<i64> {
        let start = crate::time::parse_rfc3339_ms(self.started_at.as_deref()?)?;
        Some(crate::time::parse_rfc3339_ms(self.finished_at.as_deref()?)? - start)
    }

    /// Approvals decided (questions left out).
    pub fn decided(&self) -> u32 {
        self.approved + self.rejected + self.deferred + self.expired + self.canceled
    }

    /// Questions answered or declined.
    pub fn questions_settled(&self) -> u32 {
        self.answered + self.declined
    }
}

/// What the UI shows for one tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Card {
    /// Sequence number of the call's event: the card's place in the chat.
    #[serde(default)]
    pub seq: i64,
    pub call_id: CallId,
    pub task_id: TaskId,
    pub tool: String,
    pub agent: String,
    pub summary: String,
    /// The arguments the call runs (or ran) with: the edited ones after an edit.
    pub args: Value,
    pub risk: Risk,
    pub status: CardStatus,
    pub approval: Option<CardApproval>,
    pub decision: Option<CardDecision>,
    /// The tool's output (or error description) once it finished.
    pub result: Option<Value>,
    /// Who granted the standing permission that let this call through without asking.
    #[serde(default)]
    pub granted_by: Option<String>,
    /// The permission was a step of a plan `granted_by` approved, not a standing grant.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub planned: bool,
    /// What the reviewer should know before deciding (see `EventBody::ToolCall`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The shadow gate that would have asked before this call (it ran unasked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadow_gate: Option<String>,
    /// Why it was asked, or why not (see `EventBody::ToolCall`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardApproval {
    pub approval_id: ApprovalId,
    pub gate: String,
    /// RFC 3339: when it was asked (a timeout says how long no one decided).
    #[serde(default)]
    pub requested_at: String,
    /// RFC 3339.
    pub deadline: String,
    /// Who escalated it, if anyone; then only admins (or the people it went to) may decide.
    pub escalated_by: Option<String>,
    /// The named user or group it was handed to (none: the admins), and its people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalated_to: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deciders: Vec<String>,
    /// The user answers it with yes or no in the chat (no buttons on the card).
    #[serde(default)]
    pub in_chat: bool,
    /// What a decision must include: a reason to reject, no edits.
    #[serde(default)]
    pub rules: DecisionRules,
    /// Reminders sent so far, and how many the gate sends (0 of 0: none configured).
    #[serde(default)]
    pub reminded: u32,
    #[serde(default)]
    pub reminders: u32,
    /// How many times it was asked again because nobody decided in time (`retry`).
    #[serde(default)]
    pub resent: u32,
    /// Why the call is risky, when it was assessed.
    #[serde(default)]
    pub assessment: Option<RiskAssessment>,
    /// A budget gate asked: what was spent so far and its limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<Spend>,
    /// Only these may decide (the gate's `approvers`), until it is escalated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvers: Option<super::rules::Approvers>,
    /// Who approved it so far, when its gate needs a quorum.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approved_by: Vec<String>,
    /// "Always allow" offered to someone who approved calls like it before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<GrantSuggestion>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardDecision {
    pub outcome: ApprovalOutcome,
    pub decided_by: String,
    pub reason: Option<String>,
    pub original_args: Value,
    pub edited_args: Option<Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CardStatus {
    Requested,
    PendingApproval,
    Approved,
    Rejected,
    Expired,
    Canceled,
    Deferred,
    Executing,
    Succeeded,
    Failed,
}

impl CardStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Requested => "requested",
            Self::PendingApproval => "pending_approval",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
            Self::Canceled => "canceled",
            Self::Deferred => "deferred",
            Self::Executing => "executing",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
        }
    }

    /// The call was refused: it never ran, whatever result the model was told.
    pub fn is_refused(self) -> bool {
        matches!(self, Self::Rejected | Self::Expired | Self::Canceled | Self::Deferred)
    }
}

/// The version of what [`ConversationView::apply`] makes of events. Bump it whenever the same
/// events would fold to a different view (a new field filled, a rule changed): stored snapshots
/// of another version are then rebuilt from the events (store/src/snapshots.rs).
pub const FOLD_VERSION: i64 = 4;

/// Folds a whole event log.
pub fn fold<'a>(events: impl IntoIterator<Item = &'a Event>) -> ConversationView {
    let mut view = ConversationView::default();
    for event in events {
        view.apply(event);
    }
    view
}

impl ConversationView {
    /// Applies one event. Events at or below `last_seq` were already applied and are skipped,
    /// so replaying an overlap (server render, then SSE from the same point) changes nothing.
    pub fn apply(&mut self, event: &Event) {
        if event.seq <= self.last_seq {
            return;
        }
        self.last_seq = event.seq;
        // Any stored event of the drafting task ends the draft: the reply (or the calls) arrived.
        if self.draft.as_ref().is_some_and(|d| &d.task_id == event.body.task_id()) {
            self.draft = None;
        }
        match &event.body {
            EventBody::UserMessage { task_id, text, .. } => {
                self.items.push(Item::User { seq: event.seq, task_id: task_id.clone(), text: text.clone() })
            }
            EventBody::AssistantMessage { task_id, text, agent } => {
                self.items.push(Item::Assistant { seq: event.seq, task_id: task_id.clone(), text: text.clone(), agent: agent.clone() })
            }
            EventBody::ToolCall { task_id, call_id, tool, agent, args, summary, risk, grant_id, warnings, shadow_gate, why } => {
                let granted = grant_id.as_ref().and_then(|id| {
                    let grant = self.grants.iter_mut().find(|g| &g.grant_id == id)?;
                    grant.uses += 1;
                    Some((grant.created_by.clone(), grant.args.is_some()))
                });
                let (granted_by, planned) = granted.map_or((None, false), |(by, planned)| (Some(by), planned));
                self.items.push(Item::Card(Box::new(Card {
                    seq: event.seq,
                    call_id: call_id.clone(),
                    task_id: task_id.clone(),
                    tool: tool.clone(),
                    agent: agent.clone(),
                    summary: summary.clone(),
                    args: args.clone(),
                    risk: *risk,
                    status: CardStatus::Requested,
                    approval: None,
                    decision: None,
                    result: None,
                    granted_by,
                    planned,
                    warnings: warnings.clone(),
                    shadow_gate: shadow_gate.clone(),
                    why: why.clone(),
                })))
            }
            EventBody::GrantCreated { grant_id, tool, created_by, expires_at, max_uses, args, policy_version, gate, bounds, .. } => {
                self.grants.push(GrantView {
                    grant_id: grant_id.clone(),
                    tool: tool.clone(),
                    created_by: created_by.clone(),
                    expires_at: expires_at.clone(),
                    max_uses: *max_uses,
                    uses: 0,
                    revoked_by: None,
                    args: args.clone(),
                    policy_version: policy_version.clone(),
                    gate: gate.clone(),
                    bounds: bounds.clone(),
                })
            }
            EventBody::GrantRevoked { grant_id, revoked_by, .. } => {
                if let Some(grant) = self.grants.iter_mut().find(|g| &g.grant_id == grant_id) {
                    grant.revoked_by = Some(revoked_by.clone());
                }
            }
            EventBody::ConfirmationAsked { task_id, question, .. } => {
                self.items.push(Item::Assistant { seq: event.seq, task_id: task_id.clone(), text: question.clone(), agent: None })
            }
            EventBody::ApprovalRequired { call_id, deadline, resent, .. } if *resent > 0 => {
                // Asked again (the `retry` timeout action): a new deadline; the same request.
                if let Some(approval) = self.card_mut(call_id).and_then(|c| c.approval.as_mut()) {
                    approval.deadline = deadline.clone();
                    approval.resent = *resent;
                }
            }
            EventBody::ApprovalRequired {
                task_id,
                call_id,
                approval_id,
                tool,
                gate,
                deadline,
                args,
                summary,
                risk,
                in_chat,
                rules,
                assessment,
                spend,
                approvers,
                suggestion,
                ..
            } => {
                if let Some(task) = self.task_mut(task_id) {
                    // The agent's question is answered, not approved: counted on its own.
                    if tool == crate::naming::ASK_USER {
                        task.summary.questions += 1;
                    } else {
                        task.summary.approvals_requested += 1;
                    }
                }
                if let Some(card) = self.card_mut(call_id) {
                    card.status = CardStatus::PendingApproval;
                    card.args = args.clone();
                    card.summary = summary.clone();
                    card.risk = *risk;
                    card.approval = Some(CardApproval {
                        approval_id: approval_id.clone(),
                        gate: gate.clone(),
                        requested_at: event.at.clone(),
                        deadline: deadline.clone(),
                        escalated_by: None,
                        escalated_to: None,
                        deciders: Vec::new(),
                        in_chat: *in_chat,
                        rules: *rules,
                        reminded: 0,
                        reminders: 0,
                        resent: 0,
                        assessment: assessment.clone(),
                        spend: spend.clone(),
                        approvers: approvers.as_deref().cloned(),
                        approved_by: Vec::new(),
                        suggestion: suggestion.as_deref().cloned(),
                    });
                }
            }
            EventBody::ApprovalDecided { task_id, call_id, outcome, decided_by, reason, original_args, edited_args, summary, .. } => {
                let requested =
                    self.card_mut(call_id).and_then(|c| c.approval.as_ref()).and_then(|a| crate::time::parse_rfc3339_ms(&a.requested_at));
                let wait = requested.zip(crate::time::parse_rfc3339_ms(&event.at)).filter(|(from, to)| to > from);
                // An answer is added to the question's arguments (`edited_args`): not an edit.
                let question = self.card(call_id).is_some_and(|c| c.tool == crate::naming::ASK_USER);
                if let Some(task) = self.task_mut(task_id) {
                    let counts = &mut task.summary;
                    if let Some(wait) = wait {
                        counts.add_wait(wait);
                    }
                    match outcome {
                        ApprovalOutcome::Approved if question => counts.answered += 1,
                        ApprovalOutcome::Rejected if question => counts.declined += 1,
                        // Timed out, canceled or deferred: unanswered (`questions` minus the settled).
                        _ if question => {}
                        ApprovalOutcome::Approved => {
                            counts.approved += 1;
                            counts.edited += u32::from(edited_args.is_some());
                        }
                        ApprovalOutcome::Rejected => counts.rejected += 1,
                        ApprovalOutcome::Expired => counts.expired += 1,
                        ApprovalOutcome::Canceled => counts.canceled += 1,
                        ApprovalOutcome::Deferred => counts.deferred += 1,
                    }
                }
                if let Some(card) = self.card_mut(call_id) {
                    card.status = match outcome {
                        ApprovalOutcome::Approved => CardStatus::Approved,
                        ApprovalOutcome::Rejected => CardStatus::Rejected,
                        ApprovalOutcome::Expired => CardStatus::Expired,
                        ApprovalOutcome::Canceled => CardStatus::Canceled,
                        ApprovalOutcome::Deferred => CardStatus::Deferred,
                    };
                    if let Some(edited) = edited_args {
                        card.args = edited.clone();
                    }
                    if let Some(summary) = summary {
                        card.summary = summary.clone();
                    }
                    card.decision = Some(CardDecision {
                        outcome: *outcome,
                        decided_by: decided_by.clone(),
                        reason: reason.clone(),
                        original_args: original_args.clone(),
                        edited_args: edited_args.clone(),
                    });
                }
                self.after_chat_answer(call_id, event.seq);
            }
            EventBody::ApprovalCounted { call_id, approved_by, .. } => {
                if let Some(approval) = self.card_mut(call_id).and_then(|c| c.approval.as_mut()) {
                    approval.approved_by = approved_by.clone();
                }
            }
            EventBody::ApprovalReminder { call_id, reminder, of, .. } => {
                if let Some(approval) = self.card_mut(call_id).and_then(|c| c.approval.as_mut()) {
                    approval.reminded = *reminder;
                    approval.reminders = *of;
                }
            }
            EventBody::ApprovalEscalated { call_id, escalated_by, deadline, to, deciders, .. } => {
                if let Some(approval) = self.card_mut(call_id).and_then(|c| c.approval.as_mut()) {
                    approval.escalated_by = Some(escalated_by.clone());
                    approval.escalated_to = to.clone();
                    approval.deciders = deciders.clone();
                    approval.deadline = deadline.clone();
                }
            }
            EventBody::ToolStarted { call_id, .. } => {
                if let Some(card) = self.card_mut(call_id) {
                    card.status = CardStatus::Executing;
                }
            }
            EventBody::ToolResult { call_id, ok, output, .. } => {
                if let Some(card) = self.card_mut(call_id) {
                    if !card.status.is_refused() {
                        card.status = match (*ok, output["status"].as_str()) {
                            (true, _) => CardStatus::Succeeded,
                            // Refused without an approval: a repeat of an already rejected call.
                            (false, Some("rejected")) => CardStatus::Rejected,
                            (false, _) => CardStatus::Failed,
                        };
                    }
                    card.result = Some(output.clone());
                }
            }
            EventBody::ModelUsage { task_id, usage, .. } => {
                self.usage.add(usage);
                if let Some(task) = self.task_mut(task_id) {
                    task.summary.usage.add(usage);
                }
            }
            EventBody::TaskStatus { task_id, status, message, parent_call_id } => {
                let index = match self.tasks.iter().position(|t| &t.task_id == task_id) {
                    Some(index) => index,
                    None => {
                        let summary = TaskSummary { started_at: Some(event.at.clone()), ..Default::default() };
                        self.tasks.push(TaskView {
                            task_id: task_id.clone(),
                            status: *status,
                            message: None,
                            parent_call_id: None,
                            summary,
                        });
                        self.tasks.len() - 1
                    }
                };
                let view = &mut self.tasks[index];
                view.status = *status;
                view.message = message.clone();
                view.parent_call_id = parent_call_id.clone();
                view.summary.finished_at = status.is_final().then(|| event.at.clone());
            }
        }
    }

    /// Adds a live piece of the reply being written. A delta that does not continue the draft
    /// (one was missed) is dropped; the stored reply replaces the draft anyway.
    pub fn apply_delta(&mut self, delta: &AssistantDelta) {
        if delta.after_seq != self.last_seq {
            return;
        }
        match &mut self.draft {
            Some(draft) if draft.task_id == delta.task_id && draft.text.len() == delta.offset => draft.text.push_str(&delta.text),
            _ if delta.offset == 0 => self.draft = Some(Draft { task_id: delta.task_id.clone(), text: delta.text.clone() }),
            _ => {}
        }
    }

    fn task_mut(&mut self, task_id: &TaskId) -> Option<&mut TaskView> {
        self.tasks.iter_mut().find(|t| &t.task_id == task_id)
    }

    /// A call decided by a yes or no in the chat moves below that answer (its place becomes the
    /// decision's, `seq`): it reads as what the answer did, not as done before anyone said yes.
    fn after_chat_answer(&mut self, call_id: &str, seq: i64) {
        let asked_in_chat =
            |item: &Item| matches!(item, Item::Card(c) if c.call_id == call_id && c.approval.as_ref().is_some_and(|a| a.in_chat));
        let Some(at) = self.items.iter().rposition(asked_in_chat) else { return };
        if at + 1 < self.items.len() && matches!(self.items.last(), Some(Item::User { .. })) {
            let mut card = self.items.remove(at);
            if let Item::Card(card) = &mut card {
                card.seq = seq;
            }
            self.items.push(card);
        }
    }

    fn card_mut(&mut self, call_id: &str) -> Option<&mut Card> {
        // Newest first: the call being decided is almost always near the end.
        self.items.iter_mut().rev().find_map(|item| match item {
            Item::Card(card) if card.call_id == call_id => Some(card.as_mut()),
            _ => None,
        })
    }

    pub fn cards(&self) -> impl Iterator<Item = &Card> {
        self.items.iter().filter_map(|item| match item {
            Item::Card(card) => Some(card.as_ref()),
            _ => None,
        })
    }

    pub fn card(&self, call_id: &str) -> Option<&Card> {
        self.cards().find(|c| c.call_id == call_id)
    }

    pub fn pending_count(&self) -> usize {
        self.cards().filter(|c| c.status == CardStatus::PendingApproval).count()
    }

    /// Waiting cards whose deciders were reminded at least once (the tab title says so).
    pub fn reminded_count(&self) -> usize {
        self.cards().filter(|c| c.status == CardStatus::PendingApproval && c.approval.as_ref().is_some_and(|a| a.reminded > 0)).count()
    }

    /// A call waits for the user's yes or no in the chat (and not for the admins).
    pub fn waits_for_chat_answer(&self) -> bool {
        self.cards()
            .any(|c| c.status == CardStatus::PendingApproval && c.approval.as_ref().is_some_and(|a| a.in_chat && a.escalated_by.is_none()))
    }

    /// The most recent turn (not a worker's task), which decides whether the composer is usable.
    pub fn current_task(&self) -> Option<&TaskView> {
        self.tasks.iter().rev().find(|t| t.parent_call_id.is_none())
    }

    pub fn task(&self, task_id: &str) -> Option<&TaskView> {
        self.tasks.iter().find(|t| t.task_id == task_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn approvals_that_waited_side_by_side_count_once_in_the_turns_wait() {
        let mut summary = TaskSummary::default();
        // Two approvals asked together, decided after 3 s and 2 s; a third later, for 1 s.
        summary.add_wait((10_000, 13_000));
        summary.add_wait((10_000, 12_000));
        assert_eq!(summary.waiting_ms, 3_000);
        summary.add_wait((20_000, 21_000));
        assert_eq!(summary.waiting_ms, 4_000);
        // Overlapping only in part: the union.
        summary.add_wait((12_500, 14_000));
        assert_eq!(summary.waiting_ms, 5_000);
    }

    /// Builds a log with consecutive sequence numbers.
    struct Log(Vec<Event>);

    impl Log {
        fn new() -> Self {
            Self(Vec::new())
        }
        fn push(&mut self, body: EventBody) -> &mut Self {
            let seq = self.0.len() as i64 + 1;
            self.0.push(Event { seq, conversation_id: "c1".into(), at: "2026-11-21T10:00:00Z".into(), body });
            self
        }
        fn user(&mut self, task: &str, text: &str) -> &mut Self {
            self.push(EventBody::UserMessage { task_id: task.into(), text: text.into(), reply_to: None, client_id: None })
        }
        fn call(&mut self, task: &str, call: &str, args: Value) -> &mut Self {
            self.push(EventBody::ToolCall {
                task_id: task.into(),
                call_id: call.into(),
                tool: "process_refund".into(),
                agent: "support".into(),
                args,
                summary: format!("refund for {call}"),
                risk: Risk::High,
                grant_id: None,
                warnings: Vec::new(),
                shadow_gate: None,
                why: None,
            })
        }
        fn gate(&mut self, task: &str, call: &str, args: Value) -> &mut Self {
            self.push(EventBody::ApprovalRequired {
                task_id: task.into(),
                approval_id: format!("a-{call}").into(),
                call_id: call.into(),
                tool: "process_refund".into(),
                args,
                gate: "refunds".into(),
                summary: format!("refund for {call}"),
                risk: Risk::High,
                deadline: "2026-11-21T10:05:00Z".into(),
                in_chat: false,
                rules: Default::default(),
                assessment: None,
                resent: 0,
                spend: None,
                approvers: None,
                suggestion: None,
            })
        }
        fn decide(&mut self, task: &str, call: &str, outcome: ApprovalOutcome, edited: Option<Value>) -> &mut Self {
            self.push(EventBody::ApprovalDecided {
                task_id: task.into(),
                approval_id: format!("a-{call}").into(),
                call_id: call.into(),
                outcome,
                decided_by: "ada".into(),
                reason: (outcome != ApprovalOutcome::Approved).then(|| "no".to_string()),
                original_args: json!({"order_id": 1}),
                summary: edited.as_ref().map(|e| format!("refund {e} (edited from: refund for {call})")),
                edited_args: edited,
            })
        }
        fn started(&mut self, task: &str, call: &str) -> &mut Self {
            self.push(EventBody::ToolStarted { task_id: task.into(), call_id: call.into() })
        }
        fn result(&mut self, task: &str, call: &str, ok: bool) -> &mut Self {
            self.push(EventBody::ToolResult { task_id: task.into(), call_id: call.into(), ok, output: json!({"ok": ok}) })
        }
        fn status(&mut self, task: &str, status: TaskStatus) -> &mut Self {
            self.push(EventBody::TaskStatus { task_id: task.into(), status, message: None, parent_call_id: None })
        }
        fn view(&self) -> ConversationView {
            fold(&self.0)
        }
    }

    fn statuses(view: &ConversationView) -> Vec<(&str, CardStatus)> {
        view.cards().map(|c| (c.call_id.as_str(), c.status)).collect()
    }

    #[test]
    fn a_call_confirmed_in_the_chat_is_shown_below_the_answer_that_decided_it() {
        let mut log = Log::new();
        log.user("t", "refund order 1001").call("t", "k1", json!({})).gate("t", "k1", json!({}));
        if let Some(Event { body: EventBody::ApprovalRequired { in_chat, .. }, .. }) = log.0.last_mut() {
            *in_chat = true;
        }
        log.push(EventBody::ConfirmationAsked {
            task_id: "t".into(),
            approval_id: "a-k1".into(),
            call_id: "k1".into(),
            question: "Shall I go ahead?".into(),
        });
        log.push(EventBody::UserMessage { task_id: "t".into(), text: "yes".into(), reply_to: Some("a-k1".into()), client_id: None });
        log.decide("t", "k1", ApprovalOutcome::Approved, None).started("t", "k1").result("t", "k1", true);
        let view = log.view();
        let order: Vec<String> = view
            .items
            .iter()
            .map(|item| match item {
                Item::User { text, .. } | Item::Assistant { text, .. } => text.clone(),
                Item::Card(card) => card.call_id.to_string(),
            })
            .collect();
        assert_eq!(order, ["refund order 1001", "Shall I go ahead?", "yes", "k1"]);
        assert_eq!(view.card("k1").map(|c| c.status), Some(CardStatus::Succeeded));
        // The order stays the order of `seq`, which pages and "Show earlier" rely on.
        assert!(view.items.windows(2).all(|w| w[0].seq() < w[1].seq()));

        // A card decided with a button stays where it was asked.
        let mut log = Log::new();
        log.user("t", "refund").call("t", "k1", json!({})).gate("t", "k1", json!({})).user("t2", "and another");
        log.decide("t", "k1", ApprovalOutcome::Approved, None);
        assert!(matches!(log.view().items[1], Item::Card(_)));
    }

    #[test]
    fn an_ungated_call_goes_requested_executing_completed() {
        let mut log = Log::new();
        log.user("t", "hi").call("t", "k1", json!({}));
        assert_eq!(statuses(&log.view()), [("k1", CardStatus::Requested)]);
        log.started("t", "k1");
        assert_eq!(statuses(&log.view()), [("k1", CardStatus::Executing)]);
        log.result("t", "k1", true);
        assert_eq!(statuses(&log.view()), [("k1", CardStatus::Succeeded)]);
    }

    #[test]
    fn a_gated_call_waits_then_follows_its_approval_to_completion() {
        let mut log = Log::new();
        log.user("t", "refund").call("t", "k1", json!({"order_id": 1})).gate("t", "k1", json!({"order_id": 1}));
        log.status("t", TaskStatus::InputRequired);
        let view = log.view();
        assert_eq!(statuses(&view), [("k1", CardStatus::PendingApproval)]);
        assert_eq!(view.pending_count(), 1);
        assert_eq!(view.card("k1").unwrap().approval.as_ref().unwrap().approval_id, "a-k1");
        assert_eq!(view.current_task().unwrap().status, TaskStatus::InputRequired);

        log.decide("t", "k1", ApprovalOutcome::Approved, None);
        assert_eq!(statuses(&log.view()), [("k1", CardStatus::Approved)]);
        log.started("t", "k1").result("t", "k1", true).status("t", TaskStatus::Completed);
        let view = log.view();
        assert_eq!(statuses(&view), [("k1", CardStatus::Succeeded)]);
        assert_eq!(view.pending_count(), 0);
    }

    #[test]
    fn a_mixed_batch_keeps_rejected_cards_rejected_after_their_result() {
        let mut log = Log::new();
        log.user("t", "refund both");
        for k in ["k1", "k2", "k3"] {
            log.call("t", k, json!({})).gate("t", k, json!({}));
        }
        assert_eq!(log.view().pending_count(), 3);
        log.decide("t", "k1", ApprovalOutcome::Approved, None).started("t", "k1").result("t", "k1", true);
        log.decide("t", "k2", ApprovalOutcome::Rejected, None).result("t", "k2", false);
        log.decide("t", "k3", ApprovalOutcome::Approved, None).started("t", "k3").result("t", "k3", false);
        assert_eq!(statuses(&log.view()), [("k1", CardStatus::Succeeded), ("k2", CardStatus::Rejected), ("k3", CardStatus::Failed)]);
        assert_eq!(log.view().card("k2").unwrap().decision.as_ref().unwrap().reason.as_deref(), Some("no"));
    }

    #[test]
    fn an_answered_question_counts_as_a_question_not_as_an_edited_approval() {
        let mut log = Log::new();
        log.user("t", "refund an order").status("t", TaskStatus::Working);
        let asked = json!({"question": "Which order should I refund? Give its number."});
        log.call("t", "q", asked.clone()).gate("t", "q", asked);
        for event in &mut log.0 {
            if let EventBody::ToolCall { tool, .. } | EventBody::ApprovalRequired { tool, .. } = &mut event.body {
                *tool = crate::naming::ASK_USER.into();
            }
        }
        let answered = json!({"question": "Which order should I refund? Give its number.", "answer": "1002"});
        log.decide("t", "q", ApprovalOutcome::Approved, Some(answered));
        log.call("t", "k1", json!({"order_id": 1002})).gate("t", "k1", json!({"order_id": 1002}));
        log.decide("t", "k1", ApprovalOutcome::Rejected, None).status("t", TaskStatus::Completed);
        let view = log.view();
        let summary = &view.tasks[0].summary;
        assert_eq!((summary.questions, summary.answered, summary.declined), (1, 1, 0));
        assert_eq!((summary.approvals_requested, summary.approved, summary.edited, summary.rejected), (1, 0, 0, 1));
    }

    #[test]
    fn an_edit_replaces_the_card_args_and_keeps_the_original() {
        let mut log = Log::new();
        log.user("t", "refund").call("t", "k1", json!({"order_id": 1, "amount": 40})).gate("t", "k1", json!({"order_id": 1, "amount": 40}));
        log.decide("t", "k1", ApprovalOutcome::Approved, Some(json!({"order_id": 1, "amount": 25})));
        let view = log.view();
        let card = view.card("k1").unwrap();
        assert_eq!(card.args, json!({"order_id": 1, "amount": 25}));
        assert_eq!(card.decision.as_ref().unwrap().original_args, json!({"order_id": 1}));
        assert_eq!(card.decision.as_ref().unwrap().edited_args, Some(json!({"order_id": 1, "amount": 25})));
    }

    #[test]
    fn a_timeout_expires_the_card() {
        let mut log = Log::new();
        log.user("t", "refund").call("t", "k1", json!({})).gate("t", "k1", json!({}));
        log.decide("t", "k1", ApprovalOutcome::Expired, None).result("t", "k1", false);
        assert_eq!(statuses(&log.view()), [("k1", CardStatus::Expired)]);
    }

    #[test]
    fn an_abort_cancels_pending_cards_and_the_task() {
        let mut log = Log::new();
        log.user("t", "refund").call("t", "k1", json!({})).gate("t", "k1", json!({}));
        log.decide("t", "k1", ApprovalOutcome::Canceled, None).status("t", TaskStatus::Canceled);
        let view = log.view();
        assert_eq!(statuses(&view), [("k1", CardStatus::Canceled)]);
        assert_eq!(view.current_task().unwrap().status, TaskStatus::Canceled);
    }

    #[test]
    fn replayed_events_are_ignored_so_an_overlap_duplicates_nothing() {
        let mut log = Log::new();
        log.user("t", "refund").call("t", "k1", json!({})).gate("t", "k1", json!({}));
        let mut view = log.view();
        for event in &log.0 {
            view.apply(event);
        }
        assert_eq!(view, log.view());
        assert_eq!(view.items.len(), 2);
    }

    #[test]
    fn folding_incrementally_equals_folding_at_once() {
        let mut log = Log::new();
        log.user("t", "a").call("t", "k1", json!({})).gate("t", "k1", json!({})).decide("t", "k1", ApprovalOutcome::Rejected, None);
        log.result("t", "k1", false).push(EventBody::AssistantMessage { task_id: "t".into(), text: "done".into(), agent: None });
        let (head, tail) = log.0.split_at(3);
        let mut view = fold(head);
        for e in tail {
            view.apply(e);
        }
        assert_eq!(view, log.view());
        assert!(matches!(view.items.last(), Some(Item::Assistant { text, .. }) if text == "done"));
    }

    #[test]
    fn a_repeat_of_a_rejected_call_shows_as_rejected_without_an_approval() {
        let mut log = Log::new();
        log.user("t", "again").call("t", "k9", json!({}));
        log.push(EventBody::ToolResult {
            task_id: "t".into(),
            call_id: "k9".into(),
            ok: false,
            output: json!({ "status": "rejected", "reason": "already" }),
        });
        let view = log.view();
        assert_eq!(statuses(&view), [("k9", CardStatus::Rejected)]);
        assert_eq!(view.pending_count(), 0);
    }

    #[test]
    fn an_escalation_keeps_the_card_pending_with_the_new_deadline_and_who_escalated() {
        let mut log = Log::new();
        log.user("t", "refund").call("t", "k1", json!({})).gate("t", "k1", json!({}));
        log.push(EventBody::ApprovalEscalated {
            task_id: "t".into(),
            approval_id: "a-k1".into(),
            call_id: "k1".into(),
            escalated_by: "ada".into(),
            deadline: "2026-11-21T11:00:00Z".into(),
            to: Some("finance".into()),
            deciders: vec!["dora".into()],
        });
        let view = log.view();
        let card = view.card("k1").unwrap();
        assert_eq!(card.status, CardStatus::PendingApproval);
        let approval = card.approval.as_ref().unwrap();
        assert_eq!((approval.escalated_by.as_deref(), approval.deadline.as_str()), (Some("ada"), "2026-11-21T11:00:00Z"));
        assert_eq!((approval.escalated_to.as_deref(), approval.deciders.as_slice()), (Some("finance"), ["dora".to_owned()].as_slice()));
    }

    #[test]
    fn grants_count_the_calls_they_let_through_and_show_revocation() {
        let mut log = Log::new();
        log.push(EventBody::GrantCreated {
            task_id: "t".into(),
            grant_id: "g1".into(),
            tool: "process_refund".into(),
            created_by: "ada".into(),
            expires_at: None,
            max_uses: Some(3),
            args: None,
            policy_version: None,
            gate: Some("refunds".into()),
            bounds: None,
        });
        for k in ["k1", "k2"] {
            log.push(EventBody::ToolCall {
                task_id: "t".into(),
                call_id: k.into(),
                tool: "process_refund".into(),
                agent: "support".into(),
                args: json!({}),
                summary: String::new(),
                risk: Risk::High,
                grant_id: Some("g1".into()),
                warnings: Vec::new(),
                shadow_gate: None,
                why: None,
            });
        }
        log.push(EventBody::GrantRevoked { task_id: TaskId::default(), grant_id: "g1".into(), revoked_by: "ada".into() });
        let view = log.view();
        assert_eq!(view.grants.len(), 1);
        assert_eq!((view.grants[0].uses, view.grants[0].revoked_by.as_deref()), (2, Some("ada")));
        assert_eq!(view.card("k1").unwrap().granted_by.as_deref(), Some("ada"));
    }

    #[test]
    fn decision_events_never_become_chat_items() {
        let mut log = Log::new();
        log.user("t", "a").call("t", "k1", json!({})).gate("t", "k1", json!({})).decide("t", "k1", ApprovalOutcome::Approved, None);
        let view = log.view();
        assert_eq!(view.items.len(), 2, "one user bubble and one card: {:?}", view.items);
    }

    #[test]
    fn a_workers_task_never_becomes_the_current_turn() {
        let mut log = Log::new();
        log.user("t", "hi").status("t", TaskStatus::Working).call("t", "ask", json!({}));
        log.push(EventBody::TaskStatus {
            task_id: "w".into(),
            status: TaskStatus::Working,
            message: None,
            parent_call_id: Some("ask".into()),
        });
        log.push(EventBody::TaskStatus {
            task_id: "w".into(),
            status: TaskStatus::Completed,
            message: None,
            parent_call_id: Some("ask".into()),
        });
        let view = log.view();
        assert_eq!(view.current_task().map(|t| (t.task_id.as_str(), t.status)), Some(("t", TaskStatus::Working)));
    }

    fn delta(task: &str, offset: usize, text: &str) -> AssistantDelta {
        AssistantDelta { conversation_id: "c".into(), task_id: task.into(), after_seq: 2, offset, text: text.into() }
    }

    #[test]
    fn deltas_build_a_draft_that_the_stored_reply_replaces() {
        let mut log = Log::new();
        log.user("t", "hi").status("t", TaskStatus::Working);
        let mut view = log.view();
        view.apply_delta(&delta("t", 0, "Hel"));
        view.apply_delta(&delta("t", 3, "lo"));
        view.apply_delta(&delta("t", 99, "missed one before this"));
        assert_eq!(view.draft.as_ref().map(|d| d.text.as_str()), Some("Hello"));
        // A retry starts the reply over.
        view.apply_delta(&delta("t", 0, "Hi"));
        assert_eq!(view.draft.as_ref().map(|d| d.text.as_str()), Some("Hi"));
        let seq = view.last_seq + 1;
        view.apply(&Event {
            seq,
            conversation_id: "c".into(),
            at: String::new(),
            body: EventBody::AssistantMessage { task_id: "t".into(), text: "Hi there".into(), agent: None },
        });
        assert_eq!(view.draft, None);
        assert!(matches!(view.items.last(), Some(Item::Assistant { text, .. }) if text == "Hi there"));
    }

    #[test]
    fn a_delta_that_arrives_after_its_stored_reply_is_ignored() {
        let mut log = Log::new();
        log.user("t", "hi").status("t", TaskStatus::Working).status("t", TaskStatus::Completed);
        let mut view = log.view();
        view.apply_delta(&delta("t", 0, "late"));
        assert_eq!(view.draft, None);
    }
}
