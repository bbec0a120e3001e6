//! Extractors whose rejections use the API's JSON error shape instead of axum's plain text.

use axum::{
    body::Bytes,
    extract::{
        FromRequest, FromRequestParts, OptionalFromRequest, Request,
        rejection::{JsonRejection, QueryRejection},
    },
    http::{StatusCode, request::Parts},
};
use domain::wire::FieldProblem;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// `Json<T>`: malformed JSON → 400, wrong types or missing fields → 422, too large → 413.
pub struct ApiJson<T>(pub T);

/// The largest body the app reads, in bytes (`COUNTERSIGN_BODY_LIMIT`, as `DefaultBodyLimit` is
/// set to it): in every request's extensions, so that a body refused as too large can say it.
#[derive(Clone, Copy, Debug)]
pub struct BodyLimit(pub usize);

/// The 413 of a body over `limit`, which it names when the request knows it.
fn too_large(limit: Option<BodyLimit>) -> ApiError {
    ApiError::PayloadTooLarge(match limit {
        Some(BodyLimit(bytes)) if bytes % 1024 == 0 => {
            format!("the request body is too large: at most {} KiB (COUNTERSIGN_BODY_LIMIT)", bytes / 1024)
        }
        Some(BodyLimit(bytes)) => format!("the request body is too large: at most {bytes} bytes (COUNTERSIGN_BODY_LIMIT)"),
        None => "the request body is too large".into(),
    })
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !req.headers().get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(is_json) {
            return Err(ApiError::UnsupportedMediaType("send Content-Type: application/json".into()));
        }
        match <Option<Self> as FromRequest<S>>::from_request(req, state).await? {
            Some(value) => Ok(value),
            None => Err(ApiError::BadRequest("the request body is empty; send a JSON object".into())),
        }
    }
}

fn has_nul(value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(has_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// An optional body (`Option<ApiJson<T>>`): empty means `None`; anything else must be valid JSON.
impl<S: Send + Sync, T: DeserializeOwned> OptionalFromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        let json_declared = req.headers().get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(is_json);
        let limit = req.extensions().get::<BodyLimit>().copied();
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE { too_large(limit) } else { ApiError::BadRequest(rejection.body_text()) }
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        // A body that is there must say it is JSON, as a required one must: a `text/plain` form
        // post (which a browser sends cross-site without asking) is not read as a decision.
        if !json_declared {
            return Err(ApiError::UnsupportedMediaType("send Content-Type: application/json with a body".into()));
        }
        // PostgreSQL text cannot hold NUL, and no field here needs one: refuse it up front
        // rather than fail deep inside a transaction.
        if bytes.windows(5).any(|w| w.eq_ignore_ascii_case(b"u0000"))
            && serde_json::from_slice::<serde_json::Value>(&bytes).is_ok_and(|v| has_nul(&v))
        {
            return Err(ApiError::invalid("", "text may not contain NUL characters (\\u0000)"));
        }
        match axum::Json::<T>::from_bytes(&bytes) {
            Ok(axum::Json(value)) => Ok(Some(Self(value))),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    let text = rejection.body_text();
    match rejection {
        JsonRejection::JsonDataError(_) => {
            ApiError::Unprocessable { message: "the request body has the wrong shape".into(), details: vec![problem_in(&text)] }
        }
        JsonRejection::JsonSyntaxError(_) => ApiError::BadRequest(format!("malformed JSON: {text}")),
        JsonRejection::MissingJsonContentType(_) => ApiError::UnsupportedMediaType("send Content-Type: application/json".into()),
        other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge("the request body is too large".into()),
        other => ApiError::BadRequest(other.body_text()),
    }
}

/// `Query<T>` with the JSON error shape (422 for a bad parameter).
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Self(value)),
            Err(rejection) => Err(query_rejection(rejection)),
        }
    }
}

fn query_rejection(rejection: QueryRejection) -> ApiError {
    ApiError::Unprocessable { message: "invalid query parameters".into(), details: vec![problem_in(&rejection.body_text())] }
}

/// axum's text for a value that did not deserialize (`Failed to deserialize …: grant.max_uses:
/// invalid type: string "x", expected u32 at line 1 column 30`) as a problem at a JSON pointer
/// (`/grant/max_uses`: `invalid type: string "x", expected u32`), the same shape as every other
/// 422. Without a path (a missing field, a wrong top-level type) the problem is the whole body's.
fn problem_in(text: &str) -> FieldProblem {
    let what = text.split_once(": ").map_or(text, |(_, rest)| rest);
    let what = match what.rfind(" at line ") {
        Some(at) if what[at..].contains(" column ") => &what[..at],
        _ => what,
    };
    match what.split_once(": ") {
        Some((path, message)) if !path.is_empty() && !path.contains(char::is_whitespace) => {
            let pointer: String =
                path.replace('[', ".").replace(']', "").split('.').filter(|s| !s.is_empty()).map(|s| format!("/{s}")).collect();
            FieldProblem::new(pointer, message)
        }
        _ => FieldProblem::new("", what),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_too_large_names_the_limit() {
        let said = |limit| too_large(limit).to_string();
        assert_eq!(said(Some(BodyLimit(64 * 1024))), "the request body is too large: at most 64 KiB (COUNTERSIGN_BODY_LIMIT)");
        assert_eq!(said(Some(BodyLimit(1000))), "the request body is too large: at most 1000 bytes (COUNTERSIGN_BODY_LIMIT)");
        assert_eq!(said(None), "the request body is too large");
    }

    #[test]
    fn a_deserialize_error_names_its_field_as_a_json_pointer() {
        let at = |text: &str| {
            let p = problem_in(text);
            (p.path, p.message)
        };
        let body = "Failed to deserialize the JSON body into the target type";
        assert_eq!(
            at(&format!("{body}: grant.max_uses: invalid type: string \"x\", expected u32 at line 1 column 30")),
            ("/grant/max_uses".into(), "invalid type: string \"x\", expected u32".into())
        );
        assert_eq!(at(&format!("{body}: steps[1].tool: invalid type: null")), ("/steps/1/tool".into(), "invalid type: null".into()));
        assert_eq!(at(&format!("{body}: missing field `reason` at line 1 column 2")), ("".into(), "missing field `reason`".into()));
        assert_eq!(
            at(&format!("{body}: invalid type: integer `5`, expected a map at line 1 column 1")),
            ("".into(), "invalid type: integer `5`, expected a map".into())
        );
        assert_eq!(
            at("Failed to deserialize query string: limit: invalid digit found in string"),
            ("/limit".into(), "invalid digit found in string".into())
        );
    }
}
