//! The driver of tasks (docs/architecture.md, decision 2): a message starts a turn
//! (`start_turn.rs`), and a driver's loop advances it as far as it goes without a human
//! (`step.rs`): approved calls run once (`execute.rs`), the model is asked for the next step and
//! its reply and the gates' verdicts recorded (`model_step.rs`, its pure part `step_outcome.rs`),
//! sub-agents run as tasks of their own (`delegate.rs`), an approved plan's steps are granted
//! (`grants.rs`) and a gate's emails queued (`approval_emails.rs`). One driver per task in a
//! process, holding the task's lease (`drivers.rs`).

mod approval_emails;
mod delegate;
mod drivers;
mod execute;
mod grants;
mod model_step;
mod start_turn;
mod step;
mod step_outcome;

use std::{sync::Arc, time::Duration};

use domain::{TaskId, TaskStatus};

use self::drivers::{Drivers, Round};
use super::{BeforeCommitHook, context::Context};
use crate::{
    agents::AgentsConfig,
    metrics::Metrics,
    model::Models,
    store::{
        Store, Write,
        tasks::{self, Lease},
    },
    tools::Registry,
};

pub(super) use approval_emails::queue_emails;

/// Failed attempts at driving a task (since its last model step) before the turn fails.
pub const MAX_FAILED_ATTEMPTS: i64 = 3;

/// How a drive ended: still holding the task's lease, or its last write released it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Drove {
    Holding,
    Released,
}

/// The driver of tasks: one per process, holding which tasks it drives and their leases.
pub struct TaskDriver {
    /// The store, configuration and tools, shared with the use cases beside it.
    pub(super) ctx: Arc<Context>,
    /// Tasks being driven in this process. Guards against two drivers for one task, not a wait
    /// for a human.
    drivers: Drivers,
}

impl TaskDriver {
    pub fn new(
        store: Store,
        models: Models,
        tools: Arc<Registry>,
        agents: Arc<AgentsConfig>,
        draft: Option<Arc<AgentsConfig>>,
        before_commit: Option<BeforeCommitHook>,
        lease: Duration,
    ) -> Arc<Self> {
        let metrics = Arc::new(Metrics::default());
        let ctx = Arc::new(Context { store, models, tools, agents, draft, before_commit, metrics, lease });
        Arc::new(Self { ctx, drivers: Drivers::default() })
    }

    pub fn agents(&self) -> &AgentsConfig {
        &self.ctx.agents
    }

    /// The draft configuration calls are also put to, if one is loaded.
    pub fn draft(&self) -> Option<&AgentsConfig> {
        self.ctx.draft.as_deref()
    }

    /// The input schema of a tool, if the tool is (still) available.
    pub fn input_schema(&self, tool: &str) -> Option<serde_json::Value> {
        self.ctx.tools.get(tool).map(|t| t.spec().input_schema.clone())
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.ctx.metrics
    }

    pub fn tools(&self) -> &Registry {
        &self.ctx.tools
    }

    /// Makes sure the task gets driven: starts a driver, or tells the running one to look again.
    pub fn trigger(self: &Arc<Self>, task_id: &TaskId) {
        self.drive_with(task_id, None);
    }

    /// Claims the task inside the write that starts or resumes it, so that its driver needs no
    /// commit of its own to begin: pass the lease to [`Self::drive_with`] once `w` committed. `None`
    /// when a driver (here or in another process) holds the task: it will look again.
    pub(super) async fn claim_in(&self, w: &mut Write, task_id: &TaskId) -> anyhow::Result<Option<Lease>> {
        let owner = self.ctx.store.bus().instance();
        tasks::claim(&mut *w.tx, self.ctx.store.backend(), task_id, owner, self.ctx.lease.as_millis() as i64).await
    }

    /// Like [`Self::trigger`], with the lease a committed write claimed for the task, if any
    /// (handed to the task's driver if one still runs here: [`drivers`]).
    pub(super) fn drive_with(self: &Arc<Self>, task_id: &TaskId, lease: Option<Lease>) {
        let Some(lease) = self.drivers.enter(task_id, lease) else { return };
        let this = Arc::clone(self);
        let task_id = task_id.to_owned();
        // A child of whatever started it (a request's span carries its request id into the logs).
        let span = tracing::info_span!("drive", task_id = %task_id);
        tokio::spawn(tracing::Instrument::instrument(this.driver(task_id, lease), span));
    }

    /// One driver of a task in this process: drives it while it holds the task's lease, and leaves
    /// when nothing more is asked of it.
    async fn driver(self: Arc<Self>, task_id: TaskId, mut next: Option<Lease>) {
        loop {
            let lease = match next.take() {
                Some(lease) => lease,
                None => match self.claim(&task_id).await {
                    Some(lease) => lease,
                    // Another driver (here or in another process) holds the task: then it is theirs,
                    // unless a write handed this driver a lease meanwhile.
                    None => match self.drivers.next_round(&task_id, Round::Blocked) {
                        Some(Some(handed)) => handed,
                        _ => return,
                    },
                },
            };
            let held = match self.drive(&lease).await {
                Ok(Drove::Holding) => true,
                // Its last write gave the task up: no commit of its own for the release.
                Ok(Drove::Released) => false,
                Err(err @ crate::Error::LeaseLost(_)) => {
                    // Someone else drives it now; this driver's last write was dropped.
                    tracing::warn!(%task_id, error = %err, "lost the task's lease");
                    false
                }
                Err(err) => {
                    // Left as is in the database; the sweeper retries working tasks, a few times.
                    tracing::error!(%task_id, error = ?err, "driving the task failed");
                    self.count_failed_attempt(&lease).await;
                    true
                }
            };
            // A trigger that arrived meanwhile: look again, with the lease if still held.
            // (A lease handed over means this driver's own ran out: the claim replaced it.)
            if let Some(handed) = self.drivers.next_round(&task_id, Round::Working) {
                next = handed.or(held.then_some(lease));
                continue;
            }
            // Released while still listed as running, so a trigger that arrives meanwhile sets
            // "again" (or hands over a lease) here instead of starting a driver that finds it held.
            if held {
                self.release(&lease).await;
            }
            match self.drivers.next_round(&task_id, Round::Leaving) {
                Some(handed) => next = handed,
                None => return,
            }
        }
    }

    async fn release(&self, lease: &Lease) {
        if let Err(err) = tasks::release(&self.ctx.store, lease).await {
            tracing::warn!(task_id = %lease.task_id, error = ?err, "releasing the task failed; its lease will run out");
        }
    }

    /// A fresh lease on the task for one driver of this process, timed by the database's clock.
    async fn claim(&self, task_id: &TaskId) -> Option<Lease> {
        let owner = self.ctx.store.bus().instance();
        match tasks::claim(&self.ctx.store, self.ctx.store.backend(), task_id, owner, self.ctx.lease.as_millis() as i64).await {
            Ok(lease) => lease,
            Err(err) => {
                tracing::error!(%task_id, error = ?err, "claiming the task failed");
                None
            }
        }
    }

    /// Keeps this process's claims alive while it runs (a third of the lease between renewals).
    pub async fn renew_claims(self: Arc<Self>, pulse: crate::background::Pulse) {
        loop {
            tokio::time::sleep(self.ctx.lease / 3).await;
            let lease_ms = self.ctx.lease.as_millis() as i64;
            match tasks::renew(&self.ctx.store, self.ctx.store.backend(), self.ctx.store.bus().instance(), lease_ms).await {
                Ok(()) => pulse.ok(),
                Err(err) => {
                    tracing::warn!(error = ?err, "renewing task claims failed");
                    pulse.failed(err);
                }
            }
        }
    }

    /// Counts a failed attempt at driving the task; after [`MAX_FAILED_ATTEMPTS`] since its last
    /// model step the turn fails with a message the chat shows, instead of being retried forever.
    async fn count_failed_attempt(&self, lease: &Lease) {
        let task_id = &lease.task_id;
        let result = async {
            let mut w = self.ctx.store.write_as(lease).await?;
            let attempts = tasks::count_failed_attempt(&mut w, task_id).await?;
            if attempts >= MAX_FAILED_ATTEMPTS
                && let Some(task) = tasks::get(&mut *w.tx, task_id).await?
            {
                let message = format!(
                    "Countersign could not record the agent's next step ({attempts} attempts failed), so this turn was stopped. \
                     Nothing else was changed; send your message again to retry."
                );
                tasks::transition(&mut w, &task, &[TaskStatus::Working, TaskStatus::InputRequired], TaskStatus::Failed, Some(message))
                    .await?;
            }
            Ok(w.commit().await?)
        };
        let result: crate::Result<_> = result.await;
        match result {
            Ok(_) => {}
            // The driver froze or was cut off and another took the task over: nothing to count.
            Err(crate::Error::LeaseLost(_)) => {
                tracing::info!(%task_id, "a failed attempt was not counted: this driver no longer holds the task");
            }
            Err(err) => tracing::error!(%task_id, error = ?err, "counting a failed attempt failed"),
        }
    }

    pub fn is_running(&self, task_id: &TaskId) -> bool {
        self.drivers.contains(task_id)
    }
}
