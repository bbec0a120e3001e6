//! Tool calls as they were recorded — who asked, what the policy did, who decided, what the
//! model had spent, which grant let a call run — for replaying a draft policy against them
//! (`countersign policy replay`, engine/src/replay.rs, which reads these rows; the store knows
//! nothing of it). Read-only: one query for the calls, one for the grants that let some run, on
//! both backends.

use std::collections::HashMap;

use anyhow::Context;
use domain::{
    EventBody,
    rules::{Approvers, DecisionRules},
    wire::{RiskAssessment, Usage},
};
use serde_json::Value;

use super::Db;

/// One tool call as it was recorded: what it was, what was known of it when it was proposed, and
/// what the policy in force did with it.
#[derive(Clone, Debug)]
pub struct RecordedCall {
    pub call_id: String,
    pub conversation_id: String,
    /// The agent that proposed it (a worker's, for a delegated task).
    pub agent: String,
    pub tool: String,
    /// As proposed (before any edit by a decider).
    pub args: Value,
    /// User name of the conversation's owner; `None`: a conversation without one.
    pub requester: Option<String>,
    /// When it was proposed (Unix ms).
    pub at_ms: i64,
    /// The model's confidence in it, where it was kept (only asked calls keep one).
    pub confidence: Option<f64>,
    /// What the model had spent when it proposed the call, that step included: in its task and
    /// in its whole conversation (`policy::Spent`).
    pub spent_task: Usage,
    pub spent_conversation: Usage,
    pub then: Then,
    /// The standing grant that let it run without asking (`then` is `NotAsked`), if one did.
    pub granted: Option<Granted>,
}

/// The standing grant that let a call run without asking anyone.
#[derive(Clone, Debug)]
pub struct Granted {
    pub id: String,
    pub created_by: String,
    /// The configuration version it was made under: it covers calls only under that one.
    pub policy_version: Option<String>,
    /// The gate whose calls it covers.
    pub gate: Option<String>,
}

/// What happened to a recorded call.
#[derive(Clone, Debug)]
pub enum Then {
    /// No human was asked: it ran (no gate stopped it, or a grant covered it) or it failed the
    /// checks before any gate (a tool the agent did not have, arguments that broke its schema).
    NotAsked,
    /// Refused without asking: a human had refused the same call in its conversation before.
    RefusedAgain,
    Asked(Asked),
}

/// An asked call: under which gate, how it ended and who decided.
#[derive(Clone, Debug)]
pub struct Asked {
    /// The gate that asked (several are named joined with " + ").
    pub gate: String,
    /// approved, rejected, expired, canceled, deferred or pending.
    pub outcome: String,
    /// The people who decided: each approver of a quorum, whoever rejected it. Empty when no
    /// person did (a timeout, an abort, still pending).
    pub deciders: Vec<String>,
    /// Who could decide it, as its gates named them and the people they stood for then (`None`:
    /// whoever saw it).
    pub approvers: Option<Approvers>,
    /// What deciding it required of them: how many had to approve, four-eyes, a fresh sign-in, a
    /// reason to reject, no edits (grantable is not kept here).
    pub rules: DecisionRules,
    /// Asked in the chat (`confirm = "chat"`: the requester's reply decided), not on a card.
    pub in_chat: bool,
}

/// The calls proposed since `$1` (of agent `$2`, when it is not NULL), each with its approval if
/// one was asked and its conversation owner's name; and, in the same rows, the model usage of
/// their conversations (from their start: a conversation's budget counts every turn), which
/// [`calls`] adds up into each call's spend. The `approvals` table has what was decided (an
/// approval per asked call, `call_id` being unique), `tool_calls` every call, asked or not; the
/// event log only the usage, which nothing else keeps. JSON stays text here (each backend
/// reads it differently) and is read in Rust.
///
/// A step's usage is recorded in the write that records its calls, just before them, so at the
/// same millisecond usage comes first (`row_kind DESC`: 'usage' after 'call' in the alphabet).
/// (A later step's usage in that same millisecond would count a little early: only a budget gate
/// reads it, and only at its threshold.) Every column the order names is an alias of the first
/// SELECT's, as SQLite wants of a compound SELECT.
const SQL: &str =
    "SELECT 'call' AS row_kind, tc.conversation_id AS conversation_id, tc.created_at AS happened_at, tc.task_id, tc.id AS call_id,
        COALESCE(t.agent, c.agent) AS agent, tc.tool, COALESCE(a.args, tc.args) AS body, tc.state AS call_state,
        u.username AS requester, a.state AS approval_state, a.gate, a.decided_by, a.approved_by, a.approvers, a.quorum, a.assessment,
        a.confirm, a.require_reason, a.allow_modification, a.separate_requester, a.reauthenticate_secs
    FROM tool_calls tc
    JOIN tasks t ON t.id = tc.task_id
    JOIN conversations c ON c.id = tc.conversation_id
    LEFT JOIN users u ON u.id = c.owner_id
    LEFT JOIN approvals a ON a.call_id = tc.id
    WHERE tc.created_at >= $1 AND ($2 IS NULL OR COALESCE(t.agent, c.agent) = $2)
UNION ALL
SELECT 'usage', e.conversation_id, e.created_at, e.task_id, NULL, NULL, NULL, e.body, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL
    FROM events e
    WHERE e.kind = 'model-usage' AND e.conversation_id IN (SELECT conversation_id FROM tool_calls WHERE created_at >= $1)
ORDER BY conversation_id, happened_at, row_kind DESC";

/// One row of [`SQL`]: a call (`call_id` set) or a step's model usage (`body`: its event).
#[derive(sqlx::FromRow)]
struct Row {
    conversation_id: String,
    happened_at: i64,
    task_id: String,
    call_id: Option<String>,
    agent: Option<String>,
    tool: Option<String>,
    /// A call's arguments as proposed, or the usage event.
    body: String,
    call_state: Option<String>,
    requester: Option<String>,
    approval_state: Option<String>,
    gate: Option<String>,
    decided_by: Option<String>,
    approved_by: Option<String>,
    approvers: Option<String>,
    quorum: Option<i64>,
    assessment: Option<String>,
    /// The approval's rules as it was asked: `card` or `chat`, and flags (0 or 1).
    confirm: Option<String>,
    require_reason: Option<i64>,
    allow_modification: Option<i64>,
    separate_requester: Option<i64>,
    reauthenticate_secs: Option<i64>,
}

/// The calls proposed since `since_ms` (only `agent`'s, when given), each with what the model
/// had spent when it proposed it; grouped by conversation, in the order they were proposed.
pub async fn calls(db: impl Into<Db<'_>>, since_ms: i64, agent: Option<&str>) -> anyhow::Result<Vec<RecordedCall>> {
    let mut db: Db<'_> = db.into();
    let rows: Vec<Row> =
        sqlx::query_as(SQL).bind(since_ms).bind(agent).fetch_all(db.again().read()).await.context("failed to load the recorded calls")?;
    let mut calls = Vec::new();
    let mut conversation = String::new();
    let (mut in_conversation, mut by_task) = (Usage::default(), HashMap::<String, Usage>::new());
    for mut row in rows {
        if row.conversation_id != conversation {
            conversation.clone_from(&row.conversation_id);
            (in_conversation, by_task) = (Usage::default(), HashMap::new());
        }
        let Some(call_id) = row.call_id.take() else {
            let event: EventBody = serde_json::from_str(&row.body)
                .with_context(|| format!("conversation {}: a model-usage event is not one", row.conversation_id))?;
            if let EventBody::ModelUsage { usage, .. } = event {
                in_conversation.add(&usage);
                by_task.entry(row.task_id).or_default().add(&usage);
            }
            continue;
        };
        let spent = (by_task.get(&row.task_id).copied().unwrap_or_default(), in_conversation);
        calls.push(recorded(row, call_id, spent)?);
    }
    let mut granted = granted(db.again(), since_ms).await?;
    for call in &mut calls {
        call.granted = granted.remove(&call.call_id);
    }
    Ok(calls)
}

/// The `tool-call` events that may name the grant that let their call run. Only those are read
/// whole; an argument named `grant_id` matches too, and is told apart once the event is read.
const GRANTED_SQL: &str = "SELECT body FROM events WHERE kind = 'tool-call' AND created_at >= $1 AND body LIKE '%\"grant_id\":%'";

/// The standing grants that let calls proposed since `since_ms` run unasked, by call id: each
/// call's event names its grant, which says who gave it and under which version.
async fn granted(mut db: Db<'_>, since_ms: i64) -> anyhow::Result<HashMap<String, Granted>> {
    // A call's event is written just before the call, in the same write: a minute's margin keeps
    // the window's first calls.
    let since = since_ms.saturating_sub(60_000);
    let bodies: Vec<(String,)> =
        sqlx::query_as(GRANTED_SQL).bind(since).fetch_all(db.again().read()).await.context("failed to load the calls' grants")?;
    let mut grants: HashMap<String, Option<Granted>> = HashMap::new();
    let mut by_call = HashMap::new();
    for (body,) in bodies {
        let Ok(EventBody::ToolCall { call_id, grant_id: Some(grant_id), .. }) = serde_json::from_str::<EventBody>(&body) else {
            continue;
        };
        let id = grant_id.to_string();
        // A grant lets many calls run: each is read once.
        let found = match grants.get(&id) {
            Some(found) => found.clone(),
            None => {
                let found = grant(db.again(), &id).await?;
                grants.insert(id, found.clone());
                found
            }
        };
        if let Some(granted) = found {
            by_call.insert(call_id.to_string(), granted);
        }
    }
    Ok(by_call)
}

/// The grant `id`, as a call it let run names it; `None` if it is no longer stored.
async fn grant(db: Db<'_>, id: &str) -> anyhow::Result<Option<Granted>> {
    let row: Option<(String, Option<String>, Option<String>)> =
        sqlx::query_as("SELECT created_by, policy_version, gate FROM grants WHERE id = $1")
            .bind(id)
            .fetch_optional(db.read_few())
            .await
            .context("failed to load a grant")?;
    Ok(row.map(|(created_by, policy_version, gate)| Granted { id: id.to_owned(), created_by, policy_version, gate }))
}

/// A JSON column of a call's row, read strictly: a value that does not parse is an error naming
/// the call and the column, never a default (store/strict_columns.rs).
fn json<T: serde::de::DeserializeOwned>(call_id: &str, column: &str, text: Option<&str>) -> anyhow::Result<Option<T>> {
    text.map(serde_json::from_str).transpose().with_context(|| format!("call {call_id}: its stored {column} is not what it should be"))
}

/// A call's row as a [`RecordedCall`]; `spent`: the task's and the conversation's usage so far.
fn recorded(row: Row, call_id: String, (spent_task, spent_conversation): (Usage, Usage)) -> anyhow::Result<RecordedCall> {
    let args: Value = serde_json::from_str(&row.body).with_context(|| format!("call {call_id}: its stored arguments are not JSON"))?;
    let confidence = json::<RiskAssessment>(&call_id, "assessment", row.assessment.as_deref())?.and_then(|a| a.confidence);
    let then = match row.approval_state {
        Some(outcome) => {
            // Each approver of a quorum, and whoever decided last (a rejection, a lone approval).
            let mut deciders: Vec<String> = json(&call_id, "approved_by", row.approved_by.as_deref())?.unwrap_or_default();
            if let Some(by) = row.decided_by.filter(|by| by != domain::wording::SYSTEM)
                && !deciders.contains(&by)
            {
                deciders.push(by);
            }
            Then::Asked(Asked {
                gate: row.gate.unwrap_or_default(),
                outcome,
                deciders,
                approvers: json::<Approvers>(&call_id, "approvers", row.approvers.as_deref())?,
                rules: DecisionRules {
                    require_reason: row.require_reason == Some(1),
                    allow_modification: row.allow_modification != Some(0),
                    separate_requester: row.separate_requester == Some(1),
                    quorum: row.quorum.and_then(|q| u32::try_from(q).ok()).unwrap_or(1).max(1),
                    reauthenticate_secs: row.reauthenticate_secs.and_then(|s| u32::try_from(s).ok()),
                    ..DecisionRules::default()
                },
                in_chat: row.confirm.as_deref() == Some("chat"),
            })
        }
        // A call starts rejected only when it is refused again without asking (policy::classify).
        None if row.call_state.as_deref() == Some("rejected") => Then::RefusedAgain,
        None => Then::NotAsked,
    };
    Ok(RecordedCall {
        call_id,
        conversation_id: row.conversation_id,
        agent: row.agent.unwrap_or_default(),
        tool: row.tool.unwrap_or_default(),
        args,
        requester: row.requester,
        at_ms: row.happened_at,
        confidence,
        spent_task,
        spent_conversation,
        then,
        granted: None,
    })
}
