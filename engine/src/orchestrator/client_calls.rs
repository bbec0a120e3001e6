//! Calls an outside client proposes (the MCP approval gateway, server/src/protocols/mcp/). Each
//! is a task whose "model" is the client: its one step is the call, recorded exactly as a model's
//! call is (the agent's allow-list, gates, grants, approvals, audit and events), and the next step
//! ends the task without asking a model. So there is no second state machine: the queue, the chat,
//! every channel and every replica see and decide these calls like any other.
//!
//! An approved call runs only while its client still waits for the outcome (`client_calls::mark`
//! heartbeats); when the client is gone the call is recorded as not run (docs/mcp-gateway.md).
//!
//! A call no gate stops takes the short way ([`ClientCalls::run_unasked`]): no driver, no model
//! step to replay. Its proposal, the call and its start are one write; the tool runs; its result
//! and the task's end are a second. An outside tool that only reads runs first and is recorded
//! whole in one write, which reads of the same conversation waiting at the same time share. The
//! events and rows are the same as the driven way's, so the chat, the audit trail and a crash in
//! between (the call is "interrupted — not retried") read them the same. Ungated calls of one client therefore do not wait for each other
//! (docs/performance-notes.md, "The MCP gateway").

use anyhow::Context;
use domain::{CallState, ConversationId, EventBody, TaskId, TaskStatus, UserId, wire::Conversation};
use serde_json::Value;

use super::{ClientCalls, TaskDriver};
use crate::{
    clock::new_call_id,
    model::{ModelReply, ProposedCall},
    policy,
    store::{
        Write, WriteScope,
        calls::{self, CallRow, NewCall},
        client_calls::{self, ClientCall},
        tasks::{self, Lease, TaskRow},
    },
    tools::{Description, Tool, ToolError, schema},
};

/// A call that ran unasked: its task, ended, and the tool's result (its output, or why it failed).
pub struct Ran {
    pub task: TaskId,
    pub outcome: Result<Value, String>,
}

/// A read of an outside tool that ran and waits to be recorded.
struct RanRead {
    conversation: Conversation,
    client: String,
    started_by: Option<String>,
    tool: std::sync::Arc<dyn Tool>,
    args: Value,
    outcome: Result<Value, String>,
}

type Recorded = tokio::sync::oneshot::Sender<crate::Result<TaskId>>;

type Joined = std::collections::HashMap<ConversationId, Vec<(RanRead, Recorded)>>;

/// The reads waiting to be recorded, by conversation ([`ClientCalls::record_ran`]).
#[derive(Default)]
pub(super) struct Waiting(std::sync::Mutex<Joined>);

impl Waiting {
    fn lock(&self) -> std::sync::MutexGuard<'_, Joined> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a read; whether it is the first of its conversation, which then leads the write.
    fn join(&self, cid: &ConversationId, ran: RanRead, done: Recorded) -> bool {
        let mut waiting = self.lock();
        let joined = waiting.entry(cid.clone()).or_default();
        joined.push((ran, done));
        joined.len() == 1
    }

    fn take(&self, cid: &ConversationId) -> Vec<(RanRead, Recorded)> {
        self.lock().remove(cid).unwrap_or_default()
    }
}

/// What the client "replies" at a step of its task: the call first, then nothing (the task ends).
pub(super) fn reply(call: &ClientCall, step: i64) -> ModelReply {
    let calls = match step {
        0 => vec![ProposedCall { id: new_call_id(), tool: call.tool.clone(), args: call.args(), confidence: None }],
        _ => Vec::new(),
    };
    ModelReply { text: None, calls, usage: None }
}

impl ClientCalls {
    /// Records a call `client` proposes in `conversation` as a new task and starts driving it.
    /// The tool must be one of the conversation's agent's tools (the gateway checks it first, with
    /// the protocol's own error).
    /// `request`: the client's own name for the request that makes it (its cancellation finds
    /// the call by it, `client_calls::by_request`). `started_by`: the client's credential, kept
    /// with the task (`tasks::TaskRow::started_by`).
    pub async fn propose_call(
        &self,
        conversation: &Conversation,
        client: &str,
        tool: &str,
        args: &Value,
        request: Option<&str>,
        started_by: Option<&str>,
    ) -> crate::Result<TaskId> {
        let agent = self.ctx.agents.get(&conversation.agent).ok_or_else(|| anyhow::anyhow!("no agent {:?}", conversation.agent))?;
        if !agent.tools.iter().any(|t| t == tool) {
            return Err(anyhow::anyhow!("agent {} has no tool {tool:?}", agent.name).into());
        }
        let cid = &conversation.id;
        let mut w = self.ctx.store.write(WriteScope::Conversation(cid)).await?;
        let task_id = tasks::insert(&mut w.tx, cid, 0, started_by).await?.id;
        let call = ClientCall::new(&task_id, cid, client, tool, args);
        client_calls::insert(&mut w.tx, &call).await?;
        if let Some(request) = request {
            client_calls::set_request(&mut w.tx, &task_id, request).await?;
        }
        // The chat says who asked: the card follows as the call is classified.
        let text = format!("{client} asks to run {tool}");
        w.append(cid, EventBody::UserMessage { task_id: task_id.clone(), text, reply_to: None, client_id: None }).await?;
        w.append(cid, EventBody::TaskStatus { task_id: task_id.clone(), status: TaskStatus::Working, message: None, parent_call_id: None })
            .await?;
        w.commit().await?;
        self.driver.trigger(&task_id);
        Ok(task_id)
    }

    /// Whether `tool` with `args` runs in `conversation` without asking anyone: a tool of its
    /// agent, arguments that fit its schema, and no gate (enforcing or shadow) that matches or
    /// fails to evaluate, nor a draft (`COUNTERSIGN_AGENTS_DRAFT`) that would stop or refuse it.
    /// A call a shadow gate or the draft would stop runs unasked too, but the driven way, which
    /// records its shadow hit (task_driver/model_step.rs). A client's conversation has no model
    /// usage, so budget gates read none.
    pub fn runs_unasked(&self, conversation: &Conversation, tool: &str, args: &Value) -> bool {
        let Some(agent) = self.ctx.agents.get(&conversation.agent) else { return false };
        let Some(t) = self.ctx.tools.get(tool).filter(|_| agent.tools.iter().any(|a| a == tool)) else { return false };
        if t.delegate().is_some() || !schema::violations(&t.spec().input_schema, args).is_empty() {
            return false;
        }
        let user = conversation.owner.as_deref().unwrap_or_default();
        let spent = policy::Spent::default();
        let call = policy::Call { tool: t.spec(), args, user, confidence: None, spent: &spent };
        let gating = policy::check(agent, &call);
        if gating.requirement.is_some() || !gating.shadows.is_empty() || !gating.rule_errors.is_empty() {
            return false;
        }
        let draft = self.ctx.draft.as_deref().and_then(|d| crate::draft::judge(d, &self.ctx.tools, &agent.name, &call, false));
        draft.is_none_or(|judged| matches!(judged, crate::draft::Judged::Runs))
    }

    /// Runs a call [`Self::runs_unasked`] said no one is asked about, recorded as a task of
    /// `conversation` exactly as the driven way records it; its task (ended) and the tool's result.
    /// The call runs to its end even if the caller stops waiting (a request that went away), so
    /// its result is recorded. `started_by`: as [`Self::propose_call`]'s.
    pub async fn run_unasked(
        &self,
        conversation: &Conversation,
        client: &str,
        tool: &str,
        args: &Value,
        started_by: Option<&str>,
    ) -> crate::Result<Ran> {
        let this = self.clone();
        let (conversation, client, tool, args) = (conversation.clone(), client.to_owned(), tool.to_owned(), args.clone());
        let started_by = started_by.map(str::to_owned);
        tokio::spawn(async move { this.run_unasked_here(&conversation, &client, &tool, &args, started_by).await })
            .await
            .map_err(|e| anyhow::anyhow!("a client's call stopped: {e}"))?
    }

    async fn run_unasked_here(
        &self,
        conversation: &Conversation,
        client: &str,
        tool_name: &str,
        args: &Value,
        started_by: Option<String>,
    ) -> crate::Result<Ran> {
        let tool = self.ctx.tools.get(tool_name).cloned().ok_or_else(|| anyhow::anyhow!("no tool {tool_name:?}"))?;
        let external = tool.is_external();
        // An outside tool that only reads (`readOnlyHint`) has no effect to guard: it runs first,
        // and the call is recorded with its result in one write. A crash in between leaves
        // nothing to report: nothing happened, and the client, unanswered, asks again.
        if external && tool.spec().read_only {
            let outcome = self.call_external(tool.as_ref(), args).await;
            let ran =
                RanRead { conversation: conversation.clone(), client: client.to_owned(), started_by, tool, args: args.clone(), outcome };
            return self.record_ran(ran).await;
        }
        let mut w = self.ctx.store.write(WriteScope::Conversation(&conversation.id)).await?;
        let (task, call) = self.record_start(&mut w, conversation, client, started_by.as_deref(), tool.as_ref(), args).await?;
        let (mut w, outcome, fenced) = match external {
            // A built-in tool's effect is part of the same write.
            false => {
                let outcome = self.ctx.run_in_savepoint(&mut w, tool.as_ref(), args).await?;
                (w, outcome, false)
            }
            // An effect outside: the start is committed first (a crash now leaves the call
            // "interrupted — not retried"), under this process's claim on the task, which keeps a
            // sweeper from resuming it while it runs.
            true => {
                let lease = self.driver.claim_in(&mut w, &call.task_id).await?.context("BUG: a new task is free to claim")?;
                w.commit().await?;
                let outcome = self.call_external(tool.as_ref(), args).await;
                (self.ctx.store.write_as(&lease).await?, outcome, true)
            }
        };
        self.ctx.record_result(&mut w, &call, outcome.clone()).await?;
        // The driven way's second model step: the client says nothing more.
        tasks::transition(&mut w, &task, &[TaskStatus::Working], TaskStatus::Completed, None).await?;
        if fenced {
            w.release_lease_at_commit();
        }
        w.commit().await?;
        Ok(Ran { task: call.task_id, outcome })
    }

    /// Records a read that already ran. Reads of one conversation that wait for the writer at
    /// the same time are recorded in one write: the first to wait records those that joined it
    /// meanwhile, and they share the begin, the commit, the event counter, the events' `INSERT`,
    /// the audit chain's head and the pages they touch (docs/performance-notes.md, "The MCP
    /// gateway"). If that write fails, each is recorded alone, so one read's failure is its own.
    async fn record_ran(&self, ran: RanRead) -> crate::Result<Ran> {
        let cid = ran.conversation.id.clone();
        let outcome = ran.outcome.clone();
        let (done, recorded) = tokio::sync::oneshot::channel();
        if self.waiting.join(&cid, ran, done) {
            self.record_joined(&cid).await;
        }
        let task = recorded.await.map_err(|_| anyhow::anyhow!("a read's recording stopped"))??;
        Ok(Ran { task, outcome })
    }

    /// Leads the recording of the reads of `cid` that joined: takes the writer, then all that
    /// joined by then (later ones lead a write of their own).
    async fn record_joined(&self, cid: &ConversationId) {
        let w = self.ctx.store.write(WriteScope::Conversation(cid)).await;
        let mut joined = self.waiting.take(cid);
        let failed: crate::Error = match w {
            Ok(mut w) => match self.record_all(&mut w, &joined).await {
                Ok(tasks) => match w.commit().await {
                    Ok(_) => {
                        for ((_, done), task) in joined.into_iter().zip(tasks) {
                            let _ = done.send(Ok(task));
                        }
                        return;
                    }
                    Err(err) => err.into(),
                },
                // The write goes here (rolled back), before any read takes the writer alone.
                Err(err) => err,
            },
            Err(err) => err.into(),
        };
        if joined.len() == 1 {
            let (_, done) = joined.pop().expect("BUG: one read");
            let _ = done.send(Err(failed));
            return;
        }
        tracing::warn!(error = %failed, reads = joined.len(), "recording reads together failed; recording each alone");
        for (ran, done) in joined {
            let _ = done.send(self.record_alone(&ran).await);
        }
    }

    async fn record_all(&self, w: &mut Write, joined: &[(RanRead, Recorded)]) -> crate::Result<Vec<TaskId>> {
        let mut tasks = Vec::with_capacity(joined.len());
        for (ran, _) in joined {
            tasks.push(self.record_in(w, ran).await?);
        }
        Ok(tasks)
    }

    async fn record_alone(&self, ran: &RanRead) -> crate::Result<TaskId> {
        let mut w = self.ctx.store.write(WriteScope::Conversation(&ran.conversation.id)).await?;
        let task = self.record_in(&mut w, ran).await?;
        w.commit().await?;
        Ok(task)
    }

    /// A read that ran, as the driven way records it: its start, its result, its task's end.
    async fn record_in(&self, w: &mut Write, ran: &RanRead) -> crate::Result<TaskId> {
        let (task, call) =
            self.record_start(w, &ran.conversation, &ran.client, ran.started_by.as_deref(), ran.tool.as_ref(), &ran.args).await?;
        self.ctx.record_result(w, &call, ran.outcome.clone()).await?;
        tasks::transition(w, &task, &[TaskStatus::Working], TaskStatus::Completed, None).await?;
        if let Some(hook) = &self.ctx.before_commit {
            hook(&format!("read:{} {}", call.tool, ran.args))?;
        }
        Ok(call.task_id)
    }

    /// The client's call as the driven way records it up to its start: the task and its
    /// request, the model step's call (no one asked), and the call started. The rows as this
    /// write left them, made from what it wrote (no read back).
    async fn record_start(
        &self,
        w: &mut Write,
        conversation: &Conversation,
        client: &str,
        started_by: Option<&str>,
        tool: &dyn Tool,
        args: &Value,
    ) -> crate::Result<(TaskRow, CallRow)> {
        let agent = self.ctx.agents.get(&conversation.agent).ok_or_else(|| anyhow::anyhow!("no agent {:?}", conversation.agent))?;
        let (cid, tool_name) = (&conversation.id, tool.spec().name.clone());
        // Its one step, the call, is taken as it is made: the driven way's `take_step` on a
        // row this write just made could only succeed.
        let task = tasks::insert(&mut w.tx, cid, 1, started_by).await?;
        let task_id = task.id.clone();
        let call = ClientCall::new(&task_id, cid, client, &tool_name, args);
        client_calls::insert(&mut w.tx, &call).await?;
        let asked = format!("{client} asks to run {tool_name}");
        w.append(cid, EventBody::UserMessage { task_id: task_id.clone(), text: asked.clone(), reply_to: None, client_id: None }).await?;
        w.append(cid, EventBody::TaskStatus { task_id: task_id.clone(), status: TaskStatus::Working, message: None, parent_call_id: None })
            .await?;
        let step = task.steps;
        let Description { summary, warnings } = tool.describe(&mut w.tx, args, &asked).await?;
        let call_id = new_call_id();
        let risk = tool.risk(args);
        w.append(
            cid,
            EventBody::ToolCall {
                task_id: task_id.clone(),
                call_id: call_id.clone(),
                tool: tool_name.clone(),
                agent: agent.name.clone(),
                args: args.clone(),
                summary,
                risk,
                grant_id: None,
                warnings,
                shadow_gate: None,
                why: None,
            },
        )
        .await?;
        let new_call = NewCall {
            id: &call_id,
            task_id: &task_id,
            conversation_id: cid,
            step,
            position: 0,
            tool: &tool_name,
            args,
            state: CallState::Approved,
        };
        calls::insert(&mut w.tx, new_call).await?;
        calls::transition(&mut w.tx, &call_id, CallState::Approved, CallState::Executing, None).await?;
        w.append(cid, EventBody::ToolStarted { task_id: task_id.clone(), call_id: call_id.clone() }).await?;
        let call = CallRow {
            id: call_id,
            task_id,
            conversation_id: cid.clone(),
            step,
            position: 0,
            tool: tool_name,
            args: args.clone(),
            state: CallState::Executing,
        };
        Ok((task, call))
    }

    /// An outside tool's call, its failure as the call's result.
    async fn call_external(&self, tool: &dyn Tool, args: &Value) -> Result<Value, String> {
        let started = std::time::Instant::now();
        let outcome = match tool.call(args).await {
            Ok(output) => Ok(output),
            Err(ToolError::Failed(failure)) => Err(failure.0),
            Err(ToolError::Internal(err)) => Err(format!("{err:#}")),
        };
        self.ctx.metrics.tool_ran(&tool.spec().name, started.elapsed().as_secs_f64());
        outcome
    }
}

/// What the gateway records about its clients while their calls wait: each one write of its own.
impl ClientCalls {
    /// The client still waits (a heartbeat), or has gone (`gone`): `store::client_calls::mark`.
    /// An approved call runs only while its client waits.
    pub async fn mark(&self, task_id: &TaskId, gone: bool) -> anyhow::Result<()> {
        client_calls::mark(&self.ctx.store, task_id, gone).await
    }

    /// The client was answered "input required" and comes back with its answer: it counts as
    /// waiting until `until` (the approval's deadline).
    pub async fn expect_back(&self, task_id: &TaskId, until: i64) -> anyhow::Result<()> {
        client_calls::expect_back(&self.ctx.store, task_id, until).await
    }

    /// Keeps the name a client calls itself (MCP's `clientInfo.name`) for its credential.
    pub async fn name_client(&self, user: &UserId, client_key: &str, name: &str) -> anyhow::Result<()> {
        client_calls::name_client(&self.ctx.store, user, client_key, name).await
    }
}

/// Run by the driver of a gated call once it was approved.
impl TaskDriver {
    /// An approved call whose client stopped waiting: recorded as not run, never run.
    pub(super) async fn client_gone(&self, call: &CallRow, client: &ClientCall, lease: &Lease) -> crate::Result<()> {
        let mut w = self.ctx.store.write_as(lease).await?;
        if !calls::transition(&mut w.tx, &call.id, CallState::Approved, CallState::Executing, None).await? {
            return Ok(()); // someone else ran or canceled it
        }
        let message = format!(
            "Not run: {} stopped waiting for the decision, so the approved call was not made (it would have answered no one)",
            client.client
        );
        self.ctx.record_result(&mut w, call, Err(message)).await?;
        w.commit().await?;
        Ok(())
    }
}
