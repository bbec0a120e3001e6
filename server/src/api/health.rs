//! `GET /healthz`: is the process up and can it reach its database?

use axum::{Json, Router, extract::State, http::StatusCode, routing::get};
use serde_json::{Value, json};

use crate::{state::AppState, store::Store};

pub fn router() -> Router<AppState> {
    Router::new().route("/healthz", get(healthz))
}

#[tracing::instrument(skip_all)]
async fn healthz(State(store): State<Store>) -> (StatusCode, Json<Value>) {
    match store.ping().await {
        Ok(()) => (StatusCode::OK, Json(json!({ "status": "ok", "database": "ok", "version": env!("CARGO_PKG_VERSION") }))),
        Err(err) => {
            tracing::warn!(error = ?err, "health check failed");
            (StatusCode::SERVICE_UNAVAILABLE, Json(json!({ "status": "unavailable", "database": "unreachable" })))
        }
    }
}
