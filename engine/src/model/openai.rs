//! An OpenAI-compatible chat completions client (OpenAI, Ollama, vLLM, llama.cpp server,
//! LM Studio): tool calling, streamed replies (tool-call arguments assembled across chunks),
//! and retries with backoff on 429, 5xx and connection errors.

use std::{collections::BTreeMap, time::Duration};

use anyhow::{Context, bail};
use async_trait::async_trait;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value, json};

use domain::wire::Usage;

use super::{ChatMessage, Model, ModelReply, ModelRequest, ProposedCall, TextSink};

pub struct OpenAiModel {
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    temperature: Option<f64>,
    max_retries: u32,
}

impl OpenAiModel {
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        temperature: Option<f64>,
        max_retries: u32,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder().timeout(timeout).build().context("cannot build the HTTP client")?;
        Ok(Self {
            client,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            model: model.to_owned(),
            api_key,
            temperature,
            max_retries,
        })
    }

    fn body(&self, request: &ModelRequest<'_>) -> Value {
        let mut messages = vec![json!({ "role": "system", "content": request.agent.system_prompt })];
        messages.extend(request.messages.iter().map(wire_message));
        // `include_usage` puts the token counts in a last chunk; log-probabilities are asked for
        // only when a confidence gate will read them (docs/config.md, "Confidence").
        let mut body = json!({ "model": self.model, "messages": messages, "stream": true, "stream_options": { "include_usage": true } });
        if request.agent.wants_confidence() {
            body["logprobs"] = json!(true);
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({ "type": "function", "function": { "name": t.name, "description": t.description, "parameters": t.input_schema } }))
                .collect();
        }
        if let Some(t) = self.temperature {
            body["temperature"] = json!(t);
        }
        body
    }

    /// One attempt. `Err((retryable, error))`.
    async fn attempt(&self, body: &Value, on_text: Option<&TextSink>) -> Result<ModelReply, (Option<Duration>, anyhow::Error)> {
        let mut http = self.client.post(&self.url).json(body);
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
        }
        let backoff = Some(Duration::ZERO);
        let response = http.send().await.map_err(|e| (backoff, anyhow::anyhow!("cannot reach the model at {}: {e}", self.url)))?;
        let status = response.status();
        if status == 429 || status.is_server_error() {
            let wait =
                response.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok()).map(Duration::from_secs);
            let text = response.text().await.unwrap_or_default();
            return Err((Some(wait.unwrap_or(Duration::ZERO)), anyhow::anyhow!("the model answered {status}: {}", short(&text))));
        }
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            return Err((None, anyhow::anyhow!("the model answered {status}: {}", short(&text))));
        }
        let is_stream =
            response.headers().get("content-type").and_then(|v| v.to_str().ok()).is_some_and(|c| c.starts_with("text/event-stream"));
        if !is_stream {
            let value: Value = response.json().await.map_err(|e| (backoff, anyhow::anyhow!("unreadable answer from the model: {e}")))?;
            return Ok(from_response(&value));
        }
        let mut assembly = Assembly::default();
        let mut events = response.bytes_stream().eventsource();
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| (backoff, anyhow::anyhow!("the model's stream broke: {e}")))?;
            if event.data.trim() == "[DONE]" {
                break;
            }
            let chunk: Value =
                serde_json::from_str(&event.data).map_err(|e| (None, anyhow::anyhow!("unreadable chunk from the model: {e}")))?;
            if let Some(message) = chunk["error"]["message"].as_str() {
                return Err((None, anyhow::anyhow!("the model reported an error: {message}")));
            }
            let delta = &chunk["choices"][0]["delta"];
            if let (Some(sink), Some(text)) = (on_text, delta["content"].as_str().filter(|t| !t.is_empty())) {
                sink(assembly.text.len(), text);
            }
            assembly.add(delta);
            assembly.measure(&chunk);
        }
        Ok(assembly.finish())
    }
}

fn short(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() > 300 { format!("{}…", text.chars().take(300).collect::<String>()) } else { text.to_owned() }
}

#[async_trait]
impl Model for OpenAiModel {
    async fn respond(&self, request: &ModelRequest<'_>) -> anyhow::Result<ModelReply> {
        let body = self.body(request);
        let mut attempt = 0;
        loop {
            match self.attempt(&body, request.on_text).await {
                Ok(reply) => return Ok(reply),
                Err((Some(wait), err)) if attempt < self.max_retries => {
                    let backoff = Duration::from_millis(200 * 2u64.pow(attempt)).max(wait).min(Duration::from_secs(20));
                    tracing::warn!(attempt, error = %err, ?backoff, "model request failed; retrying");
                    tokio::time::sleep(backoff).await;
                    attempt += 1;
                }
                Err((_, err)) => bail!("{err:#}"),
            }
        }
    }
}

/// A transcript message in the chat completions wire format.
fn wire_message(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::User { text } => json!({ "role": "user", "content": text }),
        ChatMessage::Assistant { text, calls } => {
            let mut m = json!({ "role": "assistant", "content": text });
            if !calls.is_empty() {
                m["tool_calls"] = calls
                    .iter()
                    .map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.tool, "arguments": c.args.to_string() } }))
                    .collect();
            }
            m
        }
        ChatMessage::ToolResult { call_id, output, note, .. } => {
            let content = match note {
                Some(note) => format!("{output}\n{note}"),
                None => output.to_string(),
            };
            json!({ "role": "tool", "tool_call_id": call_id, "content": content })
        }
        ChatMessage::AnswerRejected { draft, reason } => {
            let why = reason.as_deref().map(|r| format!(" (reason: {})", super::clause(r))).unwrap_or_default();
            json!({ "role": "user", "content": format!(
                "A reviewer did not let your answer reach the user{why}. Your answer was:\n\n{draft}\n\nWrite a better answer."
            ) })
        }
    }
}

/// Arguments that are not JSON are kept as text so the schema check reports them.
fn parse_args(text: &str) -> Value {
    if text.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(text).unwrap_or_else(|_| json!({ "_unparsable_arguments": text }))
}

fn call_id(id: Option<&str>) -> String {
    id.filter(|i| !i.is_empty()).map(str::to_owned).unwrap_or_else(|| format!("call_{}", uuid::Uuid::now_v7().simple()))
}

/// A whole (non-streamed) response.
fn from_response(response: &Value) -> ModelReply {
    let message = &response["choices"][0]["message"];
    let mut measures = Measures::default();
    measures.add(response);
    let confidence = measures.confidence();
    let calls = message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| ProposedCall {
            id: call_id(c["id"].as_str()).into(),
            tool: c["function"]["name"].as_str().unwrap_or_default().to_owned(),
            args: parse_args(c["function"]["arguments"].as_str().unwrap_or_default()),
            confidence,
        })
        .collect();
    ModelReply { text: message["content"].as_str().map(str::to_owned).filter(|t| !t.is_empty()), calls, usage: measures.usage }
}

/// What a response says about itself besides the message: token counts (`usage`) and the
/// log-probabilities of its tokens, when the endpoint returns them.
#[derive(Default)]
struct Measures {
    usage: Option<Usage>,
    logprob_sum: f64,
    tokens: usize,
}

impl Measures {
    /// Reads a response or one streamed chunk (usage comes in the last chunk, with no choices).
    fn add(&mut self, chunk: &Value) {
        if let (Some(input), Some(output)) = (chunk["usage"]["prompt_tokens"].as_u64(), chunk["usage"]["completion_tokens"].as_u64()) {
            self.usage = Some(Usage { input_tokens: input, output_tokens: output, cost_usd: None });
        }
        for token in chunk["choices"][0]["logprobs"]["content"].as_array().into_iter().flatten() {
            if let Some(logprob) = token["logprob"].as_f64() {
                self.logprob_sum += logprob;
                self.tokens += 1;
            }
        }
    }

    /// The geometric mean of the tokens' probabilities: exp(mean log-probability). None when
    /// the endpoint returned no log-probabilities (OpenAI returns none for tool-call tokens).
    fn confidence(&self) -> Option<f64> {
        (self.tokens > 0).then(|| (self.logprob_sum / self.tokens as f64).exp())
    }
}

/// Streamed deltas put back together: text appended, tool calls gathered by their `index`.
#[derive(Default)]
struct Assembly {
    text: String,
    calls: BTreeMap<u64, (Option<String>, String, String)>,
    measures: Measures,
}

impl Assembly {
    fn measure(&mut self, chunk: &Value) {
        self.measures.add(chunk);
    }

    fn add(&mut self, delta: &Value) {
        if let Some(text) = delta["content"].as_str() {
            self.text.push_str(text);
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap_or(0);
            let entry = self.calls.entry(index).or_default();
            if let Some(id) = call["id"].as_str() {
                entry.0 = Some(id.to_owned());
            }
            if let Some(name) = call["function"]["name"].as_str() {
                entry.1.push_str(name);
            }
            if let Some(args) = call["function"]["arguments"].as_str() {
                entry.2.push_str(args);
            }
        }
    }

    fn finish(self) -> ModelReply {
        let confidence = self.measures.confidence();
        let calls = self
            .calls
            .into_values()
            .map(|(id, tool, args)| ProposedCall { id: call_id(id.as_deref()).into(), tool, args: parse_args(&args), confidence })
            .collect();
        ModelReply { text: (!self.text.trim().is_empty()).then_some(self.text), calls, usage: self.measures.usage }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_arguments_split_across_chunks_are_joined() {
        let mut a = Assembly::default();
        a.add(&json!({ "role": "assistant", "content": "On it. " }));
        a.add(&json!({ "tool_calls": [{ "index": 0, "id": "call_1", "type": "function", "function": { "name": "process_refund", "arguments": "{\"order" } }] }));
        a.add(&json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "_id\": 10" } }] }));
        a.add(&json!({ "tool_calls": [{ "index": 1, "id": "call_2", "function": { "name": "get_order", "arguments": "{\"order_id\":1002}" } }] }));
        a.add(&json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "01}" } }] }));
        let reply = a.finish();
        assert_eq!(reply.text.as_deref(), Some("On it. "));
        assert_eq!(reply.calls.len(), 2);
        assert_eq!((reply.calls[0].id.as_str(), reply.calls[0].tool.as_str()), ("call_1", "process_refund"));
        assert_eq!(reply.calls[0].args, json!({ "order_id": 1001 }));
        assert_eq!(reply.calls[1].args, json!({ "order_id": 1002 }));
        assert_eq!((reply.usage, reply.calls[0].confidence), (None, None), "nothing measured, nothing made up");
    }

    #[test]
    fn usage_and_log_probabilities_become_token_counts_and_a_confidence() {
        let mut a = Assembly::default();
        a.add(&json!({ "tool_calls": [{ "index": 0, "id": "c", "function": { "name": "get_order", "arguments": "{}" } }] }));
        let ln_half = 0.5f64.ln();
        a.measure(&json!({ "choices": [{ "delta": {}, "logprobs": { "content": [{ "token": "a", "logprob": 0.0 }, { "token": "b", "logprob": 2.0 * ln_half }] } }] }));
        a.measure(&json!({ "choices": [], "usage": { "prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127 } }));
        let reply = a.finish();
        assert_eq!(reply.usage, Some(Usage { input_tokens: 120, output_tokens: 7, cost_usd: None }));
        let confidence = reply.calls[0].confidence.unwrap();
        assert!((confidence - 0.5).abs() < 1e-9, "exp(mean(0, 2 ln 0.5)) = 0.5, got {confidence}");
    }

    #[test]
    fn unparsable_arguments_are_kept_for_the_schema_check() {
        assert_eq!(parse_args("{oops"), json!({ "_unparsable_arguments": "{oops" }));
        assert_eq!(parse_args(""), json!({}));
    }
}
