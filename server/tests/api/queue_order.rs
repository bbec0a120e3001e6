//! The queue sorted and filtered by what the approvals say: `order=risk|deadline|reversibility`
//! and `reversibility=fully|partially|irreversible`; anything else is a 422 naming the parameter.

use crate::helpers::{error_code, spawn_app};

#[tokio::test]
async fn the_queue_sorts_by_risk_and_reversibility_and_filters_by_reversibility() {
    let app = spawn_app().await;
    // A question (low risk, changes nothing), then a refund (high risk, cannot be undone).
    let first = app.create_conversation().await;
    app.pending_turn(&first, "ask me which order to look up", 1).await;
    let second = app.create_conversation().await;
    app.pending_turn(&second, "refund order 1001", 1).await;
    let tools = |body: serde_json::Value| -> Vec<String> {
        body.as_array().unwrap().iter().map(|a| a["tool"].as_str().unwrap().to_owned()).collect()
    };
    let (_, oldest) = app.get_json("/api/approvals?order=oldest").await;
    assert_eq!(tools(oldest), ["ask_user", "process_refund"]);
    for order in ["risk", "reversibility"] {
        let (status, body) = app.get_json(&format!("/api/approvals?order={order}")).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(tools(body), ["process_refund", "ask_user"], "order={order}");
    }
    let (_, soonest) = app.get_json("/api/approvals?order=deadline").await;
    assert_eq!(tools(soonest), ["ask_user", "process_refund"], "the first asked has the first deadline");
    let (_, irreversible) = app.get_json("/api/approvals?reversibility=irreversible").await;
    assert_eq!(tools(irreversible), ["process_refund"]);
    let (_, fully) = app.get_json("/api/approvals?reversibility=fully").await;
    assert_eq!(tools(fully), ["ask_user"]);
    for (query, param) in [("order=biggest", "order"), ("reversibility=sometimes", "reversibility")] {
        let (status, body) = app.get_json(&format!("/api/approvals?{query}")).await;
        assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{query}: {body}");
        assert!(body["error"]["details"].to_string().contains(param), "{body}");
    }
}

#[tokio::test]
async fn decided_approvals_are_listed_by_when_they_were_decided() {
    let app = spawn_app().await;
    let first = app.create_conversation().await;
    let (_, asked_first) = app.pending_turn(&first, "refund order 1001", 1).await;
    let second = app.create_conversation().await;
    let (_, asked_second) = app.pending_turn(&second, "refund order 1002", 1).await;
    let (earlier, later) = (asked_first[0].id.to_string(), asked_second[0].id.to_string());
    // The later request is decided first, the earlier one after it.
    for id in [&later, &earlier] {
        let (status, body) = app.post_json(&format!("/api/approvals/{id}/reject"), serde_json::json!({})).await;
        assert_eq!(status, 200, "{body}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let ids = |body: serde_json::Value| -> Vec<String> {
        body.as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap().to_owned()).collect()
    };
    let (_, newest) = app.get_json("/api/approvals?status=decided").await;
    assert_eq!(ids(newest), [earlier.clone(), later.clone()], "the latest decision first");
    let (_, oldest) = app.get_json("/api/approvals?status=decided&order=oldest").await;
    assert_eq!(ids(oldest), [later.clone(), earlier.clone()]);
    let (_, rejected) = app.get_json("/api/approvals?status=rejected").await;
    assert_eq!(ids(rejected), [earlier, later]);
}
