//! Grants ("always allow"): a standing permission for one tool in one conversation, given with an
//! approval and revoked by its owner or an admin. Using one is `policy::classify`'s `Run { grant }`.

use app::domain::{GrantId, TaskId};
use std::sync::Arc;

use app::domain::{AuditKind, EventBody, wire::GrantRequest};
use serde_json::json;

use super::{
    Orchestrator,
    decide::{Actor, DecisionError},
};
use crate::store::{
    Scope, Write,
    approvals::{self, ApprovalRow},
    calls::CallRow,
    grants,
    tasks::TaskRow,
    time::now_ms,
};
use serde_json::Value;

impl Orchestrator {
    /// Records a standing permission for the approval's tool in its conversation.
    pub(super) async fn grant(
        &self,
        w: &mut Write,
        task: &TaskRow,
        approval: &ApprovalRow,
        actor: &Actor,
        request: GrantRequest,
    ) -> Result<(), DecisionError> {
        let expires_at = request.ttl_secs.map(|s| now_ms() + (s.min(365 * 24 * 3600) as i64) * 1000);
        let max_uses = request.max_uses.map(i64::from);
        if max_uses == Some(0) {
            return Err(DecisionError::Invalid {
                message: "a grant needs max_uses of at least 1".into(),
                details: vec![json!({ "path": "/grant/max_uses", "message": "at least 1" })],
            });
        }
        let new_grant = grants::NewGrant {
            conversation_id: &approval.conversation_id,
            tool: &approval.tool,
            created_by: &actor.name,
            expires_at,
            max_uses,
            exact: None,
            policy_version: &self.agents.version,
        };
        let id = grants::insert(&mut w.tx, new_grant).await?;
        w.append(
            &approval.conversation_id,
            EventBody::GrantCreated {
                task_id: task.id.clone(),
                grant_id: id.clone(),
                tool: approval.tool.clone(),
                created_by: actor.name.clone(),
                expires_at: expires_at.map(crate::store::time::rfc3339),
                max_uses,
                args: None,
                policy_version: Some(self.agents.version.clone()),
            },
        )
        .await?;
        w.audit(AuditKind::GrantCreated,
            &actor.name,
            json!({ "grant_id": id, "conversation_id": approval.conversation_id, "tool": approval.tool, "expires_at": expires_at.map(crate::store::time::rfc3339), "max_uses": max_uses, "role": actor.role_name(), "policy_version": self.agents.version }));
        Ok(())
    }

    /// An approved plan: one grant per step, for exactly that call in this task, once; given by
    /// whoever approved the plan.
    pub(super) async fn grant_plan(&self, w: &mut Write, call: &CallRow, steps: &[(&str, &Value)]) -> anyhow::Result<()> {
        // Only a person's approval of the plan grants its steps (a timeout's approval does not;
        // agents.rs refuses `propose_plan` without its gate, so every plan is asked).
        let approver = match approvals::decider_of(&mut *w.tx, &call.id).await? {
            Some(by) if by != super::decide::SYSTEM => by,
            _ => {
                tracing::warn!(call_id = %call.id, "a plan ran without a person's approval; no steps granted");
                return Ok(());
            }
        };
        for (tool, args) in steps {
            let new_grant = grants::NewGrant {
                conversation_id: &call.conversation_id,
                tool,
                created_by: &approver,
                expires_at: None,
                max_uses: Some(1),
                exact: Some((&call.task_id, args)),
                policy_version: &self.agents.version,
            };
            let id = grants::insert(&mut w.tx, new_grant).await?;
            w.append(
                &call.conversation_id,
                EventBody::GrantCreated {
                    task_id: call.task_id.clone(),
                    grant_id: id.clone(),
                    tool: (*tool).to_owned(),
                    created_by: approver.clone(),
                    expires_at: None,
                    max_uses: Some(1),
                    args: Some((*args).clone()),
                    policy_version: Some(self.agents.version.clone()),
                },
            )
            .await?;
            w.audit(
                AuditKind::GrantCreated,
                &approver,
                json!({ "grant_id": id, "conversation_id": call.conversation_id, "task_id": call.task_id, "tool": tool, "args": args, "max_uses": 1, "plan_call_id": call.id }),
            );
        }
        Ok(())
    }

    /// Revokes a grant; later calls of its tool ask again.
    pub async fn revoke_grant(self: &Arc<Self>, grant_id: &GrantId, actor: &Actor) -> Result<(), DecisionError> {
        let mut w = self.store.write(Scope::Grant(grant_id)).await?;
        let grant =
            grants::get(&mut *w.tx, grant_id).await?.ok_or_else(|| DecisionError::NotFound(format!("grant {grant_id} does not exist")))?;
        if !grants::revoke(&mut w.tx, grant_id, &actor.name).await? {
            return Err(DecisionError::Conflict(format!("grant {grant_id} is already revoked")));
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
