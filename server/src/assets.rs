//! The browser bundle (JS, WASM, CSS in `<site root>/pkg`) under a path named by a hash of its
//! contents, `/pkg/<build>/…`, cached for good (`immutable`): a new release has a new path, so a
//! browser can never run an old bundle against a new page. Pages and API answers are never
//! cached, and every answer names the server's build (`x-countersign-build`): a page loaded
//! before an upgrade sees that it differs and offers a reload (app/src/session.rs). See
//! docs/architecture.md, "The bundle".

use std::path::{Path, PathBuf};

use axum::{
    Router,
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
    routing::get,
};
use sha2::{Digest, Sha256};
use tower::ServiceExt;
use tower_http::services::ServeDir;

use crate::state::AppState;

/// The header every answer carries with the server's build id.
pub const BUILD_HEADER: &str = "x-countersign-build";

/// The files whose contents name the build.
const BUNDLE: [&str; 3] = ["js", "wasm", "css"];

/// A short hash of the bundle's files; `"none"` when the site has no bundle (an API-only server).
pub fn build_id(site_root: &Path) -> String {
    let mut hasher = Sha256::new();
    let mut found = false;
    for ext in BUNDLE {
        if let Ok(bytes) = std::fs::read(site_root.join("pkg").join(format!("{}.{ext}", app::OUTPUT_NAME))) {
            hasher.update(ext.as_bytes());
            hasher.update(&bytes);
            found = true;
        }
    }
    if !found {
        return "none".into();
    }
    hex::encode(&hasher.finalize()[..8])
}

/// `/pkg/<build>/<file>`: the bundle of this build, cached for good; another build's path is 404
/// (its files are gone; the page that asked offers a reload).
pub fn router() -> Router<AppState> {
    Router::new().route("/pkg/{build}/{file}", get(serve))
}

async fn serve(
    State(state): State<AppState>,
    axum::extract::Path((build, file)): axum::extract::Path<(String, String)>,
    request: Request,
) -> Response {
    if build != state.build_id.as_ref() {
        return (StatusCode::NOT_FOUND, "this bundle belongs to another build of Countersign: reload the page").into_response();
    }
    let pkg: PathBuf = Path::new(&*state.leptos_options.site_root).join("pkg");
    // ServeDir sees the file's own path (and sends a precompressed sibling when accepted).
    let (mut parts, body) = request.into_parts();
    parts.uri = match format!("/{file}").parse() {
        Ok(uri) => uri,
        Err(_) => return StatusCode::NOT_FOUND.into_response(),
    };
    let served = ServeDir::new(pkg).precompressed_gzip().precompressed_br().oneshot(Request::from_parts(parts, body)).await;
    let mut response = match served {
        Ok(response) => response.into_response(),
        Err(err) => return (StatusCode::INTERNAL_SERVER_ERROR, err.to_string()).into_response(),
    };
    if response.status().is_success() {
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    }
    response
}

/// Names the build on every answer, and keeps pages and API answers out of caches (only the
/// hashed bundle above may be cached).
pub async fn label(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    if let Ok(build) = HeaderValue::from_str(&state.build_id) {
        headers.insert(BUILD_HEADER, build);
    }
    headers.entry(header::CACHE_CONTROL).or_insert(HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_id_follows_the_bundles_contents() {
        let site = tempfile::tempdir().unwrap();
        assert_eq!(build_id(site.path()), "none");
        let pkg = site.path().join("pkg");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(pkg.join(format!("{}.wasm", app::OUTPUT_NAME)), b"one").unwrap();
        let first = build_id(site.path());
        assert_eq!(first.len(), 16);
        assert_eq!(build_id(site.path()), first, "the same files, the same id");
        std::fs::write(pkg.join(format!("{}.css", app::OUTPUT_NAME)), b"body{}").unwrap();
        assert_ne!(build_id(site.path()), first, "any file of the bundle changes it");
    }
}
