//! `GET /api/openapi.json`: the OpenAPI document of the whole API, generated from the code. Each
//! handler carries its `#[utoipa::path]` (method, path, summary, parameters, bodies, answers) and
//! the wire types derive `ToSchema`; `api::routes` registers every handler through
//! `OpenApiRouter::routes`, which routes it and documents it in the same call, so the document
//! lists exactly what is routed (server/tests/api/openapi.rs checks it against the router).

use std::sync::LazyLock;

use axum::http::header;
use utoipa::{
    Modify, OpenApi,
    openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme},
};

use crate::auth::SESSION_COOKIE;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Countersign API",
        description = "Human approval for AI agents' risky tool calls. Every error is {\"error\": {\"code\", \"message\", \"details\"?}}. Every route except /healthz, /readyz, /metrics, /api/openapi.json and logging in needs a session cookie or `Authorization: Bearer <token>`; another user's conversation, task or approval answers 404.",
        license(name = "MIT"),
    ),
    modifiers(&Credentials),
    security(("bearer" = []), ("session" = [])),
)]
pub struct ApiDoc;

/// The two ways to prove who you are.
struct Credentials;

impl Modify for Credentials {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("Personal API token (`countersign token create` or POST /api/tokens)"))
                    .build(),
            ),
        );
        components.add_security_scheme("session", SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(SESSION_COOKIE))));
    }
}

/// The document, built once from the routes.
static DOCUMENT: LazyLock<String> =
    LazyLock::new(|| super::routes().into_openapi().to_pretty_json().expect("BUG: the OpenAPI document serializes"));

/// The document as the router describes it (for tests and tools).
pub fn document() -> &'static str {
    &DOCUMENT
}

/// This document
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    operation_id = "openapi",
    tag = "service",
    responses(
        (status = 200, description = "The OpenAPI 3.1 document", body = Object),
        (status = 400, description = "Malformed request (e.g. a NUL character in the path or query)", body = crate::error::ErrorBody),
    ),
    security(()),
)]
pub async fn serve() -> ([(header::HeaderName, &'static str); 1], &'static str) {
    ([(header::CONTENT_TYPE, "application/json")], document())
}
