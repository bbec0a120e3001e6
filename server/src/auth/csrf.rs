//! Cross-site request refusal for cookie-authenticated state changes. Browsers mark every
//! request with `Sec-Fetch-Site` (and cross-origin POSTs with `Origin`); a bearer token cannot be
//! sent by another site, so requests a token authenticated pass — only those: any other
//! `Authorization` header leaves the cookie in charge, and the check applies.

use axum::{
    extract::Request,
    http::{HeaderMap, Method, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::error::ApiError;

/// Refuses a cross-site state change: in the API's words, or as a page for the HTML forms
/// (docs/api.md, "Deciding without JavaScript"), whose senders are browsers.
pub async fn same_origin_only(req: Request, next: Next) -> Response {
    if !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS)
        && req.extensions().get::<super::ByToken>().is_none()
        && is_cross_site(req.headers())
    {
        let refusal = ApiError::Forbidden("cross-site requests are refused".into());
        return if req.uri().path().starts_with("/forms/") {
            crate::forms::refused_as("Not decided: sent from another site", refusal, "/")
        } else {
            refusal.into_response()
        };
    }
    next.run(req).await
}

fn is_cross_site(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return !matches!(site, "same-origin" | "none");
    }
    match (headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()), headers.get(header::HOST).and_then(|v| v.to_str().ok())) {
        (Some(origin), Some(host)) => origin.split("://").nth(1) != Some(host),
        (Some(_), None) => true,
        // No browser marker at all: a script or CLI, which another site cannot drive.
        (None, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn fetch_metadata_decides_when_present() {
        assert!(is_cross_site(&headers(&[("sec-fetch-site", "cross-site")])));
        assert!(is_cross_site(&headers(&[("sec-fetch-site", "same-site")])));
        assert!(!is_cross_site(&headers(&[("sec-fetch-site", "same-origin")])));
    }

    #[test]
    fn origin_must_match_host() {
        assert!(is_cross_site(&headers(&[("origin", "https://evil.example"), ("host", "cs.example")])));
        assert!(!is_cross_site(&headers(&[("origin", "https://cs.example"), ("host", "cs.example")])));
    }

    #[test]
    fn a_request_without_browser_markers_is_not_cross_site() {
        assert!(!is_cross_site(&headers(&[("host", "cs.example")])));
    }
}
