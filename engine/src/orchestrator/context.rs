//! What the task driver and the use cases beside it share: the store, the configuration, the
//! models and tools, the metrics; and the writes all of them make about a call that ran.

use std::{sync::Arc, time::Duration};

use anyhow::Context as _;
use domain::{AuditKind, CallState, EventBody};
use serde_json::{Value, json};
use sqlx::Connection;

use super::{BeforeCommitHook, SYSTEM};
use crate::{
    agents::AgentsConfig,
    metrics::Metrics,
    model::Models,
    store::{
        Store, Write,
        calls::{self, CallRow},
    },
    tools::{Registry, Tool, ToolError},
};

/// What the [`TaskDriver`](super::TaskDriver), [`Decisions`](super::Decisions) and
/// [`ClientCalls`](super::ClientCalls) read and write through: one per process, set at start-up.
pub(crate) struct Context {
    pub(super) store: Store,
    pub(super) models: Models,
    pub(super) tools: Arc<Registry>,
    pub(super) agents: Arc<AgentsConfig>,
    /// A draft configuration (`COUNTERSIGN_AGENTS_DRAFT`) every proposed call is also put to: where
    /// it would do otherwise, a shadow hit says so (engine/src/draft.rs). It decides nothing.
    pub(super) draft: Option<Arc<AgentsConfig>>,
    pub(super) before_commit: Option<BeforeCommitHook>,
    pub(super) metrics: Arc<Metrics>,
    /// How long a claim on a task lasts without renewal (a crashed process's claims run out).
    pub(super) lease: Duration,
}

/// A call's run and its result, the same whether a task's driver or an outside client's unasked
/// call ran it.
impl Context {
    /// A built-in tool run inside the write, in a savepoint: a failure leaves no partial effect but
    /// is the call's result; an internal error is no result at all (nothing of the write is kept).
    pub(super) async fn run_in_savepoint(&self, w: &mut Write, tool: &dyn Tool, args: &Value) -> crate::Result<Result<Value, String>> {
        let mut savepoint = w.tx.begin().await.context("failed to open a savepoint")?;
        let started = std::time::Instant::now();
        let result = tool.run(&mut savepoint, args).await;
        self.metrics.tool_ran(&tool.spec().name, started.elapsed().as_secs_f64());
        Ok(match result {
            Ok(output) => {
                savepoint.commit().await.context("failed to release savepoint")?;
                Ok(output)
            }
            Err(ToolError::Failed(failure)) => {
                savepoint.rollback().await.context("failed to roll back savepoint")?;
                Err(failure.0)
            }
            Err(ToolError::Internal(err)) => return Err(err.into()),
        })
    }

    /// `executing → succeeded | failed`, audited, with the `tool-result` event.
    pub(super) async fn record_result(&self, w: &mut Write, call: &CallRow, outcome: Result<Value, String>) -> crate::Result<()> {
        let (state, ok, output) = match outcome {
            Ok(output) => (CallState::Succeeded, true, output),
            Err(error) => (CallState::Failed, false, json!({ "error": error, "message": error })),
        };
        if !calls::transition(&mut w.tx, &call.id, CallState::Executing, state, None).await? {
            // Someone else recorded this call's outcome: never a second `tool-result`.
            return Err(anyhow::anyhow!("call {} was no longer executing when its result came; the result was dropped", call.id).into());
        }
        w.audit(AuditKind::ToolOutcome,
            SYSTEM,
            json!({ "call_id": call.id, "conversation_id": call.conversation_id, "tool": call.tool, "args": call.args(), "ok": ok, "output": output }));
        w.append(&call.conversation_id, EventBody::ToolResult { task_id: call.task_id.clone(), call_id: call.id.clone(), ok, output })
            .await?;
        Ok(())
    }
}
