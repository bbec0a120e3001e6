//! The approval queue projection. Every state change is a conditional
//! `UPDATE … WHERE state = 'pending'` allowed by [`ApprovalState`]'s table; the loser of a race
//! changes nothing.

use super::{Db, new_row::NewRow};
use anyhow::Context;
use domain::{ApprovalId, CallId, ConversationId, TaskId, UserId};
use domain::{ApprovalState, Machine, Risk, TimeoutAction, rules::DecisionRules, wire};
use serde_json::Value;
use sqlx::AnyConnection;

use super::strict_columns::{Bit, JsonText, NullableJsonText};
use clock::{now_ms, rfc3339};

#[derive(sqlx::FromRow, Clone, Debug)]
pub struct ApprovalRow {
    pub id: ApprovalId,
    pub call_id: CallId,
    pub task_id: TaskId,
    pub conversation_id: ConversationId,
    pub conversation_title: String,
    pub owner_id: Option<UserId>,
    pub owner: Option<String>,
    pub agent: String,
    pub tool: String,
    #[sqlx(try_from = "JsonText")]
    pub args: Value,
    pub gate: String,
    pub summary: String,
    #[sqlx(try_from = "String")]
    pub risk: Risk,
    #[sqlx(try_from = "String")]
    pub state: ApprovalState,
    #[sqlx(try_from = "String")]
    pub timeout_action: TimeoutAction,
    pub created_at: i64,
    pub deadline: i64,
    pub decided_at: Option<i64>,
    pub decided_by: Option<String>,
    pub reason: Option<String>,
    #[sqlx(try_from = "NullableJsonText")]
    pub edited_args: Option<Value>,
    pub escalated_at: Option<i64>,
    pub escalated_by: Option<String>,
    /// `card` (buttons) or `chat` (the user's yes/no reply decides).
    pub confirm: String,
    /// A rejection needs a reason (the gate's `require_reason`).
    #[sqlx(try_from = "Bit")]
    pub require_reason: bool,
    /// The arguments may be edited (the gate's `allow_modification`).
    #[sqlx(try_from = "Bit")]
    pub allow_modification: bool,
    /// Four-eyes: the requester may not approve it (the gate's `separate_requester`).
    #[sqlx(try_from = "Bit")]
    pub separate_requester: bool,
    /// When it is handed to the admins if still pending (the gate's `escalation_timeout_secs`).
    pub escalate_at: Option<i64>,
    pub reminders_sent: i64,
    /// What the decider was told besides the call (none for approvals from before it was kept).
    #[sqlx(try_from = "NullableJsonText")]
    pub context: Option<wire::ApprovalContext>,
    #[sqlx(try_from = "NullableJsonText")]
    pub assessment: Option<wire::RiskAssessment>,
    /// `retry`: how many more times it may be asked again, and how often it was.
    pub retries_left: i64,
    pub resent: i64,
    /// The gate's `escalation_target` (a user or group name) when it was asked.
    pub escalation_target: Option<String>,
    /// Once escalated: the named user or group (NULL: the admins), and its people as ",a,b,".
    pub escalated_to: Option<String>,
    pub escalated_members: Option<String>,
    /// The gate's `approvers`, and their people as ",a,b," for the queue's lookups.
    #[sqlx(try_from = "NullableJsonText")]
    pub approvers: Option<domain::rules::Approvers>,
    pub approver_members: Option<String>,
    /// How many distinct people must approve (the gate's `quorum`), and who did so far (JSON array).
    pub quorum: i64,
    #[sqlx(try_from = "JsonText")]
    pub approved_by: Vec<String>,
    /// Who acted for each entry of `approved_by` (a delegate, where `approved_by` names whom
    /// they decided as), so that a person counts once toward a quorum.
    #[sqlx(try_from = "JsonText")]
    pub approved_people: Vec<String>,
    /// It may be approved "for good" ([`DecisionRules::restriction`]).
    #[sqlx(try_from = "Bit")]
    pub grantable: bool,
    /// Its gate's `reauthenticate`: deciders must have signed in within this many seconds.
    pub reauthenticate_secs: Option<i64>,
    /// The state of the call it is about (`succeeded`, `failed`, …): an approved call may still fail.
    #[sqlx(default)]
    pub call_state: Option<String>,
    /// Whom its gate emails: (person, address).
    #[sqlx(try_from = "NullableJsonText")]
    pub notify: Option<Vec<(String, String)>>,
    /// The configuration version that asked it, and the one in force when it was decided.
    pub policy_version: Option<String>,
    pub decided_policy_version: Option<String>,
}

impl ApprovalRow {
    /// Who handed it to the admins, while it is pending and with them (`None` otherwise).
    /// The people an escalation named (empty when it went to the admins).
    pub fn deciders(&self) -> Vec<String> {
        self.escalated_members.as_deref().unwrap_or_default().split(',').filter(|p| !p.is_empty()).map(str::to_owned).collect()
    }

    /// Who holds it, while it is pending and escalated; `people` is [`Self::deciders`].
    pub fn escalation<'a>(&'a self, people: &'a [String]) -> Option<domain::rules::Escalation<'a>> {
        let by = self.escalated_by_whom()?;
        Some(domain::rules::Escalation { by, to: self.escalated_to.as_deref().map(|to| (to, people)) })
    }

    /// Who escalated it, while it is pending and escalated.
    pub fn escalated_by_whom(&self) -> Option<&str> {
        (self.state == ApprovalState::Pending && self.escalated_at.is_some()).then(|| self.escalated_by.as_deref().unwrap_or("someone"))
    }

    /// Why the call is risky, as assessed when it was asked (none for older approvals).
    pub fn assessment(&self) -> Option<wire::RiskAssessment> {
        self.assessment.clone()
    }

    /// What a decision on it must include.
    /// What the decider was told besides the call (the request, the steps done, the spend).
    pub fn context(&self) -> wire::ApprovalContext {
        self.context.clone().unwrap_or_default()
    }

    /// Who may decide it, when its gate names them.
    pub fn approvers(&self) -> Option<domain::rules::Approvers> {
        self.approvers.clone()
    }

    /// May this user see it because they decide it (an escalation or the gate's approvers named them)?
    pub fn decided_by_user(&self, username: &str) -> bool {
        let named = |members: &Option<String>| {
            members.as_deref().is_some_and(|m| m.to_lowercase().contains(&format!(",{},", username.to_lowercase())))
        };
        named(&self.escalated_members) || named(&self.approver_members)
    }

    pub fn rules(&self) -> DecisionRules {
        DecisionRules {
            require_reason: self.require_reason,
            allow_modification: self.allow_modification,
            separate_requester: self.separate_requester,
            quorum: u32::try_from(self.quorum).unwrap_or(1).max(1),
            grantable: self.grantable,
            reauthenticate_secs: self.reauthenticate_secs.and_then(|s| u32::try_from(s).ok()),
        }
    }

    /// The whole requirement in words, as every door shows it ("Needs: an admin and bob; not the
    /// requester (four-eyes)"), or None when anyone who may see it may decide it alone.
    pub fn needs(&self) -> Option<String> {
        domain::rules::needs(self.approvers.as_ref(), &self.rules())
    }

    /// Whom its gate emails: (person, address).
    pub fn notify(&self) -> Vec<(String, String)> {
        self.notify.clone().unwrap_or_default()
    }

    /// Who approved it so far (a quorum counts distinct people).
    pub fn approved_by(&self) -> Vec<String> {
        self.approved_by.clone()
    }

    /// Who acted for those approvals (the delegates themselves where one stood in).
    pub fn approved_people(&self) -> Vec<String> {
        self.approved_people.clone()
    }

    pub fn args(&self) -> Value {
        self.args.clone()
    }

    pub fn to_wire(&self, now: i64) -> wire::Approval {
        wire::Approval {
            id: self.id.clone(),
            owner: self.owner.clone(),
            conversation_id: self.conversation_id.clone(),
            conversation_title: self.conversation_title.clone(),
            task_id: self.task_id.clone(),
            call_id: self.call_id.clone(),
            agent: self.agent.clone(),
            tool: self.tool.clone(),
            args: self.args(),
            gate: self.gate.clone(),
            summary: self.summary.clone(),
            risk: self.risk,
            state: self.state,
            created_at: rfc3339(self.created_at),
            deadline: rfc3339(self.deadline),
            age_seconds: ((now - self.created_at) / 1000).max(0),
            decided_at: self.decided_at.map(rfc3339),
            decided_by: self.decided_by.clone(),
            decision_seconds: self.decided_at.map(|d| (d - self.created_at) / 1000),
            escalated_by: self.escalated_by.clone(),
            escalated_to: self.escalated_to.clone(),
            deciders: self.deciders(),
            approvers: self.approvers(),
            approved_by: self.approved_by(),
            policy_version: self.policy_version.clone(),
            decided_policy_version: self.decided_policy_version.clone(),
            reason: self.reason.clone(),
            edited_args: self.edited_args.clone(),
            rules: self.rules(),
            reminders_sent: u32::try_from(self.reminders_sent).unwrap_or(0),
            context: self.context(),
            assessment: self.assessment().unwrap_or_default(),
            approve_url: format!("/api/approvals/{}/approve", self.id),
            reject_url: format!("/api/approvals/{}/reject", self.id),
            args_schema: None,
            call_state: self.call_state.clone(),
        }
    }
}

const SELECT: &str = "SELECT a.id, a.call_id, a.task_id, a.conversation_id, c.title AS conversation_title,
    c.owner_id, u.username AS owner, a.agent, a.tool, a.args, a.gate, a.summary, a.risk, a.state, a.timeout_action,
    a.created_at, a.deadline, a.decided_at, a.decided_by, a.reason, a.edited_args, a.escalated_at, a.escalated_by, a.confirm,
    a.require_reason, a.allow_modification, a.separate_requester, a.escalate_at, a.reminders_sent, a.context, a.retries_left, a.resent,
    a.assessment, a.escalation_target, a.escalated_to, a.escalated_members, a.approvers, a.approver_members, a.quorum, a.approved_by, a.notify,
    a.policy_version, a.decided_policy_version, a.approved_people, a.grantable, a.reauthenticate_secs, t.state AS call_state
    FROM approvals a JOIN conversations c ON c.id = a.conversation_id LEFT JOIN users u ON u.id = c.owner_id
    LEFT JOIN tool_calls t ON t.id = a.call_id";

pub struct NewApproval<'a> {
    pub id: &'a ApprovalId,
    pub call_id: &'a CallId,
    pub task_id: &'a TaskId,
    pub conversation_id: &'a ConversationId,
    pub agent: &'a str,
    pub tool: &'a str,
    pub args: &'a Value,
    pub gate: &'a str,
    pub summary: &'a str,
    pub risk: Risk,
    pub timeout_action: TimeoutAction,
    pub deadline: i64,
    pub in_chat: bool,
    pub rules: DecisionRules,
    /// Unix ms: hand it to the admins then if still pending.
    pub escalate_at: Option<i64>,
    /// Remind every this many ms, this many times.
    pub reminders: Option<(i64, u32)>,
    pub context: &'a wire::ApprovalContext,
    /// `retry`: how many times it may be asked again.
    pub retries: u32,
    pub assessment: Option<&'a wire::RiskAssessment>,
    /// Who an escalation goes to when it names no one: a user or group name (none: the admins).
    pub escalation_target: Option<&'a str>,
    /// Who may decide it (the gate's `approvers`, resolved to people).
    pub approvers: Option<&'a domain::rules::Approvers>,
    /// Whom its gate emails: (person, address).
    pub notify: &'a [(String, String)],
    /// The configuration version that asks it.
    pub policy_version: &'a str,
}

pub async fn insert(conn: &mut AnyConnection, a: NewApproval<'_>) -> anyhow::Result<()> {
    let now = now_ms();
    let json =
        |what: &str, value: Result<String, serde_json::Error>| value.with_context(|| format!("failed to encode an approval's {what}"));
    NewRow::into("approvals")
        .set("id", a.id)
        .set("call_id", a.call_id)
        .set("task_id", a.task_id)
        .set("conversation_id", a.conversation_id)
        .set("agent", a.agent)
        .set("tool", a.tool)
        .set("args", a.args.to_string())
        .set("gate", a.gate)
        .set("summary", a.summary)
        .set("risk", a.risk.as_str())
        .set("state", "pending")
        .set("timeout_action", a.timeout_action.as_str())
        .set("created_at", now)
        .set("deadline", a.deadline)
        .set("confirm", if a.in_chat { "chat" } else { "card" })
        .set("require_reason", i64::from(a.rules.require_reason))
        .set("allow_modification", i64::from(a.rules.allow_modification))
        .set("separate_requester", i64::from(a.rules.separate_requester))
        .set("quorum", i64::from(a.rules.quorum))
        .set("grantable", i64::from(a.rules.grantable))
        .set("reauthenticate_secs", a.rules.reauthenticate_secs.map(i64::from))
        .set("escalate_at", a.escalate_at)
        .set("escalation_target", a.escalation_target)
        .set("next_reminder_at", a.reminders.map(|(every, _)| now + every))
        .set("reminder_interval_ms", a.reminders.map(|(every, _)| every))
        .set("reminders_left", a.reminders.map_or(0, |(_, max)| i64::from(max)))
        .set("retries_left", i64::from(a.retries))
        .set("context", json("context", serde_json::to_string(a.context))?)
        .set("assessment", a.assessment.map(|x| json("assessment", serde_json::to_string(x))).transpose()?)
        .set("reversibility", a.assessment.map(|x| x.reversibility.as_str()))
        .set("approvers", a.approvers.map(|x| json("approvers", serde_json::to_string(x))).transpose()?)
        .set("approver_members", a.approvers.map(|x| members_list(&x.people)))
        .set("notify", (!a.notify.is_empty()).then(|| json("notify list", serde_json::to_string(a.notify))).transpose()?)
        .set("policy_version", a.policy_version)
        .insert(conn)
        .await
        .context("failed to record approval")
}

pub async fn get(db: impl Into<Db<'_>>, id: &ApprovalId) -> anyhow::Result<Option<ApprovalRow>> {
    sqlx::query_as(&format!("{SELECT} WHERE a.id = $1"))
        .bind(id)
        .fetch_optional(db.into().read_few())
        .await
        .with_context(|| format!("failed to load approval {id}"))
}

pub async fn pending_for_task(db: impl Into<Db<'_>>, task_id: &TaskId) -> anyhow::Result<Vec<ApprovalRow>> {
    sqlx::query_as(&format!("{SELECT} WHERE a.task_id = $1 AND a.state = 'pending' ORDER BY a.created_at, a.id"))
        .bind(task_id)
        .fetch_all(db.into().read())
        .await
        .with_context(|| format!("failed to load the pending approvals of task {task_id}"))
}

/// The pending approvals of a conversation, oldest first.
pub async fn pending_in(db: impl Into<Db<'_>>, conversation_id: &ConversationId) -> anyhow::Result<Vec<ApprovalRow>> {
    sqlx::query_as(&format!("{SELECT} WHERE a.conversation_id = $1 AND a.state = 'pending' ORDER BY a.created_at, a.id"))
        .bind(conversation_id)
        .fetch_all(db.into().read())
        .await
        .with_context(|| format!("failed to load the pending approvals of conversation {conversation_id}"))
}

/// The card's line after an edit (what runs now, and what was proposed).
pub async fn set_summary(conn: &mut AnyConnection, id: &ApprovalId, summary: &str) -> anyhow::Result<()> {
    sqlx::query("UPDATE approvals SET summary = $1 WHERE id = $2")
        .bind(summary)
        .bind(id)
        .execute(conn)
        .await
        .context("failed to update an approval's summary")?;
    Ok(())
}

/// The one conditional write that decides an approval. False when it was no longer pending.
pub async fn decide(
    conn: &mut AnyConnection,
    id: &ApprovalId,
    to: ApprovalState,
    decided_by: &str,
    reason: Option<&str>,
    edited_args: Option<&Value>,
    policy_version: &str,
) -> anyhow::Result<bool> {
    ApprovalState::Pending.transition(to)?;
    let result = sqlx::query(
        "UPDATE approvals SET state = $1, decided_at = $2, decided_by = $3, reason = $4, edited_args = $5, decided_policy_version = $7
         WHERE id = $6 AND state = 'pending'",
    )
    .bind(to.as_str())
    .bind(now_ms())
    .bind(decided_by)
    .bind(reason)
    .bind(edited_args.map(|a| a.to_string()))
    .bind(id)
    .bind(policy_version)
    .execute(conn)
    .await
    .context("failed to decide approval")?;
    Ok(result.rows_affected() == 1)
}

/// The sweeper's due-time lookups read through their partial index (migrations 1 and 24) on
/// SQLite, named: left to itself, SQLite's planner takes `approvals_by_state` for
/// `state = 'pending'` and reads every waiting approval on every sweep (about 4 ms each at 28,000
/// waiting, against 0.003 ms through the partial index; docs/performance-notes.md, "The sweeper's lookups").
/// PostgreSQL is left to its planner.
fn due_index(backend: super::Backend, index: &str) -> String {
    match backend {
        super::Backend::Sqlite => format!("INDEXED BY {index}"),
        super::Backend::Postgres => String::new(),
    }
}

/// Pending approvals whose deadline has passed.
pub async fn overdue(db: impl Into<Db<'_>>, backend: super::Backend, now: i64) -> anyhow::Result<Vec<ApprovalId>> {
    let index = due_index(backend, "approvals_pending_deadline");
    sqlx::query_scalar(&format!("SELECT id FROM approvals {index} WHERE state = 'pending' AND deadline <= $1 ORDER BY deadline LIMIT 100"))
        .bind(now)
        .fetch_all(db.into().read())
        .await
        .context("failed to find overdue approvals")
}

/// Asks a pending approval again with a new deadline, if it has a retry left; returns how many
/// times it has now been asked again. Conditional, so it happens once per time out.
pub async fn renew(conn: &mut AnyConnection, id: &ApprovalId, deadline: i64) -> anyhow::Result<Option<i64>> {
    sqlx::query_scalar(
        "UPDATE approvals SET deadline = $1, retries_left = retries_left - 1, resent = resent + 1
         WHERE id = $2 AND state = 'pending' AND retries_left > 0 RETURNING resent",
    )
    .bind(deadline)
    .bind(id)
    .fetch_optional(conn)
    .await
    .context("failed to ask an approval again")
}

/// Pending approvals whose escalation time has come and that are not with the admins yet.
pub async fn due_escalations(db: impl Into<Db<'_>>, backend: super::Backend, now: i64) -> anyhow::Result<Vec<ApprovalId>> {
    let index = due_index(backend, "approvals_pending_escalation");
    sqlx::query_scalar(&format!(
        "SELECT id FROM approvals {index} WHERE state = 'pending' AND escalated_at IS NULL AND escalate_at <= $1 ORDER BY escalate_at LIMIT 100",
    ))
    .bind(now)
    .fetch_all(db.into().read())
    .await
    .context("failed to find approvals to escalate")
}

/// Pending approvals with a reminder due.
pub async fn due_reminders(db: impl Into<Db<'_>>, backend: super::Backend, now: i64) -> anyhow::Result<Vec<ApprovalId>> {
    let index = due_index(backend, "approvals_pending_reminder");
    sqlx::query_scalar(&format!(
        "SELECT id FROM approvals {index} WHERE state = 'pending' AND next_reminder_at <= $1 ORDER BY next_reminder_at LIMIT 100"
    ))
    .bind(now)
    .fetch_all(db.into().read())
    .await
    .context("failed to find reminders due")
}

/// Takes the approval's due reminder, if it still has one: schedules the next (or none after the
/// last) and returns `(this reminder's number, how many in all)`. Conditional, so two sweepers
/// (replicas) never send one reminder twice.
pub async fn take_reminder(conn: &mut AnyConnection, id: &ApprovalId, now: i64) -> anyhow::Result<Option<(i64, i64)>> {
    sqlx::query_as(
        "UPDATE approvals SET reminders_sent = reminders_sent + 1, reminders_left = reminders_left - 1,
            next_reminder_at = CASE WHEN reminders_left > 1 THEN next_reminder_at + reminder_interval_ms ELSE NULL END
         WHERE id = $1 AND state = 'pending' AND next_reminder_at <= $2 AND reminders_left > 0
         RETURNING reminders_sent, reminders_sent + reminders_left",
    )
    .bind(id)
    .bind(now)
    .fetch_optional(conn)
    .await
    .context("failed to take a reminder")
}

/// Which states the queue lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StateFilter {
    #[default]
    All,
    /// Every state but `pending`.
    Decided,
    Only(ApprovalState),
}

impl StateFilter {
    /// `all`, `decided`, or one approval state's name.
    pub fn parse(name: &str) -> Result<Self, domain::UnknownName> {
        match name {
            "all" => Ok(Self::All),
            "decided" => Ok(Self::Decided),
            other => ApprovalState::parse(other).map(Self::Only),
        }
    }
}

/// What the queue asks for. Every field narrows the list; `None` means any.
#[derive(Debug, Default)]
pub struct Filter<'a> {
    pub state: StateFilter,
    /// Only approvals of this owner's conversations (a non-admin viewer)…
    pub owner_id: Option<&'a UserId>,
    /// …and those escalated to this user by name or through a group, or naming them among its
    /// approvers…
    pub decider: Option<&'a str>,
    /// …or naming anyone this user stands in for (a delegation in force).
    pub stand_in_for: &'a [String],
    pub tool: Option<&'a str>,
    pub username: Option<&'a str>,
    pub risk: Option<Risk>,
    /// Only calls this reversible (from their risk assessment).
    pub reversibility: Option<wire::Reversibility>,
    pub order: QueueOrder,
    pub limit: i64,
}

/// How the queue is sorted (ties: oldest first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueOrder {
    #[default]
    Newest,
    Oldest,
    /// High risk first.
    Risk,
    /// The soonest deadline first.
    Deadline,
    /// What cannot be undone first, then what can be undone in part.
    Reversibility,
}

impl QueueOrder {
    pub const NAMES: [&'static str; 5] = ["newest", "oldest", "risk", "deadline", "reversibility"];

    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "newest" => Self::Newest,
            "oldest" => Self::Oldest,
            "risk" => Self::Risk,
            "deadline" => Self::Deadline,
            "reversibility" => Self::Reversibility,
            _ => return None,
        })
    }

    fn sql(self) -> &'static str {
        match self {
            Self::Newest => "a.created_at DESC, a.id DESC",
            Self::Oldest => "a.created_at ASC, a.id ASC",
            Self::Risk => "CASE a.risk WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END, a.created_at, a.id",
            Self::Deadline => "a.deadline, a.created_at, a.id",
            Self::Reversibility => {
                "CASE a.reversibility WHEN 'irreversible' THEN 0 WHEN 'partially' THEN 1 WHEN 'fully' THEN 2 ELSE 1 END, a.created_at, a.id"
            }
        }
    }
}

/// The queue in `f.order`; decided approvals (only) newest or oldest by their decision.
pub async fn list(db: impl Into<Db<'_>>, f: &Filter<'_>) -> anyhow::Result<Vec<ApprovalRow>> {
    let (state_clause, state) = match f.state {
        // Every variant mentions $1: PostgreSQL refuses a bound parameter the statement never uses.
        StateFilter::All => ("$1 IS NULL", None),
        StateFilter::Decided => ("a.state <> $1", Some(ApprovalState::Pending.as_str())),
        StateFilter::Only(state) => ("a.state = $1", Some(state.as_str())),
    };
    // Decided approvals are listed by when they were decided (the Decided tab: the latest decision
    // first), not by when they were asked.
    let decided_only = match f.state {
        StateFilter::All => false,
        StateFilter::Decided => true,
        StateFilter::Only(state) => state != ApprovalState::Pending,
    };
    let order = match f.order {
        QueueOrder::Newest if decided_only => "COALESCE(a.decided_at, a.created_at) DESC, a.id DESC",
        QueueOrder::Oldest if decided_only => "COALESCE(a.decided_at, a.created_at) ASC, a.id ASC",
        other => other.sql(),
    };
    let stand_ins: String = (9..9 + f.stand_in_for.len())
        .map(|n| format!(" OR a.escalated_members LIKE ${n} ESCAPE '!' OR a.approver_members LIKE ${n} ESCAPE '!'"))
        .collect();
    let sql = format!(
        "{SELECT} WHERE {state_clause} AND ($2 IS NULL OR c.owner_id = $2 OR a.escalated_members LIKE $7 ESCAPE '!' OR a.approver_members LIKE $7 ESCAPE '!'{stand_ins})
         AND ($3 IS NULL OR a.tool = $3)
         AND ($4 IS NULL OR lower(u.username) = lower($4)) AND ($5 IS NULL OR a.risk = $5)
         AND ($8 IS NULL OR a.reversibility = $8)
         ORDER BY {order} LIMIT $6"
    );
    let mut query = sqlx::query_as(&sql)
        .bind(state)
        .bind(f.owner_id)
        .bind(f.tool)
        .bind(f.username)
        .bind(f.risk.map(Risk::as_str))
        .bind(f.limit)
        .bind(f.decider.map(member_pattern).unwrap_or_default())
        .bind(f.reversibility.map(wire::Reversibility::as_str));
    for person in f.stand_in_for {
        query = query.bind(member_pattern(person));
    }
    query.fetch_all(db.into().read()).await.context("failed to list approvals")
}

/// Why an identical call (same tool and arguments) was already refused in this conversation.
pub async fn refused_before(
    db: impl Into<Db<'_>>,
    conversation_id: &ConversationId,
    tool: &str,
    args: &Value,
) -> anyhow::Result<Option<String>> {
    let rows: Vec<(String, Option<String>, String)> = sqlx::query_as(
        "SELECT args, reason, state FROM approvals WHERE conversation_id = $1 AND tool = $2 AND state IN ('rejected', 'expired')",
    )
    .bind(conversation_id)
    .bind(tool)
    .fetch_all(db.into().read())
    .await
    .context("failed to look for earlier rejections")?;
    Ok(rows.into_iter().find_map(|(stored, reason, state)| {
        let same = serde_json::from_str::<Value>(&stored).is_ok_and(|v| &v == args);
        same.then(|| reason.unwrap_or(state))
    }))
}

/// Hands a pending approval to the admins with a new deadline; false if it was not pending or
/// already escalated.
/// A LIKE pattern (with `ESCAPE '!'`) matching `escalated_members` that list `name`. `_` in a
/// user name is a wildcard to LIKE: escaped, so `a_b` never matches `axb`.
fn member_pattern(name: &str) -> String {
    format!("%,{},%", name.replace('!', "!!").replace('%', "!%").replace('_', "!_"))
}

/// People as stored for LIKE lookups: ",a,b,".
fn members_list(people: &[String]) -> String {
    format!(",{},", people.join(","))
}

/// The pending approvals that name `group` among their approvers.
pub async fn pending_naming_group(db: impl Into<Db<'_>>, group: &str) -> anyhow::Result<Vec<ApprovalRow>> {
    let rows: Vec<ApprovalRow> = sqlx::query_as(&format!("{SELECT} WHERE a.state = 'pending' AND a.approvers IS NOT NULL"))
        .fetch_all(db.into().read())
        .await
        .context("failed to list the approvals with approvers")?;
    let named = format!("group:{group}").to_lowercase();
    Ok(rows.into_iter().filter(|a| a.approvers().is_some_and(|x| x.names.iter().any(|n| n.to_lowercase() == named))).collect())
}

/// The pending approvals whose approvers include `person` (a group member, a named user, or a
/// gate's share of either), to resolve again when their account is turned off.
pub async fn pending_naming_person(db: impl Into<Db<'_>>, person: &str) -> anyhow::Result<Vec<ApprovalRow>> {
    let rows: Vec<ApprovalRow> = sqlx::query_as(&format!("{SELECT} WHERE a.state = 'pending' AND a.approvers IS NOT NULL"))
        .fetch_all(db.into().read())
        .await
        .context("failed to list the approvals with approvers")?;
    let is = |p: &String| p.eq_ignore_ascii_case(person);
    Ok(rows
        .into_iter()
        .filter(|a| a.approvers().is_some_and(|x| x.people.iter().any(is) || x.each.iter().any(|s| s.people.iter().any(is))))
        .collect())
}

/// Sets who may decide a pending approval (a group it names changed); false if no longer pending.
pub async fn set_approvers(conn: &mut AnyConnection, id: &ApprovalId, approvers: &domain::rules::Approvers) -> anyhow::Result<bool> {
    let result = sqlx::query("UPDATE approvals SET approvers = $1, approver_members = $2 WHERE id = $3 AND state = 'pending'")
        .bind(serde_json::to_string(approvers).context("failed to encode an approval's approvers")?)
        .bind(members_list(&approvers.people))
        .bind(id)
        .execute(conn)
        .await
        .context("failed to change an approval's approvers")?;
    Ok(result.rows_affected() == 1)
}

/// Counts one approval toward a quorum: `principal` is whom it counts as, `person` who acted
/// (the same but for a delegate). False if it is no longer pending or someone else counted in
/// between (the caller holds the conversation's write, so that is a bug).
pub async fn count_approval(conn: &mut AnyConnection, approval: &ApprovalRow, principal: &str, person: &str) -> anyhow::Result<bool> {
    let mut approved_by = approval.approved_by();
    approved_by.push(principal.to_owned());
    let mut people = approval.approved_people();
    people.push(person.to_owned());
    let result =
        sqlx::query("UPDATE approvals SET approved_by = $1, approved_people = $4 WHERE id = $2 AND state = 'pending' AND approved_by = $3")
            .bind(serde_json::to_string(&approved_by).context("failed to encode who approved")?)
            .bind(&approval.id)
            // As it was read (stored compact, as serde_json writes it).
            .bind(serde_json::to_string(&approval.approved_by).context("failed to encode who approved")?)
            .bind(serde_json::to_string(&people).context("failed to encode who approved")?)
            .execute(conn)
            .await
            .context("failed to count an approval")?;
    Ok(result.rows_affected() == 1)
}

/// The pending approvals this user decides though they are not theirs: escalated to them (by
/// name or through a group) or naming them among the gate's approvers.
pub async fn escalated_to(db: impl Into<Db<'_>>, username: &str) -> anyhow::Result<Vec<ApprovalId>> {
    sqlx::query_scalar(
        "SELECT id FROM approvals WHERE state = 'pending' AND (escalated_members LIKE $1 ESCAPE '!' OR approver_members LIKE $1 ESCAPE '!')",
    )
        .bind(member_pattern(username))
        .fetch_all(db.into().read())
        .await
        .context("failed to list the approvals escalated to a user")
}

/// Who approved the call's approval, if it had one that a person decided.
pub async fn decider_of(db: impl Into<Db<'_>>, call_id: &CallId) -> anyhow::Result<Option<Decided>> {
    sqlx::query_as("SELECT decided_by, gate, agent FROM approvals WHERE call_id = $1 ORDER BY created_at DESC LIMIT 1")
        .bind(call_id)
        .fetch_optional(db.into().read())
        .await
        .context("failed to look up who decided a call")
}

/// Who decided a call's approval, under which gate, for which agent.
#[derive(sqlx::FromRow)]
pub struct Decided {
    pub decided_by: Option<String>,
    pub gate: String,
    pub agent: String,
}

/// Hands a pending approval over: to the admins (`to` None) or to a named user or group and its
/// people. False when it is no longer pending or already escalated.
pub async fn escalate(
    conn: &mut AnyConnection,
    id: &ApprovalId,
    by: &str,
    deadline: i64,
    to: Option<(&str, &[String])>,
) -> anyhow::Result<bool> {
    let result = sqlx::query(
        "UPDATE approvals SET escalated_at = $1, escalated_by = $2, deadline = $3, escalated_to = $5, escalated_members = $6
         WHERE id = $4 AND state = 'pending' AND escalated_at IS NULL",
    )
    .bind(now_ms())
    .bind(by)
    .bind(deadline)
    .bind(id)
    .bind(to.map(|(name, _)| name))
    .bind(to.map(|(_, people)| members_list(people)))
    .execute(conn)
    .await
    .context("failed to escalate approval")?;
    Ok(result.rows_affected() == 1)
}

/// The oldest pending approval of the conversation that the user answers in the chat.
pub async fn pending_in_chat(db: impl Into<Db<'_>>, conversation_id: &ConversationId) -> anyhow::Result<Option<ApprovalRow>> {
    sqlx::query_as(&format!(
        "{SELECT} WHERE a.conversation_id = $1 AND a.state = 'pending' AND a.confirm = 'chat' ORDER BY a.created_at, a.id LIMIT 1"
    ))
    .bind(conversation_id)
    .fetch_optional(db.into().read_few())
    .await
    .context("failed to look up a chat confirmation")
}

/// Pending approvals per gate, for `/metrics`.
pub async fn pending_by_gate(db: impl Into<Db<'_>>) -> anyhow::Result<Vec<(String, i64)>> {
    sqlx::query_as("SELECT gate, COUNT(*) FROM approvals WHERE state = 'pending' GROUP BY gate ORDER BY gate")
        .fetch_all(db.into().read())
        .await
        .context("failed to count pending approvals")
}

/// Who approved which arguments of `tool` in the conversation (people, not timeouts): for grant
/// suggestions. Edited arguments count as what was approved.
pub async fn approved_args(db: impl Into<Db<'_>>, conversation_id: &ConversationId, tool: &str) -> anyhow::Result<Vec<(String, Value)>> {
    let rows: Vec<(Option<String>, String, Option<String>)> = sqlx::query_as(
        "SELECT decided_by, args, edited_args FROM approvals WHERE conversation_id = $1 AND tool = $2 AND state = 'approved'",
    )
    .bind(conversation_id)
    .bind(tool)
    .fetch_all(db.into().read())
    .await
    .context("failed to read earlier approvals")?;
    let mut approved = Vec::new();
    for (by, args, edited) in rows {
        let Some(by) = by.filter(|b| b != "system") else { continue };
        let text = edited.unwrap_or(args);
        let args =
            serde_json::from_str(&text).with_context(|| format!("an approval of {tool} by {by} holds arguments that are not JSON"))?;
        approved.push((by, args));
    }
    Ok(approved)
}

/// The pending approvals asked under another configuration than `version` (or before versions
/// were kept).
pub async fn pending_under_other_policy(db: impl Into<Db<'_>>, version: &str) -> anyhow::Result<Vec<ApprovalRow>> {
    sqlx::query_as(&format!(
        "{SELECT} WHERE a.state = 'pending' AND (a.policy_version IS NULL OR a.policy_version <> $1) ORDER BY a.created_at, a.id"
    ))
    .bind(version)
    .fetch_all(db.into().read())
    .await
    .context("failed to list approvals asked under another configuration")
}

/// Marks a pending approval as checked against configuration `version` (it stays pending).
pub async fn set_policy_version(conn: &mut AnyConnection, id: &ApprovalId, version: &str) -> anyhow::Result<()> {
    sqlx::query("UPDATE approvals SET policy_version = $1 WHERE id = $2 AND state = 'pending'")
        .bind(version)
        .bind(id)
        .execute(conn)
        .await
        .context("failed to record an approval's configuration version")?;
    Ok(())
}

/// The pending approvals escalated to `group` (by name, ignoring case).
pub async fn pending_escalated_to(db: impl Into<Db<'_>>, group: &str) -> anyhow::Result<Vec<ApprovalId>> {
    sqlx::query_scalar("SELECT id FROM approvals WHERE state = 'pending' AND lower(escalated_to) = lower($1)")
        .bind(group)
        .fetch_all(db.into().read())
        .await
        .context("failed to list the approvals escalated to a group")
}

/// Sets the people a pending escalation stands for (its group changed).
pub async fn set_escalated_members(conn: &mut AnyConnection, id: &ApprovalId, people: &[String]) -> anyhow::Result<()> {
    sqlx::query("UPDATE approvals SET escalated_members = $1 WHERE id = $2 AND state = 'pending'")
        .bind(members_list(people))
        .bind(id)
        .execute(conn)
        .await
        .context("failed to change an escalation's people")?;
    Ok(())
}
