//! The REST API and SSE routes, one module per resource, merged into one router.

pub(crate) mod access;
mod agents;
pub(crate) mod approvals;
mod audit;
mod conversations;
mod delegations;
mod event_stream;
mod extract;
mod grants;
mod groups;
mod health;
mod links;
mod metrics;
pub mod openapi;
mod orders;
pub(crate) mod policy;
mod queue;
mod resume;
pub mod session;
mod shadow_hits;
pub(crate) mod tasks;
mod tokens;
mod users;

use axum::{Router, routing::any};
use utoipa::OpenApi;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{error::ApiError, state::AppState};

pub use extract::BodyLimit;

/// Refuses a NUL character (`%00`) anywhere in the path or query: no id or parameter has one,
/// and PostgreSQL text cannot hold it, so it would otherwise fail deep inside a query.
pub async fn refuse_nul(request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    use axum::response::IntoResponse;
    let uri = request.uri();
    let has_nul = |s: &str| s.as_bytes().windows(3).any(|w| w.eq_ignore_ascii_case(b"%00"));
    if has_nul(uri.path()) || uri.query().is_some_and(has_nul) {
        return ApiError::BadRequest("the URL may not contain NUL characters (%00)".into()).into_response();
    }
    next.run(request).await
}

/// Closes the connection after a 413: the body was left unread, so the connection cannot carry
/// another request, and saying so keeps a client from sending its next one down it (it would
/// find the connection closed under it).
pub async fn close_after_too_large(request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let mut response = next.run(request).await;
    if response.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        response.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
    }
    response
}

/// Every documented route: each handler is routed and described by the same call
/// (`OpenApiRouter::routes`), so `openapi::document()` lists exactly these.
fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(health::router())
        .merge(conversations::router())
        .merge(approvals::router())
        .merge(tasks::router())
        .merge(orders::router())
        .merge(agents::router())
        .routes(routes!(openapi::serve))
        .merge(session::router())
        .merge(tokens::router())
        .merge(users::router())
        .merge(audit::router())
        .merge(queue::router())
        .merge(grants::router())
        .merge(groups::router())
        .merge(policy::router())
        .merge(delegations::router())
        .merge(links::router())
        .merge(shadow_hits::router())
        .merge(metrics::router())
}

pub fn router() -> Router<AppState> {
    let (router, _document) = routes().split_for_parts();
    router
        // Unknown API paths get the JSON error shape, not the app's HTML 404 page.
        .route("/api/{*rest}", any(|| async { ApiError::NotFound("no such API route".into()) }))
        // A known path with a method it does not take: 405 in the JSON error shape too (axum keeps
        // the Allow header).
        .method_not_allowed_fallback(|method: axum::http::Method| async move {
            ApiError::MethodNotAllowed(format!("this route does not take {method}"))
        })
}
