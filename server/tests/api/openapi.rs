//! The OpenAPI document describes every route the API serves.

use serde_json::Value;

use crate::helpers::spawn_app;

/// Every API route, as the router declares it.
const ROUTES: [(&str, &str); 35] = [
    ("get", "/metrics"),
    ("get", "/readyz"),
    ("get", "/api/agents"),
    ("get", "/healthz"),
    ("post", "/api/conversations"),
    ("get", "/api/conversations"),
    ("get", "/api/conversations/{id}"),
    ("post", "/api/conversations/{id}/messages"),
    ("get", "/api/conversations/{id}/events"),
    ("get", "/api/approvals"),
    ("get", "/api/approvals/{id}"),
    ("post", "/api/approvals/{id}/approve"),
    ("post", "/api/approvals/{id}/reject"),
    ("post", "/api/approvals/{id}/escalate"),
    ("post", "/api/approvals/{id}/defer"),
    ("post", "/api/grants/{id}/revoke"),
    ("get", "/api/tasks/{id}"),
    ("post", "/api/tasks/{id}/approve-all"),
    ("post", "/api/tasks/{id}/reject-all"),
    ("post", "/api/tasks/{id}/abort"),
    ("get", "/api/orders"),
    ("get", "/api/orders/{id}"),
    ("get", "/api/openapi.json"),
    ("post", "/api/session"),
    ("get", "/api/session"),
    ("delete", "/api/session"),
    ("post", "/login"),
    ("get", "/api/tokens"),
    ("post", "/api/tokens"),
    ("post", "/api/tokens/{id}/revoke"),
    ("get", "/api/users"),
    ("get", "/api/audit"),
    ("get", "/api/audit/export"),
    ("get", "/api/audit/verify"),
    ("get", "/api/approvals/events"),
];

#[tokio::test]
async fn the_openapi_document_lists_every_route_and_nothing_else() {
    let app = spawn_app().await.as_user("root");
    let (status, doc) = app.get_json("/api/openapi.json").await;
    assert_eq!(status, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    let mut documented = Vec::new();
    for (path, methods) in paths {
        for method in methods.as_object().unwrap().keys() {
            documented.push((method.clone(), path.clone()));
        }
    }
    let mut expected: Vec<(String, String)> = ROUTES.iter().map(|(m, p)| (m.to_string(), p.to_string())).collect();
    documented.sort();
    expected.sort();
    assert_eq!(documented, expected);
    // Every route the document names answers (not the catch-all API 404).
    for (method, path) in ROUTES {
        if method == "get" && !path.contains('{') && !path.contains("stream") && !path.contains("events") && !path.contains("export") {
            let (status, body): (u16, Value) = app.get_json(path).await;
            assert_eq!(status, 200, "{path}: {body}");
        }
    }
}
