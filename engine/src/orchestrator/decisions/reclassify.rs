//! Policy versions: when the server starts with another agent configuration than the
//! one that asked a pending approval, the approval is checked against the new one. A call the
//! agent can still make with arguments that still fit stays pending (a human still decides it,
//! even if no gate of the new configuration would have asked); a call whose tool is gone or whose
//! arguments no longer fit its schema is canceled with the reason, and the model is told. With
//! `[defaults] grants_lapse_on_policy_change`, standing grants made under an earlier configuration
//! end. Each step is audited as `policy.reclassified`.

use crate::Error;

use domain::{ApprovalOutcome, AuditKind, EventBody, TaskId, TaskStatus};
use serde_json::json;

use super::{
    Decisions,
    authority::{Actor, SYSTEM, pending_approval},
};
use crate::{
    store::{
        WriteScope,
        approvals::{self, ApprovalRow},
        grants, tasks,
    },
    tools::schema,
};

/// What a start-up under a new configuration did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reclassified {
    pub kept: usize,
    pub canceled: usize,
    pub grants_ended: usize,
}

impl Decisions {
    pub async fn reclassify_at_start_up(&self) -> anyhow::Result<Reclassified> {
        let version = self.ctx.agents.version.clone();
        let mut done = Reclassified::default();
        for approval in approvals::pending_under_other_policy(&self.ctx.store, &version).await? {
            match self.reclassify(&approval).await {
                Ok(Some(task)) => {
                    done.canceled += 1;
                    self.driver.trigger(&task);
                }
                Ok(None) => done.kept += 1,
                Err(err) => {
                    tracing::warn!(approval_id = %approval.id, error = %err, "could not check an approval against the new configuration")
                }
            }
        }
        if self.ctx.agents.grants_lapse_on_policy_change {
            for grant in grants::standing_under_other_policy(&self.ctx.store, &version).await? {
                if self.end_grant(&grant).await? {
                    done.grants_ended += 1;
                }
            }
        }
        Ok(done)
    }

    /// Why a pending approval no longer fits this configuration, if it does not.
    fn no_longer_fits(&self, approval: &ApprovalRow) -> Option<String> {
        // Questions, plans and answers belong to their gates, not to an agent's tools.
        if !domain::naming::grantable(&approval.tool) {
            return None;
        }
        let Some(agent) = self.ctx.agents.get(&approval.agent) else {
            return Some(format!("the configuration changed: agent {} is no longer configured", approval.agent));
        };
        let tool = self.ctx.tools.get(&approval.tool).filter(|_| agent.tools.iter().any(|t| t == &approval.tool));
        let Some(tool) = tool else {
            return Some(format!("the configuration changed: {} is no longer one of {}'s tools", approval.tool, agent.name));
        };
        let violations = schema::violations(&tool.spec().input_schema, &approval.args());
        let first = violations.first()?;
        Some(format!("the configuration changed: its arguments no longer fit {}'s schema ({})", approval.tool, first.message))
    }

    /// Keeps (`None`) or cancels (the task to go on) one pending approval.
    async fn reclassify(&self, approval: &ApprovalRow) -> Result<Option<TaskId>, Error> {
        let mut w = self.ctx.store.write(WriteScope::Approval(&approval.id)).await?;
        // Decided meanwhile (by another replica): nothing to do.
        let Ok(approval) = pending_approval(&mut w.tx, &approval.id).await else { return Ok(None) };
        let (from, to) = (approval.policy_version.clone(), self.ctx.agents.version.clone());
        let Some(why) = self.no_longer_fits(&approval) else {
            approvals::set_policy_version(&mut w.tx, &approval.id, &to).await?;
            w.audit(
                AuditKind::PolicyReclassified,
                SYSTEM,
                json!({ "approval_id": approval.id, "tool": approval.tool, "outcome": "kept", "from": from, "to": to }),
            );
            w.commit().await?;
            return Ok(None);
        };
        let task = self.waiting_task(&mut w, &approval.task_id).await?;
        let actor = Actor { via: Some(format!("configuration {} → {to}", from.as_deref().unwrap_or("unversioned"))), ..Actor::system() };
        self.apply(&mut w, &task, &approval, ApprovalOutcome::Canceled, &actor, Some(why.clone()), None).await?;
        // The model is told (the canceled call's result); the turn goes on when nothing else waits.
        if approvals::pending_for_task(&mut *w.tx, &task.id).await?.is_empty() {
            tasks::transition(&mut w, &task, &[TaskStatus::InputRequired], TaskStatus::Working, None).await?;
        }
        w.audit(
            AuditKind::PolicyReclassified,
            SYSTEM,
            json!({ "approval_id": approval.id, "tool": approval.tool, "outcome": "canceled", "why": why, "from": from, "to": to }),
        );
        w.commit().await?;
        Ok(Some(task.id))
    }

    /// Ends a standing grant made under an earlier configuration; false if it ended meanwhile.
    async fn end_grant(&self, grant: &grants::GrantRow) -> anyhow::Result<bool> {
        let mut w = self.ctx.store.write(WriteScope::Grant(&grant.id)).await?;
        let by = "system (the configuration changed)";
        if !grants::revoke(&mut w.tx, &grant.id, by).await? {
            return Ok(false);
        }
        w.append(
            &grant.conversation_id,
            EventBody::GrantRevoked { task_id: TaskId::default(), grant_id: grant.id.clone(), revoked_by: by.into() },
        )
        .await?;
        w.audit(
            AuditKind::PolicyReclassified,
            SYSTEM,
            json!({ "grant_id": grant.id, "conversation_id": grant.conversation_id, "tool": grant.tool, "outcome": "grant ended", "to": self.ctx.agents.version }),
        );
        w.commit().await?;
        Ok(true)
    }
}
