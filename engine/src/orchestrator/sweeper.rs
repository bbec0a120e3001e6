//! Background work beside the HTTP server: apply timeout actions to overdue approvals (their
//! deadlines are stored, so this survives restarts) and resume tasks that need a driver.

use crate::Error;
use std::{sync::Arc, time::Duration};

use super::{Decisions, TaskDriver};
use crate::clock::now_ms;
use crate::store::{approvals, tasks};

/// At start-up: resumes every task a crash or restart left mid-way, at once (on SQLite the
/// previous process's leases are dropped first; on PostgreSQL a dead holder's leases are
/// claimable as soon as its connections are gone).
pub async fn resume_at_start_up(driver: &Arc<TaskDriver>) -> anyhow::Result<usize> {
    if driver.ctx.store.backend() == crate::store::Backend::Sqlite {
        let dropped = tasks::forget_leases_at_start_up(&driver.ctx.store).await?
            + crate::store::outbox::forget_leases_at_start_up(&driver.ctx.store).await?;
        if dropped > 0 {
            tracing::info!(dropped, "dropped the task and webhook leases of the previous run");
        }
    }
    resume_all(driver).await
}

/// Resumes every task a crash or restart left mid-way.
pub async fn resume_all(driver: &Arc<TaskDriver>) -> anyhow::Result<usize> {
    let ids = tasks::needing_work(&driver.ctx.store).await?;
    for id in &ids {
        if !driver.is_running(id) {
            driver.trigger(id);
        }
    }
    Ok(ids.len())
}

/// Escalation timeouts and reminders that are due (both stored, so a restart misses none).
async fn sweep_escalations_and_reminders(decisions: &Decisions) {
    let now = now_ms();
    match approvals::due_escalations(&decisions.ctx.store, decisions.ctx.store.backend(), now).await {
        Ok(ids) => {
            for id in ids {
                match decisions.escalate_when_due(&id).await {
                    Ok(()) | Err(Error::WrongState(_) | Error::Unknown(_)) => {}
                    Err(err) => tracing::error!(approval_id = %id, error = ?err, "escalation failed"),
                }
            }
        }
        Err(err) => tracing::error!(error = ?err, "escalation sweep failed"),
    }
    match approvals::due_reminders(&decisions.ctx.store, decisions.ctx.store.backend(), now).await {
        Ok(ids) => {
            for id in ids {
                match decisions.remind_when_due(&id).await {
                    Ok(()) | Err(Error::WrongState(_) | Error::Unknown(_)) => {}
                    Err(err) => tracing::error!(approval_id = %id, error = ?err, "reminder failed"),
                }
            }
        }
        Err(err) => tracing::error!(error = ?err, "reminder sweep failed"),
    }
}

/// Runs forever: a sweep every `interval`, and a resume pass every 20 intervals.
pub async fn run(decisions: Decisions, interval: Duration, pulse: crate::background::Pulse) {
    let mut ticks: u64 = 0;
    loop {
        tokio::time::sleep(interval).await;
        ticks += 1;
        match sweep(&decisions).await {
            Ok(()) => pulse.ok(),
            Err(err) => pulse.failed(err),
        }
        // PostgreSQL: chain audit entries a replica staged but could not chain (it died or
        // another replica was chaining); about once a second.
        if decisions.ctx.store.backend() == crate::store::Backend::Postgres
            && ticks.is_multiple_of((1000 / interval.as_millis().max(1) as u64).max(1))
            && let Err(err) = crate::store::audit::settle(&decisions.ctx.store).await
        {
            tracing::error!(error = ?err, "chaining staged audit entries failed");
        }
        if ticks.is_multiple_of(20)
            && let Err(err) = resume_all(decisions.driver()).await
        {
            tracing::error!(error = ?err, "resume sweep failed");
        }
    }
}

/// One pass: the timeout actions of overdue approvals, then due escalations and reminders.
/// Each approval's failure is logged and the pass goes on; the first is returned.
pub async fn sweep(decisions: &Decisions) -> Result<(), String> {
    let mut failed = Vec::new();
    match approvals::overdue(&decisions.ctx.store, decisions.ctx.store.backend(), now_ms()).await {
        Ok(ids) => {
            for id in ids {
                match decisions.time_out(&id).await {
                    Ok(()) | Err(Error::WrongState(_) | Error::Unknown(_)) => {}
                    Err(err) => {
                        tracing::error!(approval_id = %id, error = ?err, "timeout failed");
                        failed.push(format!("the timeout of approval {id}: {err:#}"));
                    }
                }
            }
        }
        Err(err) => {
            tracing::error!(error = ?err, "timeout sweep failed");
            failed.push(format!("the timeout sweep: {err:#}"));
        }
    }
    sweep_escalations_and_reminders(decisions).await;
    failed.into_iter().next().map_or(Ok(()), Err)
}
