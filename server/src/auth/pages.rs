//! Pages need a logged-in user: anonymous page requests are sent to `/login?next=…`.

use axum::{
    extract::Request,
    http::{Method, header},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};

use super::MaybeUser;

/// `/decide/`: a signed decision link is its own credential (server/src/links).
/// `/a2a/`, `/mcp/`: agent cards, JSON-RPC and MCP, for other agents (server/src/protocols).
/// `/auth/`: signing in through the identity provider (server/src/auth/oidc/).
const PUBLIC: [&str; 10] = ["/api/", "/pkg/", "/healthz", "/readyz", "/metrics", "/login", "/decide/", "/a2a/", "/mcp/", "/auth/"];

pub async fn require_login(req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let anonymous = req.extensions().get::<MaybeUser>().is_none_or(|v| v.0.is_none());
    let is_page = matches!(*req.method(), Method::GET | Method::HEAD) && !PUBLIC.iter().any(|p| path.starts_with(p));
    if anonymous && is_page {
        let next_path = req.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/");
        let target = format!("/login?next={}", app::paths::query_value(next_path));
        let mut response = Redirect::to(&target).into_response();
        response.headers_mut().insert(header::CACHE_CONTROL, "no-store".parse().expect("BUG: valid header"));
        return response;
    }
    next.run(req).await
}
