//! Webhooks: committed `approval-required`, `approval-decided` and `approval-escalated` events (or
//! any others a webhook lists, such as `approval-reminder`)
//! are POSTed as JSON to configured URLs, signed with HMAC-SHA256 over the body
//! (`X-Countersign-Signature: sha256=<hex>`), retried with backoff. Each delivery is an outbox
//! row written in the transaction that appended the event, so none is lost to a restart; the
//! delivery worker (`delivery.rs`) sends them beside the task driver, so a slow receiver never
//! delays a decision.

use std::time::Duration;

use crate::{
    delivery::{Channel, Sent},
    store::outbox::{Delivery, Kind},
};
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

/// The webhook channel of the delivery worker (`delivery.rs`): POSTs each delivery to its URL,
/// signed, side by side.
pub struct Webhooks {
    hooks: Vec<Webhook>,
    client: reqwest::Client,
}

impl Webhooks {
    /// `None` when no webhook is configured.
    pub fn channel(hooks: Vec<Webhook>) -> Option<Self> {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().expect("BUG: default HTTP client builds");
        (!hooks.is_empty()).then_some(Self { hooks, client })
    }
}

#[async_trait::async_trait]
impl Channel for Webhooks {
    fn kind(&self) -> Kind {
        Kind::Webhook
    }

    fn retry_after(&self, failed: u32) -> Option<Duration> {
        crate::delivery::backoff(Duration::from_millis(250), ATTEMPTS, failed)
    }

    fn side_by_side(&self) -> bool {
        true
    }

    async fn send(&self, delivery: &Delivery) -> Sent {
        let Some(hook) = self.hooks.iter().find(|h| h.url == delivery.target) else {
            // The URL left the configuration: nobody is waiting for it any more.
            return Sent::GiveUp("no longer configured".into());
        };
        let result = self
            .client
            .post(&hook.url)
            .header("content-type", "application/json")
            .header(SIGNATURE_HEADER, sign(&hook.secret, delivery.body.as_bytes()))
            .body(delivery.body.clone())
            .send()
            .await;
        match result {
            Ok(response) if response.status().is_success() => Sent::Delivered,
            Ok(response) => Sent::Retry(format!("answered {}", response.status())),
            Err(err) => Sent::Retry(format!("{err}")),
        }
    }
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
