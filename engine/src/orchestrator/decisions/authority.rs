//! Who decides and whether they may: the decision vocabulary (`Actor`, `Decision`) and the
//! authority checks every door's decision goes through, inside the decision's write
//! (docs/architecture.md, decision 8).

use domain::{
    ApprovalId, ApprovalState, Role, UserId,
    rules::{self, Refusal},
    wire::{FieldProblem, GrantRequest},
};
use serde_json::Value;

use super::Decisions;
use crate::{
    Error,
    clock::now_ms,
    store::{
        Write,
        approvals::{self, ApprovalRow},
    },
};

/// Who decides, for the event log and the audit trail.
#[derive(Clone, Debug)]
pub struct Actor {
    pub name: String,
    /// The person's account, whose decision limit each attempt counts against
    /// ([`Decisions::count_attempt`]); `None` for the server itself.
    pub user_id: Option<UserId>,
    /// `None`: the server itself, applying a timeout action.
    pub role: Option<Role>,
    pub ip: Option<String>,
    pub user_agent: Option<String>,
    /// Deciding in this person's place (a delegation to the actor; `delegations.rs`).
    pub on_behalf_of: Option<String>,
    /// How the decision came when not through the app or the API, e.g. `link <id>` (a signed
    /// decision link), for the audit trail.
    pub via: Option<String>,
    /// When the person last proved who they are with this credential (ms): a session's sign-in;
    /// `None` for tokens, links and chat apps. Gates with `reauthenticate` ask for a recent one.
    pub signed_in_at: Option<i64>,
}

impl Actor {
    /// The server applying a timeout action (the only decisions it makes itself).
    pub fn system() -> Self {
        Self {
            name: SYSTEM.into(),
            user_id: None,
            role: None,
            ip: None,
            user_agent: None,
            on_behalf_of: None,
            via: None,
            signed_in_at: None,
        }
    }

    /// Whose decision it counts as: the person the actor stands in for, else the actor.
    pub fn principal(&self) -> &str {
        self.on_behalf_of.as_deref().unwrap_or(&self.name)
    }

    /// The role as the audit trail records it (`system` for the server).
    pub fn role_name(&self) -> &'static str {
        self.role.map_or(SYSTEM, Role::as_str)
    }
}

#[derive(Clone, Debug)]
pub enum Decision {
    /// With `grant`, also allow the tool in this conversation from now on.
    Approve {
        args: Option<Value>,
        grant: Option<GrantRequest>,
    },
    Reject {
        reason: Option<String>,
    },
    /// Do not run the call; send the human's guidance to the model instead.
    Defer {
        guidance: String,
    },
}

/// Who decided, as recorded in the event and the approval row.
pub const SYSTEM: &str = "system";

/// Answering a question is approving it with the answer (`tools::ask`): without one, with one
/// that is not among the options, or "for good" (a grant), nothing is decided.
pub(super) fn check_answer(approval: &ApprovalRow, args: Option<&Value>, grant: bool) -> Result<(), Error> {
    let invalid = Error::invalid;
    if grant {
        return Err(invalid("/grant", "a question cannot be answered for good: leave out grant".into()));
    }
    let with = args.cloned().unwrap_or_else(|| approval.args());
    crate::tools::ask::answer_of(&with).map(drop).map_err(|why| invalid("/args/answer", why))
}

/// A decision that breaks its approval's rules (a 422 naming the field).
pub(super) fn breached(breach: rules::Breach) -> Error {
    Error::Invalid { message: breach.message.to_owned(), details: vec![FieldProblem::new(format!("/{}", breach.field), breach.message)] }
}

/// Who may decide an approval, checked inside the decision's transaction (after the conversation
/// is locked, so an escalation or a timeout that commits first always counts): one whose deadline
/// has passed belongs to its timeout action, even before the sweeper got to it, and one handed to
/// the admins is theirs to decide. The server itself (timeouts) always may.
pub(super) fn may_decide(actor: &Actor, approval: &ApprovalRow, now: i64) -> Result<(), Error> {
    let Some(role) = actor.role else { return Ok(()) };
    approval.rules().check_sign_in(actor.signed_in_at, now).map_err(Error::NotAllowed)?;
    let people = approval.deciders();
    let decider = rules::Decider { name: &actor.name, is_admin: role == Role::Admin };
    let approvers = approval.approvers();
    rules::may_decide(decider, approval.escalation(&people), approvers.as_ref(), approval.deadline, now).map_err(|refusal| match refusal {
        Refusal::OutOfTime => {
            Error::WrongState(format!("approval {} ran out of time; its timeout action ({}) applies", approval.id, approval.timeout_action))
        }
        Refusal::WithTheAdmins { .. } | Refusal::WithOthers { .. } | Refusal::NotAnApprover { .. } => {
            Error::NotAllowed(refusal.to_string())
        }
    })
}

/// Four-eyes (a gate's `separate_requester`): a person may not approve a call their own
/// conversation made (403), nor may whoever stands in for them; the server's timeout actions
/// are not a person. Also asked before approve links are made for someone.
pub fn four_eyes(actor: &Actor, approval: &ApprovalRow) -> Result<(), Error> {
    if actor.role.is_none() {
        return Ok(());
    }
    let rules = approval.rules();
    for person in [Some(actor.name.as_str()), actor.on_behalf_of.as_deref()].into_iter().flatten() {
        rules.check_approver(person, approval.owner.as_deref()).map_err(Error::NotAllowed)?;
    }
    Ok(())
}

impl Decisions {
    /// Counts a person's attempt against their decision limit (engine/src/limits.rs), or refuses
    /// it (`Limited`) when they used this minute's. Each entry point a person decides, answers,
    /// escalates or aborts through calls it first, in a write of its own before the decision's:
    /// a decision refused afterwards still counts. The count is one statement, so the person's
    /// counter row is locked only while it runs: inside the decision's transaction, a replica
    /// frozen mid-write would hold it and stall that person's decisions on every replica
    /// (docs/reliability.md, "A frozen replica"). The server (deadlines, rules, the sweeper)
    /// never counts. A door calls it itself only for an attempt it refuses before reaching an
    /// entry point (the API's 404 for a hidden approval), so that probing costs the same.
    pub async fn count_attempt(&self, actor: &Actor) -> Result<(), Error> {
        match (&actor.user_id, actor.role) {
            (Some(user_id), Some(_)) => Ok(self.limits.decision(user_id).await?),
            _ => Ok(()),
        }
    }

    /// Who the actor decides as: themselves when the rule allows them, else the first person who
    /// delegated to them (in force now) whom it allows — the refusal stands otherwise.
    pub(super) async fn decider(&self, w: &mut Write, actor: &Actor, approval: &ApprovalRow) -> Result<Actor, Error> {
        decider_in(&mut w.tx, actor, approval).await
    }

    /// Whether `actor` may decide the approval now, as [`Self::decide`] would check it (without
    /// deciding): the approval while it is pending and theirs to decide, and who they decide as.
    pub async fn may_decide_now(&self, approval_id: &ApprovalId, actor: &Actor) -> Result<(ApprovalRow, Actor), Error> {
        let mut conn = self.ctx.store.connection().await?;
        let approval = pending_approval(&mut conn, approval_id).await?;
        let as_actor = decider_in(&mut conn, actor, &approval).await?;
        Ok((approval, as_actor))
    }
}

/// [`Decisions::decider`] on any connection.
pub(in crate::orchestrator) async fn decider_in(
    conn: &mut sqlx::AnyConnection,
    actor: &Actor,
    approval: &ApprovalRow,
) -> Result<Actor, Error> {
    {
        let refusal = match may_decide(actor, approval, now_ms()) {
            Ok(()) => return Ok(actor.clone()),
            Err(refusal @ Error::NotAllowed(_)) if actor.role.is_some() => refusal,
            Err(other) => return Err(other),
        };
        for principal in crate::store::delegations::delegators_of(&mut *conn, &actor.name, now_ms()).await? {
            let stand_in = Actor { name: principal.clone(), ..actor.clone() };
            if may_decide(&stand_in, approval, now_ms()).is_ok() {
                return Ok(Actor { on_behalf_of: Some(principal), ..actor.clone() });
            }
        }
        Err(refusal)
    }
}

/// The approval if it exists for `actor` (404 otherwise: one they may not see is not revealed,
/// `sees_approval`) and is still pending (409). The server itself sees every approval.
pub(super) async fn visible_pending_approval(
    conn: &mut sqlx::AnyConnection,
    approval_id: &ApprovalId,
    actor: &Actor,
) -> Result<ApprovalRow, Error> {
    let missing = || Error::Unknown(format!("approval {approval_id} does not exist"));
    let approval = approvals::get(&mut *conn, approval_id).await?.ok_or_else(missing)?;
    if actor.role.is_some() && !crate::orchestrator::sees_approval(&mut *conn, &approval, actor).await? {
        return Err(missing());
    }
    if approval.state != ApprovalState::Pending {
        return Err(Error::WrongState(format!("approval {approval_id} is already {}", approval.state)));
    }
    Ok(approval)
}

/// The approval if it exists (404) and is still pending (409), on any connection.
pub(in crate::orchestrator) async fn pending_approval(
    conn: &mut sqlx::AnyConnection,
    approval_id: &ApprovalId,
) -> Result<ApprovalRow, Error> {
    let approval =
        approvals::get(&mut *conn, approval_id).await?.ok_or_else(|| Error::Unknown(format!("approval {approval_id} does not exist")))?;
    if approval.state != ApprovalState::Pending {
        return Err(Error::WrongState(format!("approval {approval_id} is already {}", approval.state)));
    }
    Ok(approval)
}
