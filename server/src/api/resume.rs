//! Where an event stream resumes: after the sequence number in `Last-Event-ID` (what a browser's
//! `EventSource` sends when it reconnects) or `?after=N` (a page server-rendered up to N), so a
//! reconnect has no gap and no duplicate.

use axum::http::HeaderMap;
use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ResumeQuery {
    /// Events after this sequence number (`Last-Event-ID` wins when both are sent).
    #[param(minimum = 0)]
    pub after: Option<i64>,
}

/// The sequence number a client has already seen: `Last-Event-ID` wins over `?after=`.
pub fn resume_point(headers: &HeaderMap, query: &ResumeQuery) -> i64 {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok())
        .or(query.after)
        .unwrap_or(0)
        .max(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(header: Option<&str>, after: Option<i64>) -> i64 {
        let mut headers = HeaderMap::new();
        if let Some(h) = header {
            headers.insert("last-event-id", h.parse().unwrap());
        }
        resume_point(&headers, &ResumeQuery { after })
    }

    #[test]
    fn the_header_wins_over_the_query_and_nonsense_means_from_the_start() {
        assert_eq!(point(None, None), 0);
        assert_eq!(point(None, Some(3)), 3);
        assert_eq!(point(Some("7"), Some(3)), 7);
        assert_eq!(point(Some(" 7 "), None), 7);
        assert_eq!(point(Some("seven"), Some(3)), 3);
        assert_eq!(point(Some("-5"), None), 0);
        assert_eq!(point(None, Some(-1)), 0);
    }
}
