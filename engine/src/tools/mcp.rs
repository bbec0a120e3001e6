//! MCP tool servers (stdio child processes or streamable HTTP) through the official Rust SDK,
//! `rmcp`. Their tools join the registry with their JSON schemas and annotations
//! (`destructiveHint`, `readOnlyHint`). MCP calls are external effects: the task driver marks
//! them executing before calling and never re-runs one a crash interrupted (docs/architecture.md, decision 4).

use std::{collections::BTreeSet, sync::Arc};

use anyhow::{Context, bail};
use async_trait::async_trait;
use rmcp::{
    RoleClient, ServiceExt,
    model::CallToolRequestParams,
    service::RunningService,
    transport::{StreamableHttpClientTransport, TokioChildProcess, streamable_http_client::StreamableHttpClientTransportConfig},
};
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::AnyConnection;

use super::{Tool, ToolError, ToolFailure, ToolSpec};

/// `[[mcp_servers]]` in the agent configuration: a command to spawn, or a URL.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    pub name: String,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    pub url: Option<String>,
    /// How long one tool call may take before it counts as failed (default 60 s). Without a
    /// limit a hung server would hold its task (and the task's lease) forever.
    pub timeout_secs: Option<f64>,
}

impl McpServerConfig {
    pub fn call_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.timeout_secs.unwrap_or(60.0).clamp(0.1, 86_400.0))
    }
}

type Client = RunningService<RoleClient, ()>;

/// Starts (or connects to) one server; errors name it.
pub async fn connect(config: &McpServerConfig) -> anyhow::Result<Arc<Client>> {
    let name = &config.name;
    let client = match (&config.command, &config.url) {
        (Some(command), None) => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(&config.args).kill_on_drop(true);
            let transport = TokioChildProcess::new(cmd).with_context(|| format!("MCP server {name:?}: cannot start {command:?}"))?;
            ().serve(transport).await.map_err(|e| anyhow::anyhow!("MCP server {name:?} did not start: {e}"))?
        }
        (None, Some(url)) => {
            // Connections are kept and reused (rmcp's own client opens one per request), small
            // requests go out at once, no redirect is followed (the token header would go with
            // it), and as many calls may be in flight as the gateway's clients make.
            let http = reqwest_mcp::Client::builder()
                .pool_max_idle_per_host(64)
                .tcp_nodelay(true)
                .redirect(reqwest_mcp::redirect::Policy::none())
                .build()
                .context("cannot make an HTTP client")?;
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).max_concurrent_requests(1024);
            let transport = StreamableHttpClientTransport::with_client(http, config);
            ().serve(transport).await.map_err(|e| anyhow::anyhow!("MCP server {name:?} at {url} did not answer: {e}"))?
        }
        _ => bail!("MCP server {name:?}: give either command (stdio) or url (streamable HTTP)"),
    };
    Ok(Arc::new(client))
}

/// The server's tools named in `wanted`, as registry tools. A wanted tool it lacks is an error.
pub async fn tools(config: &McpServerConfig, client: Arc<Client>, wanted: &BTreeSet<String>) -> anyhow::Result<Vec<Arc<dyn Tool>>> {
    let server = config.name.as_str();
    let listed = client.list_all_tools().await.map_err(|e| anyhow::anyhow!("MCP server {server:?}: cannot list tools: {e}"))?;
    let mut out: Vec<Arc<dyn Tool>> = Vec::new();
    for name in wanted {
        let Some(tool) = listed.iter().find(|t| t.name == name.as_str()) else {
            let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
            bail!("MCP server {server:?} has no tool {name:?} (it has: {})", names.join(", "));
        };
        let annotations = tool.annotations.as_ref();
        let spec = ToolSpec {
            name: name.clone(),
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            input_schema: Value::Object((*tool.input_schema).clone()),
            read_only: annotations.and_then(|a| a.read_only_hint).unwrap_or(false),
            // MCP's default for destructiveHint is true unless the tool says it is read-only.
            destructive: annotations
                .and_then(|a| a.destructive_hint)
                .unwrap_or(!annotations.and_then(|a| a.read_only_hint).unwrap_or(false)),
        };
        let hints =
            Hints { idempotent: annotations.and_then(|a| a.idempotent_hint), open_world: annotations.and_then(|a| a.open_world_hint) };
        out.push(Arc::new(McpTool { spec, hints, server: server.to_owned(), client: client.clone(), timeout: config.call_timeout() }));
    }
    Ok(out)
}

/// What the MCP server's annotations say beyond read-only and destructive.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hints {
    /// `idempotentHint`: calling it again with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// `openWorldHint`: it reaches entities outside the server (the web, other systems).
    pub open_world: Option<bool>,
}

impl Hints {
    /// The risk factors these hints add for a call that changes something.
    pub fn factors(self, read_only: bool) -> Vec<String> {
        let mut factors = Vec::new();
        if !read_only && self.idempotent == Some(false) {
            factors.push("running it again repeats its effect (MCP idempotentHint: false)".to_owned());
        }
        if self.open_world == Some(true) {
            factors.push("it reaches outside systems (MCP openWorldHint)".to_owned());
        }
        factors
    }
}

pub struct McpTool {
    spec: ToolSpec,
    hints: Hints,
    server: String,
    client: Arc<Client>,
    timeout: std::time::Duration,
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn summarize(&self, args: &Value) -> String {
        let mut text = format!("{} on MCP server {}: {args}", self.spec.name, self.server);
        if text.chars().count() > 160 {
            text = format!("{}…", text.chars().take(160).collect::<String>());
        }
        text
    }

    fn is_external(&self) -> bool {
        true
    }

    fn assess(&self, _args: &Value, described: &super::Description) -> domain::wire::RiskAssessment {
        let mut assessment = super::assess_from_metadata(&self.spec, described);
        assessment.factors.extend(self.hints.factors(self.spec.read_only));
        assessment
    }

    async fn run(&self, _conn: &mut AnyConnection, args: &Value) -> Result<Value, ToolError> {
        self.call(args).await
    }

    async fn call(&self, args: &Value) -> Result<Value, ToolError> {
        let arguments = args.as_object().cloned().unwrap_or_default();
        let params = CallToolRequestParams::new(self.spec.name.clone()).with_arguments(arguments);
        let result = tokio::time::timeout(self.timeout, self.client.call_tool(params))
            .await
            .map_err(|_| {
                ToolFailure(format!(
                    "MCP server {} did not answer within {:.1} s; whether the call took effect is unknown",
                    self.server,
                    self.timeout.as_secs_f64()
                ))
            })?
            .map_err(|e| ToolFailure(format!("MCP server {} failed: {e}", self.server)))?;
        let value = serde_json::to_value(&result).map_err(|e| ToolError::Internal(e.into()))?;
        let text: Vec<&str> = value["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect();
        let message = text.join("\n");
        if result.is_error == Some(true) {
            return Err(ToolFailure(if message.is_empty() { "the MCP tool reported an error".into() } else { message }).into());
        }
        Ok(json!({ "message": message, "content": value["content"], "structured": value.get("structuredContent") }))
    }
}

#[cfg(test)]
mod tests {
    use super::Hints;

    #[test]
    fn idempotent_and_open_world_hints_become_risk_factors() {
        let repeat = Hints { idempotent: Some(false), open_world: Some(true) };
        assert_eq!(
            repeat.factors(false),
            ["running it again repeats its effect (MCP idempotentHint: false)", "it reaches outside systems (MCP openWorldHint)"]
        );
        assert_eq!(repeat.factors(true), ["it reaches outside systems (MCP openWorldHint)"], "a read repeats nothing");
        assert!(Hints { idempotent: Some(true), open_world: None }.factors(false).is_empty());
        assert!(Hints::default().factors(false).is_empty(), "no hints, nothing claimed");
    }
}
