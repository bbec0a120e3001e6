//! The browser's client of the REST API (gloo-net). Errors come back as the server's readable
//! message. On the server these calls are never made (handlers run only in the browser), so the
//! SSR build has stubs that say so.

use serde::{Serialize, de::DeserializeOwned};

use crate::domain::wire::FieldProblem;

/// A failed request, as a person should read it.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiFailure {
    pub status: u16,
    pub message: String,
    /// Schema violations of a 422, as `path: message` lines.
    pub details: Vec<String>,
}

impl std::fmt::Display for ApiFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Reads the API's `{"error": {"message", "details"}}` body.
pub fn failure_from_body(status: u16, body: &str) -> ApiFailure {
    let value: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let message = value["error"]["message"].as_str().map(str::to_owned).unwrap_or_else(|| format!("the server answered {status}"));
    let problems: Vec<FieldProblem> = serde_json::from_value(value["error"]["details"].clone()).unwrap_or_default();
    let details = problems.into_iter().map(|p| if p.path.is_empty() { p.message } else { format!("{}: {}", p.path, p.message) }).collect();
    ApiFailure { status, message, details }
}

#[cfg(feature = "hydrate")]
mod imp {
    use super::*;
    use gloo_net::http::{Request, Response};

    /// A successful answer's status and text, or the failure it says.
    async fn read_text(response: Result<Response, gloo_net::Error>) -> Result<(u16, String), ApiFailure> {
        let response =
            response.map_err(|e| ApiFailure { status: 0, message: format!("cannot reach the server ({e})"), details: vec![] })?;
        let status = response.status();
        crate::session::saw_build(response.headers().get(crate::session::BUILD_HEADER).as_deref());
        let text = response.text().await.unwrap_or_default();
        if status == 401 {
            crate::session::mark_ended();
        }
        if !(200..300).contains(&status) {
            return Err(failure_from_body(status, &text));
        }
        Ok((status, text))
    }

    async fn read<T: DeserializeOwned>(response: Result<Response, gloo_net::Error>) -> Result<T, ApiFailure> {
        let (status, text) = read_text(response).await?;
        serde_json::from_str(&text).map_err(|e| ApiFailure { status, message: format!("unexpected answer: {e}"), details: vec![] })
    }

    pub async fn get<T: DeserializeOwned>(path: &str) -> Result<T, ApiFailure> {
        read(Request::get(path).send().await).await
    }

    pub async fn post<B: Serialize, T: DeserializeOwned>(path: &str, body: &B) -> Result<T, ApiFailure> {
        let request = Request::post(path).json(body).map_err(|e| ApiFailure { status: 0, message: e.to_string(), details: vec![] })?;
        read(request.send().await).await
    }

    /// A POST whose answer is asked for as HTML (`Accept: text/html`): a fragment the server
    /// rendered, given as its text; a failure is still the API's JSON error.
    pub async fn post_for_html<B: Serialize>(path: &str, body: &B) -> Result<String, ApiFailure> {
        let request = Request::post(path).header("Accept", "text/html").json(body).map_err(|e| ApiFailure {
            status: 0,
            message: e.to_string(),
            details: vec![],
        })?;
        Ok(read_text(request.send().await).await?.1)
    }

    pub async fn put<B: Serialize, T: DeserializeOwned>(path: &str, body: &B) -> Result<T, ApiFailure> {
        let request = Request::put(path).json(body).map_err(|e| ApiFailure { status: 0, message: e.to_string(), details: vec![] })?;
        read(request.send().await).await
    }

    /// A request whose answer has no body (204).
    pub async fn delete(path: &str) -> Result<(), ApiFailure> {
        let response = Request::delete(path).send().await.map_err(|e| ApiFailure { status: 0, message: e.to_string(), details: vec![] })?;
        if response.status() == 401 {
            crate::session::mark_ended();
        }
        if response.ok() { Ok(()) } else { Err(failure_from_body(response.status(), &response.text().await.unwrap_or_default())) }
    }
}

#[cfg(not(feature = "hydrate"))]
mod imp {
    use super::*;

    fn unavailable() -> ApiFailure {
        ApiFailure { status: 0, message: "only available in the browser".into(), details: vec![] }
    }

    pub async fn get<T: DeserializeOwned>(_path: &str) -> Result<T, ApiFailure> {
        Err(unavailable())
    }

    pub async fn post<B: Serialize, T: DeserializeOwned>(_path: &str, _body: &B) -> Result<T, ApiFailure> {
        Err(unavailable())
    }

    pub async fn post_for_html<B: Serialize>(_path: &str, _body: &B) -> Result<String, ApiFailure> {
        Err(unavailable())
    }

    pub async fn put<B: Serialize, T: DeserializeOwned>(_path: &str, _body: &B) -> Result<T, ApiFailure> {
        Err(unavailable())
    }

    pub async fn delete(_path: &str) -> Result<(), ApiFailure> {
        Err(unavailable())
    }
}

pub use imp::{delete, get, post, post_for_html, put};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_422_body_yields_its_message_and_each_violation() {
        let body = r#"{"error":{"code":"unprocessable","message":"bad args","details":[{"path":"/amount","message":"not a number"}]}}"#;
        let failure = failure_from_body(422, body);
        assert_eq!(failure.message, "bad args");
        assert_eq!(failure.details, vec!["/amount: not a number".to_string()]);
    }

    #[test]
    fn a_body_that_is_not_the_error_shape_still_reads_well() {
        assert_eq!(failure_from_body(502, "<html>").message, "the server answered 502");
    }
}
