//! The Slack-compatible workspace as this server reaches it: its Web API client and the check of
//! a request's signature (Slack's signing scheme). The channel and the interaction route are in
//! `slack.rs`.

use std::time::Duration;

use axum::http::HeaderMap;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use crate::agents::SlackConfig;

/// How old a signed request may be (Slack's own advice), in seconds.
const WINDOW_SECS: i64 = 5 * 60;

/// The workspace's settings with its secrets read from the environment at start-up.
#[derive(Clone)]
pub struct Slack {
    pub config: SlackConfig,
    token: String,
    signing_secret: String,
    client: reqwest::Client,
}

impl Slack {
    pub fn new(config: SlackConfig) -> anyhow::Result<Self> {
        let read = |var: &str, what: &str| {
            std::env::var(var).ok().filter(|v| !v.is_empty()).ok_or_else(|| anyhow::anyhow!("slack: {what} names {var}, which is not set"))
        };
        let token = read(&config.bot_token_env, "bot_token_env")?;
        let signing_secret = read(&config.signing_secret_env, "signing_secret_env")?;
        let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build()?;
        Ok(Self { config, token, signing_secret, client })
    }

    /// Calls a Web API method; Slack answers 200 with `ok: false` and an `error` when it refuses.
    pub(crate) async fn call(&self, method: &str, body: &Value) -> Result<Value, String> {
        let url = format!("{}/{method}", self.config.api_base_url.trim_end_matches('/'));
        let response = self.client.post(&url).bearer_auth(&self.token).json(body).send().await.map_err(|e| format!("{method}: {e}"))?;
        let status = response.status();
        let answer: Value = response.json().await.map_err(|e| format!("{method} answered {status}: {e}"))?;
        if answer["ok"] != true {
            return Err(format!("{method}: {}", answer["error"].as_str().unwrap_or("not ok")));
        }
        Ok(answer)
    }

    /// Is this request signed by the workspace, within the window? (Slack's documented scheme.)
    pub fn verify(&self, headers: &HeaderMap, body: &[u8], now_secs: i64) -> Result<(), &'static str> {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let timestamp = header("x-slack-request-timestamp").ok_or("no X-Slack-Request-Timestamp")?;
        let signature = header("x-slack-signature").ok_or("no X-Slack-Signature")?;
        let at: i64 = timestamp.parse().map_err(|_| "a bad timestamp")?;
        if now_secs.checked_sub(at).is_none_or(|d| d.unsigned_abs() > WINDOW_SECS as u64) {
            return Err("a stale timestamp (more than five minutes off)");
        }
        let expected = signature.strip_prefix("v0=").and_then(|h| hex::decode(h).ok()).ok_or("a malformed signature")?;
        let mut mac = Hmac::<Sha256>::new_from_slice(self.signing_secret.as_bytes()).expect("BUG: HMAC takes keys of any length");
        mac.update(format!("v0:{timestamp}:").as_bytes());
        mac.update(body);
        mac.verify_slice(&expected).map_err(|_| "a signature that does not match")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slack() -> Slack {
        let config = SlackConfig {
            api_base_url: "http://127.0.0.1:9".into(),
            bot_token_env: String::new(),
            signing_secret_env: String::new(),
            channel: "C1".into(),
            users: Default::default(),
        };
        // Slack's documentation example of the signing scheme.
        Slack { config, token: String::new(), signing_secret: "8f742231b10e8888abcd99yyyzzz85a5".into(), client: reqwest::Client::new() }
    }

    #[test]
    fn a_request_signed_as_slack_documents_verifies_and_a_changed_or_stale_one_does_not() {
        let body = b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
        let mut headers = HeaderMap::new();
        headers.insert("x-slack-request-timestamp", "1531420618".parse().unwrap());
        headers.insert("x-slack-signature", "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503".parse().unwrap());
        assert_eq!(slack().verify(&headers, body, 1_531_420_618 + 60), Ok(()));
        assert!(slack().verify(&headers, body, 1_531_420_618 + 301).is_err(), "stale");
        assert!(slack().verify(&headers, &body[1..], 1_531_420_618).is_err(), "changed body");
        assert!(slack().verify(&headers, body, i64::MIN).is_err(), "no overflow on absurd clocks");
        headers.remove("x-slack-signature");
        assert!(slack().verify(&headers, body, 1_531_420_618).is_err(), "unsigned");
    }
}
