//! The one error type of the API, which auth, the forms and the protocols answer with too. Every
//! failure leaves as `{"error": {"code", "message", "details"?}}`.

use axum::{
    Json,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use domain::wire::FieldProblem;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    MethodNotAllowed(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{message}")]
    Unprocessable { message: String, details: Vec<FieldProblem> },
    #[error("{message}")]
    TooManyRequests { message: String, retry_after_secs: u64 },
    /// The server is saturated for a moment (503 with `Retry-After`).
    #[error("{message}")]
    Busy { message: String, retry_after_secs: u64 },
    /// Anything unexpected: logged in full, answered without detail.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl ApiError {
    /// A 422 about one field, with the same `details` shape as schema violations.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::Unprocessable { details: vec![FieldProblem::new(format!("/{field}"), message.clone())], message }
    }

    /// The HTTP status it is answered with.
    pub fn status(&self) -> StatusCode {
        self.status_and_code().0
    }

    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            Self::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            Self::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "unauthorized"),
            Self::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            Self::MethodNotAllowed(_) => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            Self::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
            Self::PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            Self::UnsupportedMediaType(_) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"),
            Self::Unprocessable { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "unprocessable"),
            Self::TooManyRequests { .. } => (StatusCode::TOO_MANY_REQUESTS, "too_many_requests"),
            Self::Busy { .. } => (StatusCode::SERVICE_UNAVAILABLE, "busy"),
            Self::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

/// The body of every error answer (named `Error` in the OpenAPI document).
#[derive(serde::Serialize, utoipa::ToSchema)]
#[schema(as = Error)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// Stable and machine-readable: `not_found`, `conflict`, `unprocessable`…
    pub code: String,
    /// For people.
    pub message: String,
    /// For `unprocessable`, always a list: one `{path, message}` per problem (`path` is a JSON
    /// pointer into the body or the query, `""` for the whole of it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Vec<FieldProblem>>,
}

/// The failures a read can answer with, as documented on every GET of the API (one set, so a
/// handler's documentation cannot drift from the others').
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // Only its derive is used: the responses it documents.
pub enum ReadErrors {
    #[response(status = 400, description = "Malformed request (e.g. a NUL character in the path or query)")]
    BadRequest(ErrorBody),
    #[response(status = 401, description = "Not logged in: no valid session or API token")]
    Unauthorized(ErrorBody),
    #[response(status = 403, description = "Not allowed for this user")]
    Forbidden(ErrorBody),
    #[response(status = 404, description = "No such resource, or not yours")]
    NotFound(ErrorBody),
    #[response(status = 422, description = "Invalid query parameters; `details` lists each problem")]
    Unprocessable(ErrorBody),
}

/// The failures a change can answer with, as documented on every POST, PUT, PATCH and DELETE.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // Only its derive is used: the responses it documents.
pub enum WriteErrors {
    #[response(status = 400, description = "Malformed request: JSON that does not parse, or a NUL character in the path or query")]
    BadRequest(ErrorBody),
    #[response(status = 401, description = "Not logged in: no valid session or API token")]
    Unauthorized(ErrorBody),
    #[response(status = 403, description = "Not allowed for this user")]
    Forbidden(ErrorBody),
    #[response(status = 404, description = "No such resource, or not yours")]
    NotFound(ErrorBody),
    #[response(status = 409, description = "Conflict: the resource is no longer in a state that allows this")]
    Conflict(ErrorBody),
    #[response(status = 413, description = "The body is too large")]
    PayloadTooLarge(ErrorBody),
    #[response(status = 415, description = "The body is not JSON")]
    UnsupportedMediaType(ErrorBody),
    #[response(status = 422, description = "Invalid input; `details` lists each problem as `{path, message}`; nothing changed")]
    Unprocessable(ErrorBody),
    #[response(status = 429, description = "Too many attempts; see Retry-After")]
    TooManyRequests(ErrorBody),
    #[response(status = 503, description = "Busy for a moment; nothing changed; see Retry-After")]
    Busy(ErrorBody),
}

/// Builds the JSON error body every error response uses.
pub fn error_body(code: &str, message: &str, details: Option<&[FieldProblem]>) -> Value {
    let body = ErrorBody { error: ErrorDetail { code: code.to_owned(), message: message.to_owned(), details: details.map(<[_]>::to_vec) } };
    serde_json::to_value(body).expect("BUG: an error body serializes")
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        if let Self::Internal(err) = &self
            && let Some(why) = rolled_back_for_a_moment(err)
        {
            tracing::warn!(error = ?err, "{why}; answered 503");
            let busy = Self::Busy { message: format!("{why}; try again"), retry_after_secs: 1 };
            return busy.into_response();
        }
        let (message, details) = match &self {
            Self::Internal(err) => {
                tracing::error!(error = ?err, "internal error");
                ("internal server error".to_owned(), None)
            }
            Self::Unprocessable { message, details } => (message.clone(), Some(details.as_slice())),
            other => (other.to_string(), None),
        };
        let mut response = (status, Json(error_body(code, &message, details))).into_response();
        if let Self::TooManyRequests { retry_after_secs, .. } | Self::Busy { retry_after_secs, .. } = self {
            response.headers_mut().insert(axum::http::header::RETRY_AFTER, retry_after_secs.into());
        }
        response
    }
}

/// Why the database refused the request's work for a moment, when it did so in a way that
/// certainly rolled the failed write back (the statement or its transaction; or no connection
/// was had): a lock not granted within `lock_timeout`, a transaction ended by
/// `idle_in_transaction_session_timeout` (its replica froze, docs/reliability.md), a
/// serialization failure or deadlock, SQLite's lock still busy after its timeout, or no pool
/// connection in time. The client may simply retry (503 with `Retry-After`). A connection lost
/// during a commit is not among them: whether that commit happened is unknown.
pub fn rolled_back_for_a_moment(err: &anyhow::Error) -> Option<&'static str> {
    err.chain().find_map(|cause| match cause.downcast_ref::<sqlx::Error>()? {
        sqlx::Error::PoolTimedOut => Some("the database had no free connection in time"),
        sqlx::Error::Database(db) => match db.code()?.as_ref() {
            // PostgreSQL's SQLSTATEs.
            "55P03" => Some("a lock the request needed was held too long by another request"),
            "25P03" => Some("the request's transaction was ended for being idle too long"),
            "40001" | "40P01" => Some("the request conflicted with a concurrent one"),
            // SQLite's primary result codes (sqlx reports the extended code: busy 5, 261, 517).
            code if code.parse::<i32>().is_ok_and(|c| c & 0xff == 5 || c & 0xff == 6) => Some("the database was busy with another write"),
            _ => None,
        },
        _ => None,
    })
}

/// The engine's failures as HTTP says them.
impl From<crate::EngineError> for ApiError {
    fn from(err: crate::EngineError) -> Self {
        use crate::EngineError as E;
        match err {
            E::Unknown(m) => Self::NotFound(m),
            E::NotAllowed(m) => Self::Forbidden(m),
            E::WrongState(m) => Self::Conflict(m),
            err @ E::TurnUnfinished(_) => Self::Conflict(err.to_string()),
            E::Invalid { message, details } => Self::Unprocessable { message, details },
            E::Limited { message, retry_after_secs } => Self::TooManyRequests { message, retry_after_secs },
            // Only a task's driver writes under a lease, never a request.
            err @ E::LeaseLost(_) => Self::Internal(err.into()),
            E::Internal(e) => Self::Internal(e),
        }
    }
}
