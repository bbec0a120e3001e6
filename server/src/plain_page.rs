//! The server's own small pages, outside the Leptos app: a signed link's page (server/src/links)
//! and the no-JavaScript decision forms' pages (server/src/forms.rs). Plain HTML with the site's
//! stylesheet, never cached or indexed: each says what one moment knew.

use axum::{
    http::{StatusCode, header},
    response::{Html, IntoResponse, Response},
};

/// The bundle's build, whose stylesheet the pages use (`/pkg/<build>/…`, server/src/assets.rs).
/// Set once at start-up: these pages are written far from the app's state, and every server in
/// a process serves the same site.
static BUILD: std::sync::OnceLock<String> = std::sync::OnceLock::new();

pub fn use_build(build: &str) {
    let _ = BUILD.set(build.to_owned());
}

/// Text as HTML text or attribute value (these pages, the emails and the provider's logout page
/// are written by hand).
pub fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// A page: its status and its HTML.
pub struct Page(pub StatusCode, pub String);

impl IntoResponse for Page {
    fn into_response(self) -> Response {
        let mut response = (self.0, Html(self.1)).into_response();
        response.headers_mut().insert(header::CACHE_CONTROL, "no-store".parse().expect("BUG: valid header"));
        response.headers_mut().insert("x-robots-tag", "noindex".parse().expect("BUG: valid header"));
        response
    }
}

/// The page titled `title` around `body` (HTML the caller escaped).
pub fn page(status: StatusCode, title: &str, body: String) -> Page {
    Page(
        status,
        format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <link rel=\"icon\" href=\"data:,\"><title>{title} · Countersign</title><link rel=\"stylesheet\" href=\"/pkg/{build}/{css}.css\"></head>\
             <body><main><section class=\"card decide-link\" data-status=\"{code}\"><h1>{title}</h1>{body}</section></main></body></html>",
            title = escape_html(title),
            css = app::OUTPUT_NAME,
            build = BUILD.get().map_or("", String::as_str),
            code = status.as_u16(),
        ),
    )
}
