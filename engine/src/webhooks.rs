//! Webhooks: committed `approval-required`, `approval-decided` and `approval-escalated` events (or
//! any others a webhook lists, such as `approval-reminder`)
//! are POSTed as JSON to configured URLs, signed with HMAC-SHA256 over the body
//! (`X-Countersign-Signature: sha256=<hex>`), retried with backoff. Each delivery is an outbox
//! row written in the transaction that appended the event, so none is lost to a restart; they
//! are sent beside the orchestrator, so a slow receiver never delays a decision.

use std::time::Duration;

use crate::store::{Store, outbox, time::now_ms};
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;

pub const SIGNATURE_HEADER: &str = "x-countersign-signature";
const ATTEMPTS: u32 = 5;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    pub url: String,
    /// Environment variable holding the signing secret.
    pub secret_env: String,
    /// Event names to send; default: approval-required, approval-decided, approval-escalated.
    #[serde(default = "default_events")]
    pub events: Vec<String>,
}

fn default_events() -> Vec<String> {
    ["approval-required", "approval-decided", "approval-escalated"].map(String::from).to_vec()
}

#[derive(Clone)]
pub struct Webhook {
    pub url: String,
    secret: String,
    pub events: Vec<String>,
}

impl Webhook {
    /// Reads the secret from the environment; errors name the variable.
    pub fn from_config(config: &WebhookConfig) -> anyhow::Result<Self> {
        let secret = std::env::var(&config.secret_env)
            .map_err(|_| anyhow::anyhow!("webhook {}: secret_env names {}, which is not set", config.url, config.secret_env))?;
        Ok(Self { url: config.url.clone(), secret, events: config.events.clone() })
    }
}

pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("BUG: HMAC takes keys of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Runs forever, working off the outbox: due deliveries are leased (one replica sends each),
/// POSTed, and marked delivered, retried later, or given up after the last attempt. Woken by
/// this process's commits, and every second for retries and other replicas' rows.
pub async fn run(hooks: Vec<Webhook>, store: Store) {
    if hooks.is_empty() {
        return std::future::pending().await;
    }
    let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().expect("BUG: default HTTP client builds");
    let mut wake = store.bus().subscribe_local();
    loop {
        if let Err(err) = deliver_due(&client, &hooks, &store).await {
            tracing::error!(error = ?err, "webhook delivery pass failed");
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), wake.recv()).await;
    }
}

async fn deliver_due(client: &reqwest::Client, hooks: &[Webhook], store: &Store) -> anyhow::Result<()> {
    let until = now_ms() + 60_000;
    let due = outbox::claim_due(store.writer(), store.backend(), store.bus().instance(), until, 50, outbox::Kind::Webhook).await?;
    let sends = due.into_iter().map(|delivery| async move {
        let Some(hook) = hooks.iter().find(|h| h.url == delivery.url) else {
            // The URL left the configuration: nobody is waiting for it any more.
            return outbox::attempt_failed(store.writer(), delivery.id, "no longer configured", None).await;
        };
        let result = client
            .post(&hook.url)
            .header("content-type", "application/json")
            .header(SIGNATURE_HEADER, sign(&hook.secret, delivery.body.as_bytes()))
            .body(delivery.body.clone())
            .send()
            .await;
        let error = match result {
            Ok(response) if response.status().is_success() => return outbox::delivered(store.writer(), delivery.id).await,
            Ok(response) => format!("answered {}", response.status()),
            Err(err) => format!("{err}"),
        };
        let attempt = delivery.attempts as u32;
        let retry_at = (attempt + 1 < ATTEMPTS).then(|| now_ms() + 250 * 2i64.pow(attempt));
        match retry_at {
            Some(_) => tracing::warn!(url = hook.url, error, attempt, "webhook failed; will retry"),
            None => tracing::error!(url = hook.url, error, "webhook gave up after {ATTEMPTS} attempts"),
        }
        outbox::attempt_failed(store.writer(), delivery.id, &error, retry_at).await
    });
    for result in futures::future::join_all(sends).await {
        result?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_the_body() {
        // RFC 4231 test case 2.
        assert_eq!(
            sign("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
