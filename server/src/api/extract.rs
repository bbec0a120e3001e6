//! Extractors whose rejections use the API's JSON error shape instead of axum's plain text.

use axum::{
    body::Bytes,
    extract::{FromRequest, FromRequestParts, OptionalFromRequest, Request, rejection::{JsonRejection, QueryRejection}},
    http::{StatusCode, request::Parts},
};
use serde::de::DeserializeOwned;
use serde_json::json;

use super::ApiError;

/// `Json<T>`: malformed JSON → 400, wrong types or missing fields → 422, too large → 413.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match <axum::Json<T> as FromRequest<S>>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

/// An optional body (`Option<ApiJson<T>>`): empty means `None`; anything else must be valid JSON.
impl<S: Send + Sync, T: DeserializeOwned> OptionalFromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge("the request body is too large".into())
            } else {
                ApiError::BadRequest(rejection.body_text())
            }
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
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
            ApiError::Unprocessable { message: "the request body has the wrong shape".into(), details: json!({ "reason": text }) }
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
    ApiError::Unprocessable { message: "invalid query parameters".into(), details: json!({ "reason": rejection.body_text() }) }
}
