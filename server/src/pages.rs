//! The server-rendered pages: Leptos routes, generated once per process, each render bounded by
//! a deadline so a page can never stream forever.

use std::{sync::LazyLock, time::Duration};

use axum::{
    Router,
    extract::Request,
    http::{StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use leptos_axum::{AxumRouteListing, LeptosRoutes, generate_route_list};

use crate::state::AppState;

/// How long a page may take to render before the browser gets an error page instead.
/// A page reads a few rows; seconds mean something is stuck, and an unfinished page would
/// leave the browser showing half a page forever.
pub const RENDER_DEADLINE: Duration = Duration::from_secs(10);

/// The app's page routes, generated once per process.
///
/// Generating them runs the app once with leptos_server's *process-wide* "suppress resource
/// loads" flag set (`SuppressResourceLoad`); a page whose data load first polls while that flag
/// is up waits forever. Generating the list once, before any server of this process serves a
/// page, closes that window (it made `./x test` hang: each test starts a server while others
/// render pages). See docs/reliability.md, "Every page finishes".
fn routes() -> Vec<AxumRouteListing> {
    static ROUTES: LazyLock<Vec<AxumRouteListing>> = LazyLock::new(|| generate_route_list(app::App));
    ROUTES.clone()
}

/// The page routes with their data source, behind the render deadline.
pub fn router(state: &AppState) -> Router<AppState> {
    let data = crate::page_data::data_source(
        state.config.page_items,
        state.task_driver.agents().version.clone(),
        crate::auth::oidc::options(state.oidc.as_deref()),
        crate::api::policy::live_policy(state),
        state.started_ms,
        state.reads.clone(),
    );
    let options = state.leptos_options.clone();
    Router::new()
        .leptos_routes_with_context(
            state,
            routes(),
            move || {
                leptos::prelude::provide_context(data.clone());
                nonce_context();
            },
            move || app::shell(options.clone()),
        )
        .layer(middleware::from_fn(render_within_deadline))
        .layer(middleware::from_fn_with_state(state.clone(), with_delegations))
}

async fn with_delegations(axum::extract::State(state): axum::extract::State<AppState>, mut request: Request, next: Next) -> Response {
    let user = request.extensions().get::<crate::auth::MaybeUser>().and_then(|v| v.0.clone());
    if let Some(user) = user.filter(|u| !u.is_admin()) {
        match state.reads.stands_in_for(&user.username).await {
            Ok(people) => {
                request.extensions_mut().insert(crate::page_data::StandsInFor(people));
            }
            // The page still renders; the server checks every decision anyway.
            Err(err) => tracing::warn!(error = ?err, "could not read delegations for a page"),
        }
    }
    next.run(request).await
}

/// Renders with the CSP nonce `security_headers` chose for this response (instead of the one
/// leptos_axum makes, which the header could not know), so the hydration script may run.
pub fn nonce_context() {
    use leptos::prelude::{provide_context, use_context};
    let nonce = use_context::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<crate::security_headers::CspNonce>().cloned());
    if let Some(nonce) = nonce {
        provide_context(leptos::nonce::Nonce::from_value(nonce.0));
    }
}

/// Answers 503 with a short page when a render takes longer than [`RENDER_DEADLINE`]. Pages
/// render whole before the response starts (`SsrMode::Async`), so the deadline covers the body.
async fn render_within_deadline(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    match tokio::time::timeout(RENDER_DEADLINE, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            tracing::error!(path, deadline_ms = RENDER_DEADLINE.as_millis() as u64, "page render missed its deadline");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::RETRY_AFTER, "1")],
                "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Countersign</title></head>\
                 <body><h1>This page took too long</h1><p>The server could not finish the page in time. \
                 Nothing was lost: <a href=\"\">reload</a> to try again.</p></body></html>",
            )
                .into_response()
        }
    }
}
