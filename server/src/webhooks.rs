//! Webhooks: committed `approval-required`, `approval-decided` and `approval-escalated` events
//! are POSTed as JSON to configured URLs, signed with HMAC-SHA256 over the body
//! (`X-Countersign-Signature: sha256=<hex>`), retried with backoff. Delivery runs beside the
//! orchestrator, fed by the event bus, so a slow receiver never delays a decision. Deliveries
//! in flight when the server stops are not retried after a restart.

use std::time::Duration;

use app::domain::Event;
use hmac::{Hmac, Mac};
use serde::Deserialize;
use serde_json::json;
use sha2::Sha256;
use tokio::sync::broadcast::error::RecvError;

use crate::bus::Bus;

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
    events: Vec<String>,
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

/// Runs forever, delivering matching events to every hook.
pub async fn run(hooks: Vec<Webhook>, bus: Bus) {
    if hooks.is_empty() {
        return std::future::pending().await;
    }
    let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().expect("BUG: default HTTP client builds");
    // Only what this process committed: with several replicas each event is delivered once.
    let mut rx = bus.subscribe_local();
    loop {
        let event = match rx.recv().await {
            Ok(event) => event,
            Err(RecvError::Lagged(n)) => {
                tracing::warn!(missed = n, "webhook delivery fell behind; some events were not sent");
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        for hook in hooks.iter().filter(|h| h.events.iter().any(|e| e == event.body.name())) {
            tokio::spawn(deliver(client.clone(), hook.clone(), event.clone()));
        }
    }
}

async fn deliver(client: reqwest::Client, hook: Webhook, event: Event) {
    let body = json!({ "event": event.body.name(), "seq": event.seq, "conversation_id": event.conversation_id, "at": event.at, "data": event.body })
        .to_string();
    let signature = sign(&hook.secret, body.as_bytes());
    for attempt in 0..ATTEMPTS {
        let result = client
            .post(&hook.url)
            .header("content-type", "application/json")
            .header(SIGNATURE_HEADER, &signature)
            .body(body.clone())
            .send()
            .await;
        match result {
            Ok(response) if response.status().is_success() => return,
            Ok(response) => tracing::warn!(url = hook.url, status = %response.status(), attempt, "webhook refused"),
            Err(err) => tracing::warn!(url = hook.url, error = %err, attempt, "webhook failed"),
        }
        tokio::time::sleep(Duration::from_millis(250 * 2u64.pow(attempt))).await;
    }
    tracing::error!(url = hook.url, event = event.body.name(), "webhook gave up after {ATTEMPTS} attempts");
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
