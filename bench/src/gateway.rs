//! The MCP gateway section: a tiny upstream MCP server (rmcp, in this process, streamable HTTP)
//! called directly and through `/mcp/<agent>`, in both protocol eras: the latency an ungated
//! read adds at one client, the calls per second at 32, and a gated call's whole cycle (asked,
//! approved over the API, answered) per second.

use std::{sync::Arc, time::Instant};

use anyhow::{Context, bail};
use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig},
    service::RequestContext,
    transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager},
};
use serde_json::{Value, json};

use crate::{Report, Server, Sizes, Timings, ms, target_line};

/// The upstream: `lookup` (a read) answers at once; `update` (a write) too, once approved.
#[derive(Clone)]
struct Upstream;

impl ServerHandler for Upstream {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(&self, _: Option<PaginatedRequestParams>, _: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        let tool = |name: &str, read_only: bool| {
            json!({
                "name": name, "description": format!("bench {name}"),
                "inputSchema": { "type": "object", "properties": { "id": { "type": "integer" } } },
                "annotations": { "readOnlyHint": read_only, "destructiveHint": !read_only },
            })
        };
        serde_json::from_value(json!({ "resultType": "complete", "tools": [tool("lookup", true), tool("update", false)] }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn call_tool(&self, request: CallToolRequestParams, _: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        let id = request.arguments.as_ref().and_then(|a| a.get("id")).cloned().unwrap_or(Value::Null);
        let result = json!({ "resultType": "complete", "content": [{ "type": "text", "text": format!("{} {id}: ok", request.name) }] });
        serde_json::from_value::<rmcp::model::CallToolResult>(result)
            .map(Into::into)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}

/// Serves the upstream on a free port; its URL.
async fn upstream() -> anyhow::Result<String> {
    let config = StreamableHttpServerConfig::default().with_legacy_session_mode(false).disable_allowed_hosts();
    let service = StreamableHttpService::new(|| Ok(Upstream), Arc::new(LocalSessionManager::default()), config);
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    // Small answers go out at once (without it, delayed ACKs add ~40 ms to each).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(url)
}

#[derive(Clone, Copy, PartialEq)]
enum Era {
    /// `initialize`, then stateless requests (2025-11-25).
    Handshake,
    /// 2026-07-28: every request carries its envelope.
    Modern,
}

impl Era {
    fn name(self) -> &'static str {
        match self {
            Self::Handshake => "2025-11-25",
            Self::Modern => "2026-07-28",
        }
    }
}

/// A stateless MCP client of one era at one URL.
#[derive(Clone)]
struct Caller {
    http: reqwest::Client,
    url: String,
    era: Era,
}

impl Caller {
    async fn new(url: &str, token: Option<&str>, era: Era) -> anyhow::Result<Self> {
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(token) = token {
            headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {token}").parse()?);
        }
        headers.insert(reqwest::header::ACCEPT, "application/json, text/event-stream".parse()?);
        headers.insert("mcp-protocol-version", era.name().parse()?);
        let http = reqwest::Client::builder().default_headers(headers).pool_max_idle_per_host(256).build()?;
        let caller = Self { http, url: url.to_owned(), era };
        if era == Era::Handshake {
            let init = json!({ "protocolVersion": era.name(), "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } });
            caller.rpc("initialize", None, init).await?;
        }
        Ok(caller)
    }

    /// One request; its `result`.
    async fn rpc(&self, method: &str, name: Option<&str>, mut params: Value) -> anyhow::Result<Value> {
        let mut request = self.http.post(&self.url);
        if self.era == Era::Modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": { "name": "bench", "version": "1" },
            });
            request = request.header("mcp-method", method);
            if let Some(name) = name {
                request = request.header("mcp-name", name);
            }
        }
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
        let text = request.json(&body).send().await?.text().await?;
        // A JSON answer, or the last message of an SSE stream.
        let last = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).rfind(|d| !d.is_empty());
        let answer: Value = serde_json::from_str(last.unwrap_or(text.trim())).with_context(|| format!("an MCP answer: {text}"))?;
        match answer.get("result") {
            Some(result) => Ok(result.clone()),
            None => bail!("{method}: {answer}"),
        }
    }

    async fn call(&self, tool: &str, id: u64) -> anyhow::Result<()> {
        let result = self.rpc("tools/call", Some(tool), json!({ "name": tool, "arguments": { "id": id } })).await?;
        if result["isError"] == true || result["content"][0]["text"].as_str().is_none_or(|t| !t.ends_with("ok")) {
            bail!("{tool}: {result}");
        }
        Ok(())
    }
}

/// `calls` sequential reads: their latencies and the rate.
async fn sequential(caller: &Caller, calls: usize) -> anyhow::Result<(Timings, f64)> {
    let mut times = Vec::with_capacity(calls);
    let start = Instant::now();
    for i in 0..calls {
        let one = Instant::now();
        caller.call("lookup", i as u64).await?;
        times.push(ms(one.elapsed()));
    }
    Ok((Timings(times), calls as f64 / start.elapsed().as_secs_f64()))
}

/// `clients` clients each making `each` reads at once: the latencies and the overall rate.
async fn concurrent(caller: &Caller, clients: usize, each: usize) -> anyhow::Result<(Timings, f64)> {
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let caller = caller.clone();
            tokio::spawn(async move {
                let mut times = Vec::with_capacity(each);
                for i in 0..each {
                    let one = Instant::now();
                    caller.call("lookup", (c * each + i) as u64).await?;
                    times.push(ms(one.elapsed()));
                }
                anyhow::Ok(times)
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await??);
    }
    Ok((Timings(all), (clients * each) as f64 / start.elapsed().as_secs_f64()))
}

/// `cycles` gated writes one after another, each approved over the API as soon as it waits.
async fn gated(server: &Server, caller: &Caller, cycles: usize) -> anyhow::Result<f64> {
    let start = Instant::now();
    for i in 0..cycles {
        let call = {
            let caller = caller.clone();
            tokio::spawn(async move { caller.call("update", i as u64).await })
        };
        let approval = loop {
            let pending: Value = server.get("/api/approvals?status=pending").await?.json().await?;
            if let Some(id) = pending[0]["id"].as_str() {
                break id.to_owned();
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        };
        server.post(&format!("/api/approvals/{approval}/approve"), json!({})).await?;
        call.await??;
    }
    Ok(cycles as f64 / start.elapsed().as_secs_f64())
}

pub async fn gateway(bin: &std::path::Path, sizes: &Sizes, report: &mut Report) -> anyhow::Result<()> {
    let upstream = upstream().await?;
    let agents = format!(
        "[[mcp_servers]]\nname = \"up\"\nurl = \"{upstream}\"\n\n[[agents]]\nname = \"gw\"\ntools = []\n\
         [[agents.mcp]]\nserver = \"up\"\ntools = [\"lookup\", \"update\"]\nrequire_approval = [\"update\"]\n"
    );
    let server = Server::start_with_agents(bin, &agents).await?;
    let gateway = format!("{}/mcp/gw", server.url);
    let (calls, clients, each, cycles) = sizes.gateway;
    let mut rows = Vec::new();
    let mut direct_p99 = f64::NAN;
    let mut checks = Vec::new();
    for (path, url, token, era) in [
        ("upstream, directly", &upstream, None, Era::Handshake),
        ("through the gateway", &gateway, Some(server.token.as_str()), Era::Handshake),
        ("upstream, directly", &upstream, None, Era::Modern),
        ("through the gateway", &gateway, Some(server.token.as_str()), Era::Modern),
    ] {
        let caller = Caller::new(url, token, era).await?;
        // A few calls first: connections open, the upstream connected. A failure names the
        // server's log, kept (its data dir goes with it).
        if let Err(err) = sequential(&caller, 5).await {
            let keep = std::env::temp_dir().join("countersign-bench-gateway.log");
            let _ = std::fs::copy(server.data_dir.path().join("server.log"), &keep);
            return Err(err.context(format!("the server's errors: {}", keep.display())));
        }
        let (one, rate_one) = sequential(&caller, calls).await?;
        let (many, rate_many) = concurrent(&caller, clients, each).await?;
        let gated = match token {
            Some(_) => format!("{:.1}", gated(&server, &caller, cycles).await?),
            None => "—".into(),
        };
        if token.is_none() {
            direct_p99 = one.pct(0.99);
        } else {
            checks.push((era, one.pct(0.99) - direct_p99, rate_many));
        }
        rows.push(vec![
            path.into(),
            era.name().into(),
            one.summary(),
            format!("{rate_one:.0}"),
            format!("{:.2} / {:.2}", many.pct(0.5), many.pct(0.99)),
            format!("{rate_many:.0}"),
            gated,
        ]);
    }
    report.section(
        &format!(
            "MCP gateway: an ungated read ({calls} calls at 1 client, {clients} clients × {each}), and gated cycles ({cycles} in a row)"
        ),
        &[
            "path",
            "revision",
            "1 client ms p50/p99/max",
            "calls/s at 1",
            &format!("{clients} clients ms p50/p99"),
            &format!("calls/s at {clients}"),
            "gated cycles/s",
        ],
        rows,
    );
    let why = "docs/performance-notes.md, \"The MCP gateway\"";
    let mut lines = Vec::new();
    for (era, added, rate) in checks {
        lines.push(target_line(&format!("{} ungated read: p99 added by the gateway at 1 client", era.name()), added, "ms", 1.0, why));
        lines.push(if rate >= 2000.0 {
            format!("- Target {} ungated reads at {clients} clients ≥ 2000 calls/s: **met** ({rate:.0})", era.name())
        } else {
            format!("- Target {} ungated reads at {clients} clients ≥ 2000 calls/s: **not met** ({rate:.0}); why: {why}", era.name())
        });
    }
    report.lines(lines);
    Ok(())
}
