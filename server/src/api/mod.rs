//! The REST API and SSE routes, one module per resource, merged into one router.

pub mod error;
mod health;
mod stream;

use axum::Router;

use crate::state::AppState;

pub use error::ApiError;

pub fn router() -> Router<AppState> {
    Router::new().merge(health::router()).merge(stream::router())
}
