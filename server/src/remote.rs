//! The running server as the `approvals` subcommands reach it: its address and an API token,
//! and one call to its public API.

use anyhow::{Context, bail};
use serde_json::Value;

#[derive(clap::Args)]
pub struct Remote {
    /// Base URL of the running server.
    #[arg(long, env = "COUNTERSIGN_URL", default_value = "http://127.0.0.1:3000")]
    pub server: String,
    /// API token (create one with `countersign token create`).
    #[arg(long, env = "COUNTERSIGN_TOKEN", hide_env_values = true)]
    pub token: String,
}

pub(crate) async fn remote(remote: &Remote, method: reqwest::Method, path: &str, body: Option<Value>) -> anyhow::Result<Value> {
    let url = format!("{}{}", remote.server.trim_end_matches('/'), path);
    let mut request = reqwest::Client::new().request(method, &url).bearer_auth(&remote.token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.with_context(|| format!("cannot reach {url}"))?;
    let status = response.status();
    let value: Value = response.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        let message = value["error"]["message"].as_str().unwrap_or("request failed");
        bail!("{status}: {message}");
    }
    Ok(value)
}
