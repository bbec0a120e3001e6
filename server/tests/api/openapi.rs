//! The OpenAPI document is generated from the code and describes exactly what the router serves:
//! every documented operation is routed, every method a documented path does not list is refused
//! by the router (405), and no handler is routed outside the documenting call.

use std::path::Path;

use serde_json::Value;

use crate::helpers::{error_code, spawn_app, test_client};

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// `(method, path)` of every operation the document lists.
fn operations(doc: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys().filter(|m| METHODS.contains(&m.as_str())) {
            found.push((method.clone(), path.clone()));
        }
    }
    found.sort();
    found
}

#[tokio::test]
async fn the_document_is_generated_and_complete() {
    let app = spawn_app().await;
    let (status, doc) = app.anonymous().get_json("/api/openapi.json").await;
    assert_eq!(status, 200, "the document needs no login");
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["title"], "Countersign API");
    let operations = operations(&doc);
    assert!(operations.len() >= 35, "{operations:?}");
    for (method, path) in &operations {
        let op = &doc["paths"][path][method];
        let id = op["operationId"].as_str().unwrap_or_default();
        assert!(!id.is_empty() && op["summary"].as_str().is_some_and(|s| !s.is_empty()), "{method} {path}: an id and a summary");
        for (status, response) in op["responses"].as_object().unwrap() {
            assert!(response["description"].as_str().is_some_and(|d| !d.is_empty()), "{id} {status}: a description");
            if status.starts_with('4') || status.starts_with('5') {
                assert_eq!(response["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/Error", "{id} {status}");
            }
        }
    }
    let ids: std::collections::BTreeSet<String> = operations.iter().map(|(m, p)| doc["paths"][p][m]["operationId"].to_string()).collect();
    assert_eq!(ids.len(), operations.len(), "operation ids are unique");
    // Every schema a `$ref` names exists (a type used only in a parameter would otherwise dangle).
    let text = doc.to_string();
    for name in text.split("\"#/components/schemas/").skip(1).map(|rest| rest.split('"').next().unwrap()) {
        assert!(doc["components"]["schemas"][name].is_object(), "{name} is referenced but not defined");
    }
    // The wire types describe themselves: an approval's state is one of the machine's names.
    let states = &doc["components"]["schemas"]["ApprovalState"]["enum"];
    assert!(states.as_array().is_some_and(|s| s.iter().any(|v| v == "pending")), "{states}");
    assert_eq!(doc["paths"]["/api/audit"]["get"]["x-admin-only"], true);
    assert_eq!(doc["components"]["securitySchemes"]["session"]["name"], "countersign_session");
}

#[tokio::test]
async fn every_documented_operation_is_routed_and_every_other_method_is_refused() {
    let app = spawn_app().await;
    let (_, doc) = app.get_json("/api/openapi.json").await;
    let operations = operations(&doc);
    let client = test_client().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    for (path, item) in doc["paths"].as_object().unwrap() {
        // Server-sent event streams would stay open: ask them for nothing new and drop them.
        let url = app.url(&path.replace("{id}", "no-such-id"));
        for method in METHODS {
            let request = client.request(method.to_uppercase().parse().unwrap(), &url).header("accept", "application/json");
            let response = tokio::time::timeout(std::time::Duration::from_secs(10), request.send())
                .await
                .unwrap_or_else(|_| panic!("{method} {path} did not answer"))
                .unwrap();
            let status = response.status().as_u16();
            let documented = item.get(method).is_some();
            let body: Value = if response.headers().get("content-type").is_some_and(|t| t.to_str().unwrap().starts_with("application/json"))
            {
                response.json().await.unwrap_or(Value::Null)
            } else {
                Value::Null
            };
            if documented {
                // Routed: whatever the handler says (401, 404 for the made-up id, 422…), it is not
                // the router's "no such route" nor its "not this method".
                assert_ne!(status, 405, "{method} {path} is documented but the router refuses the method");
                assert!(
                    !(status == 404 && body["error"]["message"] == "no such API route"),
                    "{method} {path} is documented but not routed"
                );
            } else if path.starts_with("/api/") {
                // (Outside /api a GET may be the app's page of the same name, such as /login.)
                assert_eq!(status, 405, "{method} {path} is not documented, yet the router takes it: {body}");
                assert_eq!(error_code(&body), "method_not_allowed");
            }
        }
    }
    assert!(operations.iter().any(|(m, p)| m == "delete" && p == "/api/session"));
}

/// The router's only routes outside `OpenApiRouter::routes` are the catch-all 404 and the
/// method fallback (api/mod.rs): a handler routed with a plain `.route(` would be undocumented.
#[test]
fn no_handler_is_routed_outside_the_documenting_call() {
    let api = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/api");
    let mut plain = Vec::new();
    for entry in std::fs::read_dir(&api).unwrap() {
        let file = entry.unwrap().path();
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if !code.starts_with("//") && code.contains(".route(") && !code.contains("\"/api/{*rest}\"") {
                plain.push(format!("{}:{}: {code}", file.display(), n + 1));
            }
        }
    }
    assert!(plain.is_empty(), "routed without documentation (use .routes(routes!(…)) with #[utoipa::path]):\n{}", plain.join("\n"));
}
