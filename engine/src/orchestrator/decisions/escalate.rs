//! Handing a pending approval over — to the admins, or to a named user or group (`[[groups]]`):
//! on demand by its owner (naming a target or not), as an `escalate` timeout action (with a fresh
//! deadline), or when the gate's escalation timeout passes (the deadline stays). Without a named
//! target it goes to the gate's `escalation_target`, else the admins. See `domain::rules`
//! for who may decide it then.

use crate::Error;
use domain::ApprovalId;

use domain::{AuditKind, EventBody};
use serde_json::json;

use super::{
    Decisions,
    authority::{Actor, pending_approval},
};
use crate::clock::now_ms;
use crate::store::{
    Write, WriteScope,
    approvals::{self, ApprovalRow},
    tasks::TaskRow,
    users,
};

/// The deadline of an approval handed over.
#[derive(Clone, Copy, Debug)]
pub(super) enum Deadline {
    /// As long again as the gate gave (on demand, and the `escalate` timeout action).
    Fresh,
    /// Unchanged (the gate's escalation timeout, which comes before its deadline).
    Keep,
}

/// A named target and the people who may decide for it.
pub(super) type HandedTo = Option<(String, Vec<String>)>;

impl Decisions {
    /// A user hands a pending approval over (on demand): to `to` (a user or group name), or
    /// without one to the gate's target or the admins. An unknown `to` is a 422 that changes nothing.
    /// Counted against the person's decision limit first ([`Self::count_attempt`]).
    pub async fn escalate(&self, approval_id: &ApprovalId, actor: &Actor, to: Option<&str>) -> Result<(), Error> {
        self.count_attempt(actor).await?;
        let mut w = self.ctx.store.write(WriteScope::Approval(approval_id)).await?;
        w.hold_authority().await?;
        let approval = pending_approval(&mut w.tx, approval_id).await?;
        let is_admin = actor.role == Some(domain::Role::Admin);
        if !is_admin && !approval.owner.as_deref().is_some_and(|o| o.eq_ignore_ascii_case(&actor.name)) {
            return Err(Error::NotAllowed("only the approval's owner or an admin may hand it over".into()));
        }
        // A gate that names its approvers decides who decides: its owner may hand it on only to
        // the gate's own target (or the admins), never to someone of their choosing — themselves
        // included.
        if !is_admin && to.is_some() && approval.approvers.is_some() {
            return Err(Error::NotAllowed(
                "this approval's gate names who decides it: only an admin may hand it to someone else (without `to` it goes to the gate's escalation target, else the admins)".into(),
            ));
        }
        if approval.escalated_at.is_some() {
            return Err(Error::WrongState(format!("approval {approval_id} is already escalated")));
        }
        let target = match to {
            Some(name) => {
                let people = self.people_of(&mut w, name).await?.ok_or_else(|| {
                    let message = format!("no user or group is named {name:?}");
                    Error::invalid("/to", message)
                })?;
                Some((name.to_owned(), people))
            }
            None => self.gate_target(&mut w, &approval).await?,
        };
        let task = self.waiting_task(&mut w, &approval.task_id).await?;
        self.hand_over(&mut w, &task, &approval, &actor.name, Deadline::Fresh, target).await?;
        w.commit().await?;
        Ok(())
    }

    /// The gate's escalation timeout passed and no one decided: the gate's target (or the admins)
    /// gets it, and the deadline stays (the timeout action still applies then).
    pub async fn escalate_when_due(&self, approval_id: &ApprovalId) -> Result<(), Error> {
        let mut w = self.ctx.store.write(WriteScope::Approval(approval_id)).await?;
        let approval = pending_approval(&mut w.tx, approval_id).await?;
        if approval.escalated_at.is_some() || approval.escalate_at.is_none_or(|at| at > now_ms()) {
            return Ok(());
        }
        let task = self.waiting_task(&mut w, &approval.task_id).await?;
        let target = self.gate_target(&mut w, &approval).await?;
        self.hand_over(&mut w, &task, &approval, super::authority::SYSTEM, Deadline::Keep, target).await?;
        w.commit().await?;
        Ok(())
    }

    /// The people a name stands for — a group's members (`group_people`), or the user of that
    /// name — as their user names are stored.
    async fn people_of(&self, w: &mut Write, name: &str) -> anyhow::Result<Option<Vec<String>>> {
        if let Some(people) = crate::people::resolve::group_people(&self.ctx.agents.groups, w, name).await? {
            return Ok((!people.is_empty()).then_some(people));
        }
        Ok(users::credentials(&mut *w.tx, name).await?.map(|c| vec![c.user.username]))
    }

    /// The gate's `escalation_target` as it was when the approval was asked; the admins when it
    /// has none or it names no one (said in the log, so the file can be fixed).
    pub(super) async fn gate_target(&self, w: &mut Write, approval: &ApprovalRow) -> anyhow::Result<HandedTo> {
        let Some(name) = &approval.escalation_target else { return Ok(None) };
        match self.people_of(w, name).await? {
            Some(people) => Ok(Some((name.clone(), people))),
            None => {
                tracing::warn!(approval_id = %approval.id, target = %name, "escalation_target names no user or group; escalated to the admins");
                Ok(None)
            }
        }
    }

    pub(super) async fn hand_over(
        &self,
        w: &mut Write,
        task: &TaskRow,
        approval: &ApprovalRow,
        by: &str,
        deadline: Deadline,
        target: HandedTo,
    ) -> Result<(), Error> {
        let deadline = match deadline {
            // They get as long as the gate originally gave.
            Deadline::Fresh => now_ms() + (approval.deadline - approval.created_at).max(100),
            Deadline::Keep => approval.deadline,
        };
        let to = target.as_ref().map(|(name, people)| (name.as_str(), people.as_slice()));
        if !approvals::escalate(&mut w.tx, &approval.id, by, deadline, to).await? {
            return Err(Error::WrongState(format!("approval {} can no longer be escalated", approval.id)));
        }
        let (to, deciders) = target.map_or((None, Vec::new()), |(name, people)| (Some(name), people));
        w.append(
            &approval.conversation_id,
            EventBody::ApprovalEscalated {
                task_id: task.id.clone(),
                approval_id: approval.id.clone(),
                call_id: approval.call_id.clone(),
                escalated_by: by.to_owned(),
                deadline: crate::clock::rfc3339(deadline),
                to: to.clone(),
                deciders: deciders.clone(),
            },
        )
        .await?;
        w.audit(AuditKind::ApprovalEscalated,
            by,
            json!({ "approval_id": approval.id, "conversation_id": approval.conversation_id, "tool": approval.tool, "deadline": crate::clock::rfc3339(deadline), "to": to, "deciders": deciders }));
        Ok(())
    }
}
