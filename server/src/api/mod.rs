//! The REST API and SSE routes, one module per resource, merged into one router.

mod agents;
mod approvals;
pub mod audit;
mod conversations;
mod grants;
pub mod error;
mod extract;
mod health;
pub mod openapi;
mod orders;
mod queue;
pub mod session;
mod stream;
mod tasks;
mod tokens;
mod users;

use axum::{Router, routing::any};

use crate::state::AppState;

pub use error::ApiError;

pub fn router() -> Router<AppState> {
    Router::new()
        .merge(health::router())
        .merge(stream::router())
        .merge(conversations::router())
        .merge(approvals::router())
        .merge(tasks::router())
        .merge(orders::router())
        .merge(agents::router())
        .merge(openapi::router())
        .merge(session::router())
        .merge(tokens::router())
        .merge(users::router())
        .merge(audit::router())
        .merge(queue::router())
        .merge(grants::router())
        .merge(crate::metrics::router())
        // Unknown API paths get the JSON error shape, not the app's HTML 404 page.
        .route("/api/{*rest}", any(|| async { ApiError::NotFound("no such API route".into()) }))
        // A known path with a method it does not take: 405 in the JSON error shape too (axum keeps
        // the Allow header).
        .method_not_allowed_fallback(|method: axum::http::Method| async move {
            ApiError::MethodNotAllowed(format!("this route does not take {method}"))
        })
}
