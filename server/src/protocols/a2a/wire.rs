//! A2A's two wire dialects and the version a request speaks. 0.3 tags every object with `kind`,
//! writes states and roles in lower case (`input-required`, `agent`) and answers `message/send`
//! with the task itself; 1.x drops `kind`, writes them as enum names (`TASK_STATE_INPUT_REQUIRED`,
//! `ROLE_AGENT`) and wraps `SendMessage`'s answer as `{"task": …}`. Everything here is pure: the
//! handlers in mod.rs gather a [`TaskView`] and these functions write it out. See docs/a2a.md.

use domain::TaskStatus;
use serde_json::{Value, json};

/// The A2A versions served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V0_3,
    V1,
}

/// A request's method, its version and what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Send,
    Stream,
    Get,
    Cancel,
    /// Known to the protocol, not offered here (push notifications, resubscribing, listing, the
    /// extended card): the protocol's own error says which.
    Unsupported(i64),
}

/// JSON-RPC and A2A error codes (the same in both versions, 1.x adds -32009).
pub mod code {
    pub const PARSE: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL: i64 = -32603;
    pub const TASK_NOT_FOUND: i64 = -32001;
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    pub const PUSH_NOT_SUPPORTED: i64 = -32003;
    pub const UNSUPPORTED: i64 = -32004;
    pub const EXTENDED_CARD_NOT_CONFIGURED: i64 = -32007;
    pub const VERSION_NOT_SUPPORTED: i64 = -32009;
}

/// The method a request names, and the version it speaks: each spec's own method names choose it
/// (0.3's `message/send`, 1.x's `SendMessage`). An `A2A-Version` header naming a version not
/// served is refused (-32009, as 1.x says); an absent one means 0.3 by the spec, but a 1.x method
/// name without it is still answered in 1.x, since the name says which shapes the client reads.
pub fn method(name: &str, header: Option<&str>) -> Result<(Method, Version), (i64, String)> {
    if let Some(asked) = header.map(str::trim).filter(|h| !h.is_empty())
        && !served(asked)
    {
        return Err((code::VERSION_NOT_SUPPORTED, format!("A2A version {asked:?} is not supported: this agent speaks 0.3 and 1.0")));
    }
    use Method::*;
    let (method, version) = match name {
        "message/send" => (Send, Version::V0_3),
        "message/stream" => (Stream, Version::V0_3),
        "tasks/get" => (Get, Version::V0_3),
        "tasks/cancel" => (Cancel, Version::V0_3),
        "tasks/resubscribe" => (Unsupported(code::UNSUPPORTED), Version::V0_3),
        "agent/getAuthenticatedExtendedCard" => (Unsupported(code::EXTENDED_CARD_NOT_CONFIGURED), Version::V0_3),
        n if n.starts_with("tasks/pushNotificationConfig/") => (Unsupported(code::PUSH_NOT_SUPPORTED), Version::V0_3),
        "SendMessage" => (Send, Version::V1),
        "SendStreamingMessage" => (Stream, Version::V1),
        "GetTask" => (Get, Version::V1),
        "CancelTask" => (Cancel, Version::V1),
        "SubscribeToTask" | "ListTasks" => (Unsupported(code::UNSUPPORTED), Version::V1),
        "GetExtendedAgentCard" => (Unsupported(code::EXTENDED_CARD_NOT_CONFIGURED), Version::V1),
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => (Unsupported(code::PUSH_NOT_SUPPORTED), Version::V1),
        other => return Err((code::METHOD_NOT_FOUND, format!("no method {other:?}"))),
    };
    Ok((method, version))
}

/// Whether an `A2A-Version` value (`Major.Minor`, patch ignored) is one served: 0.3 or 1.x.
fn served(version: &str) -> bool {
    let mut parts = version.split('.');
    match (parts.next(), parts.next()) {
        (Some("0"), Some("3")) => true,
        (Some("1"), minor) => minor.is_none_or(|m| m.chars().all(|c| c.is_ascii_digit())),
        _ => false,
    }
}

/// What a task shows a client, gathered by the handler.
#[derive(Debug)]
pub struct TaskView {
    pub id: String,
    pub context_id: String,
    pub status: TaskStatus,
    /// RFC 3339.
    pub timestamp: String,
    /// A message id unique to this answer.
    pub message_id: String,
    /// While it waits: the approval requests, as the data part shows them.
    pub approvals: Vec<Value>,
    /// Once it ended: the agent's last message of the task.
    pub answer: Option<String>,
}

impl Version {
    fn state(self, status: TaskStatus) -> &'static str {
        match (self, status) {
            (Self::V0_3, TaskStatus::Working) => "working",
            (Self::V0_3, TaskStatus::InputRequired) => "input-required",
            (Self::V0_3, TaskStatus::Completed) => "completed",
            (Self::V0_3, TaskStatus::Failed) => "failed",
            (Self::V0_3, TaskStatus::Canceled) => "canceled",
            (Self::V1, TaskStatus::Working) => "TASK_STATE_WORKING",
            (Self::V1, TaskStatus::InputRequired) => "TASK_STATE_INPUT_REQUIRED",
            (Self::V1, TaskStatus::Completed) => "TASK_STATE_COMPLETED",
            (Self::V1, TaskStatus::Failed) => "TASK_STATE_FAILED",
            (Self::V1, TaskStatus::Canceled) => "TASK_STATE_CANCELED",
        }
    }

    fn text(self, text: &str) -> Value {
        match self {
            Self::V0_3 => json!({ "kind": "text", "text": text }),
            Self::V1 => json!({ "text": text }),
        }
    }

    fn data(self, data: Value) -> Value {
        match self {
            Self::V0_3 => json!({ "kind": "data", "data": data }),
            Self::V1 => json!({ "data": data, "mediaType": "application/json" }),
        }
    }

    fn tagged(self, kind: &str, mut value: Value) -> Value {
        if self == Self::V0_3 {
            value["kind"] = kind.into();
        }
        value
    }

    /// The task as `GetTask` / `tasks/get` answer it: its state, and while it waits the approval
    /// request as a text and a data part of the status message; once completed, the answer as
    /// an artifact.
    pub fn task(self, view: &TaskView) -> Value {
        let mut task = self.tagged(
            "task",
            json!({ "id": view.id, "contextId": view.context_id, "status": { "state": self.state(view.status), "timestamp": view.timestamp } }),
        );
        let parts = match view.status {
            TaskStatus::InputRequired => {
                let lines: Vec<String> = view
                    .approvals
                    .iter()
                    .map(|a| {
                        // The whole requirement, when deciding it takes more than anyone who sees it.
                        let needs = a["needs"].as_str().map(|n| format!(". {n}")).unwrap_or_default();
                        format!(
                            "Approval needed: {} ({} risk){needs}",
                            a["summary"].as_str().unwrap_or_default(),
                            a["risk"].as_str().unwrap_or("?")
                        )
                    })
                    .collect();
                let data = json!({
                    "type": "approval_request",
                    "approvals": view.approvals,
                    "respond_with": {
                        "decision_type": "approve | reject | batch",
                        "reason": "optional (also rejection_reason)",
                        "approval_id": "optional: one of them",
                        "decisions": "with batch: {approval_id or call_id: approve | reject}",
                    },
                });
                vec![self.text(&lines.join("\n")), self.data(data)]
            }
            _ => view.answer.iter().map(|text| self.text(text)).collect(),
        };
        if !parts.is_empty() {
            let role = match self {
                Self::V0_3 => "agent",
                Self::V1 => "ROLE_AGENT",
            };
            task["status"]["message"] = self.tagged(
                "message",
                json!({ "messageId": view.message_id, "role": role, "taskId": view.id, "contextId": view.context_id, "parts": parts }),
            );
        }
        if let (TaskStatus::Completed, Some(artifact)) = (view.status, self.artifact(view)) {
            task["artifacts"] = json!([artifact]);
        }
        task
    }

    fn artifact(self, view: &TaskView) -> Option<Value> {
        let text = view.answer.as_deref()?;
        Some(json!({ "artifactId": format!("{}-answer", view.id), "name": "answer", "parts": [self.text(text)] }))
    }

    /// `SendMessage` / `message/send`'s result: 1.x wraps the task, 0.3 answers it as it is.
    pub fn sent(self, view: &TaskView) -> Value {
        match self {
            Self::V0_3 => self.task(view),
            Self::V1 => json!({ "task": self.task(view) }),
        }
    }

    /// The results a streamed message sends once the task settled (after the task as it started):
    /// 0.3 sends the answer as an artifact update and a status update marked `final`, the last
    /// event; 1.x a status update and the task as it is then (the stream's end is its end).
    pub fn settled_stream(self, view: &TaskView) -> Vec<Value> {
        let task = self.task(view);
        let status = task["status"].clone();
        match self {
            Self::V0_3 => {
                let mut events = Vec::new();
                if let (TaskStatus::Completed, Some(artifact)) = (view.status, self.artifact(view)) {
                    events.push(json!({
                        "kind": "artifact-update", "taskId": view.id, "contextId": view.context_id,
                        "artifact": artifact, "append": false, "lastChunk": true,
                    }));
                }
                events.push(
                    json!({ "kind": "status-update", "taskId": view.id, "contextId": view.context_id, "status": status, "final": true }),
                );
                events
            }
            Self::V1 => vec![
                json!({ "statusUpdate": { "taskId": view.id, "contextId": view.context_id, "status": status } }),
                json!({ "task": task }),
            ],
        }
    }

    /// The first result of a streamed message: the task as it started.
    pub fn started_stream(self, view: &TaskView) -> Value {
        self.sent(view)
    }
}

/// The text and data parts of an incoming message, in either version's shape (a part is told by
/// its content member, with or without `kind`).
pub struct Incoming<'a> {
    pub text: Vec<&'a str>,
    pub data: Vec<&'a Value>,
}

pub fn parts(message: &Value) -> Option<Incoming<'_>> {
    let parts = message["parts"].as_array()?;
    Some(Incoming {
        text: parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        data: parts.iter().filter_map(|p| p.get("data")).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(status: TaskStatus) -> TaskView {
        TaskView {
            id: "t1".into(),
            context_id: "c1".into(),
            status,
            timestamp: "2026-11-27T16:00:00Z".into(),
            message_id: "m1".into(),
            approvals: match status {
                TaskStatus::InputRequired => {
                    vec![json!({ "approval_id": "a1", "call_id": "call_1", "summary": "Refund $249.00", "risk": "high" })]
                }
                _ => vec![],
            },
            answer: matches!(status, TaskStatus::Completed | TaskStatus::Failed).then(|| "Refunded".to_owned()),
        }
    }

    #[test]
    fn the_method_name_chooses_the_version_and_an_unserved_version_header_is_refused() {
        assert_eq!(method("message/send", None), Ok((Method::Send, Version::V0_3)));
        assert_eq!(method("message/send", Some("0.3")), Ok((Method::Send, Version::V0_3)));
        assert_eq!(method("SendMessage", Some("1.0")), Ok((Method::Send, Version::V1)));
        assert_eq!(method("SendMessage", None), Ok((Method::Send, Version::V1)));
        assert_eq!(method("tasks/get", Some("0.3.0")), Ok((Method::Get, Version::V0_3)));
        assert_eq!(method("CancelTask", Some("1.2")), Ok((Method::Cancel, Version::V1)));
        assert_eq!(method("tasks/pushNotificationConfig/set", None), Ok((Method::Unsupported(code::PUSH_NOT_SUPPORTED), Version::V0_3)));
        assert_eq!(method("ListTasks", Some("1.0")), Ok((Method::Unsupported(code::UNSUPPORTED), Version::V1)));
        for bad in ["2.0", "0.2", "0.5", "banana"] {
            assert_eq!(method("SendMessage", Some(bad)).unwrap_err().0, code::VERSION_NOT_SUPPORTED, "{bad}");
        }
        assert_eq!(method("message/sned", None).unwrap_err().0, code::METHOD_NOT_FOUND);
    }

    #[test]
    fn a_waiting_task_reads_as_each_version_writes_it() {
        let v03 = Version::V0_3.sent(&view(TaskStatus::InputRequired));
        assert_eq!((v03["kind"].as_str(), v03["status"]["state"].as_str()), (Some("task"), Some("input-required")));
        let message = &v03["status"]["message"];
        assert_eq!((message["kind"].as_str(), message["role"].as_str()), (Some("message"), Some("agent")));
        assert_eq!(message["parts"][0]["kind"], "text");
        assert_eq!(
            (message["parts"][1]["kind"].as_str(), message["parts"][1]["data"]["approvals"][0]["approval_id"].as_str()),
            (Some("data"), Some("a1"))
        );

        let v1 = Version::V1.sent(&view(TaskStatus::InputRequired));
        let task = &v1["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
        assert!(task.get("kind").is_none() && task["status"]["message"]["parts"][1].get("kind").is_none(), "{v1}");
        assert_eq!(task["status"]["message"]["parts"][1]["data"]["type"], "approval_request");
        // GetTask answers the bare task in both.
        assert!(Version::V1.task(&view(TaskStatus::Working)).get("task").is_none());
    }

    #[test]
    fn every_state_has_its_name_in_both_versions() {
        for (status, v03, v1) in [
            (TaskStatus::Working, "working", "TASK_STATE_WORKING"),
            (TaskStatus::InputRequired, "input-required", "TASK_STATE_INPUT_REQUIRED"),
            (TaskStatus::Completed, "completed", "TASK_STATE_COMPLETED"),
            (TaskStatus::Failed, "failed", "TASK_STATE_FAILED"),
            (TaskStatus::Canceled, "canceled", "TASK_STATE_CANCELED"),
        ] {
            assert_eq!(Version::V0_3.task(&view(status))["status"]["state"], v03);
            assert_eq!(Version::V1.task(&view(status))["status"]["state"], v1);
        }
        // Only a completed task has the answer as an artifact; a failed one says it in its status.
        assert_eq!(
            Version::V0_3.task(&view(TaskStatus::Completed))["artifacts"][0]["parts"][0],
            json!({ "kind": "text", "text": "Refunded" })
        );
        assert!(Version::V1.task(&view(TaskStatus::Failed)).get("artifacts").is_none());
    }

    #[test]
    fn a_stream_ends_in_each_versions_way() {
        let done = Version::V0_3.settled_stream(&view(TaskStatus::Completed));
        assert_eq!(done.iter().map(|e| e["kind"].as_str().unwrap()).collect::<Vec<_>>(), ["artifact-update", "status-update"]);
        assert_eq!(done[1]["final"], true);
        let waits = Version::V0_3.settled_stream(&view(TaskStatus::InputRequired));
        assert_eq!((waits.len(), waits[0]["status"]["state"].as_str(), &waits[0]["final"]), (1, Some("input-required"), &json!(true)));
        let v1 = Version::V1.settled_stream(&view(TaskStatus::InputRequired));
        assert_eq!(v1[0]["statusUpdate"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        assert!(v1[0]["statusUpdate"].get("final").is_none());
        assert_eq!(v1[1]["task"]["id"], "t1");
    }

    #[test]
    fn parts_are_read_with_or_without_kind() {
        let message = json!({ "parts": [
            { "kind": "text", "text": "refund" }, { "text": "order 1001" },
            { "kind": "data", "data": { "decision_type": "approve" } }, { "data": { "x": 1 }, "mediaType": "application/json" },
        ] });
        let incoming = parts(&message).unwrap();
        assert_eq!(incoming.text, ["refund", "order 1001"]);
        assert_eq!(incoming.data.len(), 2);
        assert!(parts(&json!({ "parts": "no" })).is_none());
    }
}
