//! Grants ("always allow"): a standing permission for the calls one gate stops for one agent in
//! one conversation, given with an approval by someone who may decide it, and revoked by its
//! owner or an admin. Which calls it covers: engine/src/grant_cover.rs; using one is
//! `policy::classify`'s `Run { grant }`. An approved plan's grants are the task driver's
//! (task_driver/grants.rs).

use crate::Error;
use domain::{GrantId, TaskId};

use domain::{
    AuditKind, EventBody,
    wire::{FieldProblem, GrantRequest},
};
use serde_json::json;

use super::{Decisions, authority::Actor};
use crate::agents::Gate;
use crate::clock::now_ms;
use crate::store::{Write, WriteScope, approvals::ApprovalRow, grants, tasks::TaskRow};
use serde_json::Value;

impl Decisions {
    /// The gate, as configured now, that an approval may become a standing grant under; `Err`
    /// (422 at `/grant`): why it may not.
    pub(super) fn grant_gate(&self, approval: &ApprovalRow) -> Result<Gate, Error> {
        if !domain::naming::grantable(&approval.tool) {
            return Err(Error::invalid("/grant", "answers and plans are approved one at a time: leave out grant".into()));
        }
        // An approval asked under several gates names them all ("a + b"): each must still be
        // configured, and the grant is given under their combination.
        let agent = self.ctx.agents.get(&approval.agent);
        let gates: Option<Vec<&Gate>> =
            approval.gate.split(" + ").map(|name| agent.and_then(|a| a.gates.iter().find(|g| g.name == name))).collect();
        let gate = gates.and_then(|gates| crate::policy::combine(&gates)).ok_or_else(|| {
            Error::invalid(
                "/grant",
                format!("gate \"{}\" is no longer configured, so nothing can be allowed under it: leave out grant", approval.gate),
            )
        })?;
        if !gate.rules.grantable {
            let why = gate.rules.restriction(!gate.approvers.is_empty()).unwrap_or("its gate says grantable = false");
            return Err(Error::invalid("/grant", format!("this call cannot be allowed for good: {why}; approve it without grant")));
        }
        Ok(gate)
    }

    /// Records a standing permission for the calls the approval's gate stops for its agent in its
    /// conversation, within the bounds asked for over the `approved` arguments.
    pub(super) async fn grant(
        &self,
        w: &mut Write,
        task: &TaskRow,
        approval: &ApprovalRow,
        actor: &Actor,
        request: GrantRequest,
        approved: &Value,
    ) -> Result<(), Error> {
        let gate = self.grant_gate(approval)?;
        let bounds = crate::grant_cover::bounds(request.args, approved).map_err(|why| Error::invalid("/grant/args", why))?;
        let expires_at = request.ttl_secs.map(|s| now_ms() + (s.min(365 * 24 * 3600) as i64) * 1000);
        let max_uses = request.max_uses.map(i64::from);
        if max_uses == Some(0) {
            return Err(Error::Invalid {
                message: "a grant needs max_uses of at least 1".into(),
                details: vec![FieldProblem::new("/grant/max_uses", "at least 1")],
            });
        }
        let new_grant = grants::NewGrant {
            conversation_id: &approval.conversation_id,
            tool: &approval.tool,
            created_by: &actor.name,
            expires_at,
            max_uses,
            exact: None,
            policy_version: &self.ctx.agents.version,
            gate: &gate.name,
            agent: &approval.agent,
            bounds: bounds.as_ref(),
        };
        let id = grants::insert(&mut w.tx, new_grant).await?;
        w.append(
            &approval.conversation_id,
            EventBody::GrantCreated {
                task_id: task.id.clone(),
                grant_id: id.clone(),
                tool: approval.tool.clone(),
                created_by: actor.name.clone(),
                expires_at: expires_at.map(crate::clock::rfc3339),
                max_uses,
                args: None,
                policy_version: Some(self.ctx.agents.version.clone()),
                gate: Some(gate.name.clone()),
                bounds: bounds.clone(),
            },
        )
        .await?;
        w.audit(
            AuditKind::GrantCreated,
            &actor.name,
            json!({
                "grant_id": id, "conversation_id": approval.conversation_id, "tool": approval.tool, "gate": gate.name,
                "agent": approval.agent, "bounds": bounds, "expires_at": expires_at.map(crate::clock::rfc3339),
                "max_uses": max_uses, "role": actor.role_name(), "on_behalf_of": actor.on_behalf_of, "via": actor.via,
                "policy_version": self.ctx.agents.version,
            }),
        );
        Ok(())
    }

    /// Revokes a grant; later calls of its tool ask again.
    pub async fn revoke_grant(&self, grant_id: &GrantId, actor: &Actor) -> Result<(), Error> {
        let mut w = self.ctx.store.write(WriteScope::Grant(grant_id)).await?;
        let grant = grants::get(&mut *w.tx, grant_id).await?.ok_or_else(|| Error::Unknown(format!("grant {grant_id} does not exist")))?;
        if !grants::revoke(&mut w.tx, grant_id, &actor.name).await? {
            return Err(Error::WrongState(format!("grant {grant_id} is already revoked")));
        }
        w.append(
            &grant.conversation_id,
            EventBody::GrantRevoked { task_id: TaskId::default(), grant_id: grant_id.clone(), revoked_by: actor.name.clone() },
        )
        .await?;
        w.audit(
            AuditKind::GrantRevoked,
            &actor.name,
            json!({ "grant_id": grant_id, "conversation_id": grant.conversation_id, "tool": grant.tool, "uses": grant.uses }),
        );
        w.commit().await?;
        Ok(())
    }
}
