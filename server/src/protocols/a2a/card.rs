//! The agent card: one card for both A2A versions, as A2A 1.x's card allows. A 1.x client picks
//! the `1.0` entry of `supportedInterfaces` (listed first: the order is the preference); a 0.3
//! client reads the top-level `url`, `protocolVersion` and `preferredTransport`, which 0.3
//! requires and 1.x clients ignore when `supportedInterfaces` is there.

use axum::{
    Json,
    extract::{Path, State},
    http::header,
    response::{IntoResponse, Response},
};
use serde_json::json;

use crate::{error::ApiError, state::AppState};

pub async fn card(State(state): State<AppState>, Path(agent): Path<String>) -> Response {
    let Some(agent) = state.task_driver.agents().get(&agent) else {
        return ApiError::NotFound(format!("no agent named {agent:?}")).into_response();
    };
    let description = if agent.description.is_empty() {
        "A Countersign agent: its risky calls wait for a person's approval".to_owned()
    } else {
        agent.description.clone()
    };
    let url = format!("{}/a2a/{}", state.base_url, agent.name);
    let card = Json(json!({
        "name": agent.name,
        "description": description,
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": [
            { "url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0" },
            { "url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3" },
        ],
        "url": url,
        "protocolVersion": "0.3",
        "preferredTransport": "JSONRPC",
        "capabilities": { "streaming": true, "pushNotifications": false },
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{
            "id": "chat",
            "name": agent.name,
            "description": format!(
                "{description}. Send a text part; answer an approval request with a data part {{\"decision_type\": \"approve\" | \"reject\", \"reason\"?}}."
            ),
            "tags": ["countersign", "human-in-the-loop"],
        }],
    }));
    // The card changes only with the configuration: clients may keep it a while.
    ([(header::CACHE_CONTROL, "public, max-age=300")], card).into_response()
}
