//! The one delivery worker: works off the outbox (`store/outbox.rs`) for every channel that is
//! configured (webhooks here; email and Slack in the server). Due rows are leased so that one
//! replica sends each, handed to their channel, and marked delivered, retried later with the
//! channel's backoff, or given up. Woken by this process's commits, and every second for retries
//! and other replicas' rows.

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;

use crate::clock::now_ms;
use crate::store::{Store, outbox};

/// What a channel is handed and reads from it: a due row, the channel it is for, and what a Slack
/// row asks (post or update).
pub use crate::store::outbox::{Delivery, Kind, SlackAction};

/// How many due rows one pass leases, and for how long.
const BATCH: i64 = 50;
const LEASE_MS: i64 = 60_000;

/// What a channel made of one delivery.
#[derive(Debug, PartialEq, Eq)]
pub enum Sent {
    Delivered,
    /// It failed this time (the far end is down or refused): try again after the channel's
    /// backoff, until it gives up.
    Retry(String),
    /// It can never be delivered (the row cannot be read, the approval or person is gone).
    GiveUp(String),
}

#[async_trait]
pub trait Channel: Send + Sync {
    fn kind(&self) -> Kind;

    /// The wait before the next attempt after `failed` attempts failed, or `None` to give up.
    fn retry_after(&self, failed: u32) -> Option<Duration>;

    /// Whether deliveries may go out side by side (webhooks). Otherwise one after another in
    /// the order they were queued, so a Slack update never overtakes its post.
    fn side_by_side(&self) -> bool {
        false
    }

    async fn send(&self, delivery: &Delivery) -> Sent;
}

/// Exponential backoff: `first`, doubling, for `attempts` attempts in all.
pub fn backoff(first: Duration, attempts: u32, failed: u32) -> Option<Duration> {
    (failed < attempts).then(|| first * 2u32.pow(failed.saturating_sub(1)))
}

/// Runs forever; returns at once when no channel is configured.
pub async fn run(store: Store, channels: Vec<Arc<dyn Channel>>, pulse: crate::background::Pulse) {
    if channels.is_empty() {
        return;
    }
    let mut wake = store.bus().subscribe_local();
    loop {
        match deliver_due(&store, &channels).await {
            Ok(()) => pulse.ok(),
            Err(err) => {
                tracing::error!(error = ?err, "delivery pass failed");
                pulse.failed(err);
            }
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), wake.recv()).await;
    }
}

async fn deliver_due(store: &Store, channels: &[Arc<dyn Channel>]) -> anyhow::Result<()> {
    let kinds: Vec<Kind> = channels.iter().map(|c| c.kind()).collect();
    let owner = store.bus().instance();
    let due = outbox::claim_due(store, store.backend(), owner, now_ms() + LEASE_MS, BATCH, &kinds).await?;
    let passes = channels.iter().map(|channel| {
        let mine: Vec<&Delivery> = due.iter().filter(|d| d.kind == channel.kind()).collect();
        async move {
            if channel.side_by_side() {
                futures::future::try_join_all(mine.into_iter().map(|d| deliver(store, channel.as_ref(), d))).await.map(drop)
            } else {
                for delivery in mine {
                    deliver(store, channel.as_ref(), delivery).await?;
                }
                Ok(())
            }
        }
    });
    futures::future::try_join_all(passes).await.map(drop)
}

async fn deliver(store: &Store, channel: &dyn Channel, delivery: &Delivery) -> anyhow::Result<()> {
    let (kind, id, target) = (channel.kind().as_str(), delivery.id, &delivery.target);
    match channel.send(delivery).await {
        Sent::Delivered => outbox::delivered(store, delivery.id).await,
        Sent::Retry(why) => {
            let failed = delivery.attempts as u32 + 1;
            let retry_at = channel.retry_after(failed).map(|wait| now_ms() + wait.as_millis() as i64);
            match retry_at {
                Some(_) => tracing::warn!(kind, id, target, why, attempt = failed, "delivery failed; will retry"),
                None => tracing::error!(kind, id, target, why, "delivery gave up after {failed} attempts"),
            }
            outbox::attempt_failed(store, delivery.id, &why, retry_at).await
        }
        Sent::GiveUp(why) => {
            tracing::warn!(kind, id, target, why, "delivery given up");
            outbox::attempt_failed(store, delivery.id, &why, None).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_gives_up_after_the_last_attempt() {
        let first = Duration::from_millis(250);
        let waits: Vec<_> = (1..=5).map(|failed| backoff(first, 5, failed)).collect();
        assert_eq!(waits, [250, 500, 1000, 2000].map(|ms| Some(Duration::from_millis(ms))).into_iter().chain([None]).collect::<Vec<_>>());
    }
}
