//! `GET /api/agents`: the configured agents a new conversation can talk to.

use app::domain::wire::AgentInfo;
use axum::{Json, Router, extract::State, routing::get};

use crate::{auth::CurrentUser, state::AppState};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/agents", get(list))
}

async fn list(State(state): State<AppState>, _user: CurrentUser) -> Json<Vec<AgentInfo>> {
    let agents = state.orchestrator.agents().agents.iter();
    Json(agents.map(|a| AgentInfo { name: a.name.clone(), description: a.description.clone(), delegates: a.delegates.clone() }).collect())
}
