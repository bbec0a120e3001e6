//! `GET /api/openapi.json`: the OpenAPI document of the whole API (kept beside the code and
//! checked against the router by a test).

use axum::{Router, http::header, response::IntoResponse, routing::get};

use crate::state::AppState;

pub const DOCUMENT: &str = include_str!("openapi.json");

pub fn router() -> Router<AppState> {
    Router::new().route("/api/openapi.json", get(|| async { ([(header::CONTENT_TYPE, "application/json")], DOCUMENT).into_response() }))
}
