//! `GET /api/agents`: the configured agents a new conversation can talk to.

use crate::error::ReadErrors;
use axum::{Json, extract::State};
use domain::wire::AgentInfo;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{auth::CurrentUser, state::AppState};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}

#[utoipa::path(
    get,
    path = "/api/agents",
    operation_id = "listAgents",
    tag = "agents",
    summary = "The configured agents (name, description, the workers it delegates to)",
    responses(
        (status = 200, description = "OK", body = Vec<AgentInfo>),
        ReadErrors,
    ),
)]
async fn list(State(state): State<AppState>, _user: CurrentUser) -> Json<Vec<AgentInfo>> {
    let agents = state.task_driver.agents().agents.iter();
    Json(agents.map(|a| AgentInfo { name: a.name.clone(), description: a.description.clone(), delegates: a.delegates.clone() }).collect())
}
