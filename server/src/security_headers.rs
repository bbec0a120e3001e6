//! Security headers on every response (OWASP ASVS 14.4): a Content-Security-Policy that allows
//! only this site's scripts plus the page's own inline hydration script, which carries a fresh
//! nonce per response; no framing (the queue's `a` key approves, so a framed queue could be
//! clicked through); no MIME sniffing; no referrer leaving the site.
//!
//! The nonce is made here, before the page renders, and handed to Leptos through the request
//! (`pages::nonce_context`), so the header and the `<script nonce>` always agree.

use std::sync::Arc;

use axum::{
    extract::Request,
    http::{HeaderName, HeaderValue, header},
    middleware::Next,
    response::Response,
};

/// This response's CSP nonce, as a request extension.
#[derive(Clone, Debug)]
pub struct CspNonce(pub Arc<str>);

/// The policy for a response whose inline scripts carry `nonce`. `wasm-unsafe-eval` lets the page
/// compile its WebAssembly (and nothing else: no `eval`); `img-src data:` is the empty favicon.
pub fn policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

pub async fn add(mut request: Request, next: Next) -> Response {
    let nonce: Arc<str> = hex::encode(rand::random::<[u8; 16]>()).into();
    request.extensions_mut().insert(CspNonce(nonce.clone()));
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let set = |headers: &mut axum::http::HeaderMap, name: HeaderName, value: &str| {
        headers.insert(name, HeaderValue::from_str(value).expect("BUG: header values are ASCII"));
    };
    set(headers, header::CONTENT_SECURITY_POLICY, &policy(&nonce));
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::REFERRER_POLICY, "same-origin");
    set(headers, HeaderName::from_static("cross-origin-opener-policy"), "same-origin");
    response
}
