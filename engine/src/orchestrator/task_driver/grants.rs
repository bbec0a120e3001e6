//! An approved plan's grants: one per step, for exactly that call, given as the plan runs.
//! Standing grants, given with an approval and revoked, are `Decisions`' (decisions/grants.rs).

use domain::{AuditKind, EventBody};
use serde_json::{Value, json};

use super::TaskDriver;
use crate::{
    orchestrator::SYSTEM,
    store::{Write, approvals, calls::CallRow, grants},
};

/// Run by the task's driver when an approved plan runs.
impl TaskDriver {
    /// An approved plan: one grant per step, for exactly that call in this task by the same
    /// agent, once, under the plan's gate; given by whoever approved the plan. A step that a gate
    /// asking each call on its own stops is still asked (engine/src/grant_cover.rs).
    pub(super) async fn grant_plan(&self, w: &mut Write, call: &CallRow, steps: &[(&str, &Value)]) -> anyhow::Result<()> {
        // Only a person's approval of the plan grants its steps (a timeout's approval does not;
        // agents/validate.rs refuses `propose_plan` without its gate, so every plan is asked).
        let decided = approvals::decider_of(&mut *w.tx, &call.id).await?;
        let (approver, gate, agent) = match decided {
            Some(approvals::Decided { decided_by: Some(by), gate, agent }) if by != SYSTEM => (by, gate, agent),
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
                policy_version: &self.ctx.agents.version,
                gate: &gate,
                agent: &agent,
                bounds: None,
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
                    policy_version: Some(self.ctx.agents.version.clone()),
                    gate: Some(gate.clone()),
                    bounds: None,
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
}
