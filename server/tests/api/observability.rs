//! `/metrics`, `/readyz`, request ids, and JSON logs that carry the request id into the
//! task driver's spans.

use std::time::Duration;

use domain::TaskStatus;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::helpers::{eventually, spawn_app};

fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines().find(|l| l.starts_with(name) && l[name.len()..].starts_with(' ')).and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

#[tokio::test]
async fn metrics_show_the_queue_decisions_tool_durations_and_streams_without_a_login() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001 and 1002", 2).await;
    let _stream = app.sse(&format!("/api/conversations/{c}/events"), None).await;

    let response = app.anonymous().client.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("application/openmetrics-text"));
    let text = response.text().await.unwrap();
    assert_eq!(sample(&text, "countersign_pending_approvals{gate=\"refunds-and-cancellations\"}"), Some(2.0), "{text}");
    assert!(sample(&text, "countersign_sse_clients").unwrap() >= 1.0, "{text}");

    app.post_json(&format!("/api/approvals/{}/approve", approvals[0].id), json!({})).await;
    app.post_json(&format!("/api/approvals/{}/reject", approvals[1].id), json!({})).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let text = app.anonymous().client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert_eq!(sample(&text, "countersign_decisions_total{outcome=\"approved\"}"), Some(1.0), "{text}");
    assert_eq!(sample(&text, "countersign_decisions_total{outcome=\"rejected\"}"), Some(1.0), "{text}");
    assert_eq!(sample(&text, "countersign_time_to_decision_seconds_count"), Some(2.0), "{text}");
    assert_eq!(sample(&text, "countersign_tool_duration_seconds_count{tool=\"process_refund\"}"), Some(1.0), "{text}");
    assert!(!text.contains("pending_approvals{gate=\"refunds-and-cancellations\"}"), "nothing pending any more: {text}");
    assert!(text.trim_end().ends_with("# EOF"));
}

#[tokio::test]
async fn readyz_answers_when_the_database_does_and_every_response_has_a_request_id() {
    let app = spawn_app().await;
    let response = app.anonymous().client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let generated = response.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(generated.len(), 36, "a UUID: {generated}");
    let body = response.json::<Value>().await.unwrap();
    assert_eq!(body["status"], "ready");
    let components: Vec<(&str, &str)> =
        body["components"].as_array().unwrap().iter().map(|c| (c["name"].as_str().unwrap(), c["state"].as_str().unwrap())).collect();
    for name in ["database clock", "task claims", "sweeper"] {
        assert!(components.contains(&(name, "running")), "{name} runs: {body}");
    }
    let echoed = app.client.get(app.url("/api/conversations")).header("x-request-id", "caller-7").send().await.unwrap();
    assert_eq!(echoed.headers()["x-request-id"], "caller-7");
}

#[tokio::test]
async fn json_logs_carry_the_request_id_into_the_task_drivers_spans() {
    let data_dir = tempfile::tempdir().unwrap();
    let token = crate::helpers::cli_token(data_dir.path()).await;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_countersign"))
        .env("COUNTERSIGN_ADDR", "127.0.0.1:0")
        .env("COUNTERSIGN_DATA_DIR", data_dir.path())
        .env("DATABASE_URL", crate::helpers::database_url(data_dir.path()).await)
        .env("COUNTERSIGN_LOG_JSON", "1")
        .env("RUST_LOG", "countersign=debug,engine=debug")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (lines_tx, mut lines_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let mut reader = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    tokio::spawn(async move {
        while let Ok(Some(line)) = reader.next_line().await {
            let _ = lines_tx.send(line);
        }
    });
    let base = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let line = lines_rx.recv().await.expect("server output");
            if let Some(at) = line.find("http://") {
                let url = &line[at..];
                return url.split(|c: char| c == '"' || c.is_whitespace()).next().unwrap().to_owned();
            }
        }
    })
    .await
    .expect("listening line");
    let client = crate::helpers::client_with_token(&token);
    let (status, body) = {
        let r = client.post(format!("{base}/api/conversations")).json(&json!({})).send().await.unwrap();
        (r.status(), r.json::<Value>().await.unwrap())
    };
    assert_eq!(status, 201, "{body}");
    let c = body["id"].as_str().unwrap();
    let r = client
        .post(format!("{base}/api/conversations/{c}/messages"))
        .header("x-request-id", "req-test-42")
        .json(&json!({ "text": "refund order 1001" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let line = eventually("a JSON log line of the driver with the request id", || {
        let mut found = None;
        while let Ok(line) = lines_rx.try_recv() {
            if line.contains("model replied") {
                found = Some(line);
            }
        }
        async move { found }
    })
    .await;
    let entry: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("JSON log line ({e}): {line}"));
    let spans = entry["spans"].as_array().expect("span list");
    assert!(spans.iter().any(|s| s["request_id"] == "req-test-42"), "{entry}");
    assert!(spans.iter().any(|s| s["name"] == "drive"), "{entry}");
    child.kill().await.unwrap();
}
