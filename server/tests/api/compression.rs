//! Pages and JSON answers go out compressed by `Accept-Encoding`; an event stream does not (each
//! event must reach the client when it is written).

use crate::helpers::spawn_app;

#[tokio::test]
async fn pages_and_json_are_compressed_and_event_streams_are_not() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let encoding = |response: &reqwest::Response| {
        response.headers().get("content-encoding").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
    };
    let page = app.client.get(app.url(&format!("/c/{c}"))).header("accept-encoding", "br, gzip").send().await.unwrap();
    assert_eq!((page.status().as_u16(), encoding(&page).as_str()), (200, "br"));
    let json = app.client.get(app.url("/api/agents")).header("accept-encoding", "gzip").send().await.unwrap();
    assert_eq!((json.status().as_u16(), encoding(&json).as_str()), (200, "gzip"));
    let plain = app.client.get(app.url("/api/agents")).send().await.unwrap();
    assert_eq!(encoding(&plain), "", "only to a client that asks");
    let stream =
        app.client.get(app.url(&format!("/api/conversations/{c}/events"))).header("accept-encoding", "br, gzip").send().await.unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    assert!(stream.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    assert_eq!(encoding(&stream), "", "an event stream is never compressed");
}
