//! MCP 2026-07-28's own way for a call to wait for a person: a gated call whose client can show
//! an elicitation, and whose user may decide it, answers at once with an `InputRequiredResult` —
//! the question ("Approve: Refund $249.00 on order 1001?") and a sealed `requestState` that names
//! the approval. The client sends the same call again, to any replica, with the answer and the
//! state; the answer is a decision like any other (docs/mcp-gateway.md, "2026-07-28").
//! Everything here is pure; mod.rs gathers and decides around it.

use domain::TaskId;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{
    links::token::{LinkKey, TokenError, args_hash},
    orchestrator::Decision,
};

/// What a sealed state is for (a value sealed for a link never opens as one, nor the reverse).
const PURPOSE: &str = "mcp-request-state";
/// The key of the one input request: the approval.
pub const INPUT: &str = "approval";

/// What a `requestState` says: the approval it waits on, bound to the client (its credential),
/// the call (tool and arguments) and the approval's deadline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestState {
    #[serde(rename = "a")]
    pub approval: String,
    #[serde(rename = "t")]
    pub task: String,
    /// A digest of the credential that made the call.
    #[serde(rename = "c")]
    pub client: String,
    #[serde(rename = "n")]
    pub tool: String,
    /// [`args_hash`] of the arguments.
    #[serde(rename = "h")]
    pub args: String,
    /// Unix ms: the approval's deadline.
    #[serde(rename = "e")]
    pub expires_at: i64,
}

/// A digest of a credential key (`token:<id>`): the state names the client without carrying it.
pub fn client_digest(credential: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(format!("mcp-client\n{credential}").as_bytes()))[..32].to_owned()
}

impl RequestState {
    pub fn new(approval: &str, task: &TaskId, credential: &str, tool: &str, args: &Value, expires_at: i64) -> Self {
        Self {
            approval: approval.to_owned(),
            task: task.to_string(),
            client: client_digest(credential),
            tool: tool.to_owned(),
            args: args_hash(args),
            expires_at,
        }
    }

    pub fn seal(&self, key: &LinkKey) -> String {
        key.seal(PURPOSE, &serde_json::to_vec(self).expect("BUG: a request state serializes"))
    }

    /// The state `sealed` says, if this server sealed it, it has not expired, and it was issued to
    /// this client for this very call; otherwise why not, for the client.
    pub fn open(key: &LinkKey, sealed: &str, now: i64, credential: &str, tool: &str, args: &Value) -> Result<Self, String> {
        let payload = key.open(PURPOSE, sealed).map_err(|e| match e {
            TokenError::Malformed | TokenError::Forged => "requestState was not issued by this server, or it was changed".to_owned(),
            TokenError::Expired => "requestState expired".to_owned(),
        })?;
        let state: Self = serde_json::from_slice(&payload).map_err(|_| "requestState was not issued by this server".to_owned())?;
        if state.expires_at <= now {
            return Err("requestState expired: the approval's deadline passed; call the tool again".into());
        }
        if state.client != client_digest(credential) {
            return Err("requestState was issued to another client: send it with the token that made the call".into());
        }
        if state.tool != tool || state.args != args_hash(args) {
            return Err("requestState was issued for another call: send the same tool and arguments again".into());
        }
        Ok(state)
    }
}

/// The `InputRequiredResult`: a form elicitation asking the person to approve or reject the
/// call (`summary`, its risk, and what deciding it `needs` when that is more than this person),
/// with the sealed state.
pub fn result(summary: &str, risk: &str, needs: Option<&str>, sealed: String) -> Value {
    let needs = needs.map(|n| format!(". {n}")).unwrap_or_default();
    json!({
        "resultType": "input_required",
        "inputRequests": { INPUT: {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": format!("Approve: {summary}? ({risk} risk; Countersign asks because a gate stops this call){needs}"),
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "approve": { "type": "boolean", "title": "Approve", "description": "Run the call (true) or reject it (false)" },
                        "reason": { "type": "string", "title": "Reason", "description": "Why, when you reject it (some gates require one)" },
                    },
                    "required": ["approve"],
                },
            },
        } },
        "requestState": sealed,
    })
}

/// What the person answered.
#[derive(Debug)]
pub enum InputAnswer {
    Decide(Decision),
    /// No answer (none sent, or the person dismissed the question): the call waits for someone.
    Wait,
}

/// The answer in `inputResponses`: `accept` with `{approve, reason?}`, `decline` (a rejection),
/// or `cancel` (no decision).
pub fn answer(responses: Option<&std::collections::BTreeMap<String, Value>>) -> Result<InputAnswer, String> {
    let Some(response) = responses.and_then(|r| r.get(INPUT)) else { return Ok(InputAnswer::Wait) };
    let reason = response["content"]["reason"].as_str().map(str::to_owned).filter(|r| !r.trim().is_empty());
    match (response["action"].as_str(), response["content"]["approve"].as_bool()) {
        (Some("accept"), Some(true)) => Ok(InputAnswer::Decide(Decision::Approve { args: None, grant: None })),
        (Some("accept"), Some(false)) | (Some("decline"), _) => Ok(InputAnswer::Decide(Decision::Reject { reason })),
        (Some("cancel"), _) => Ok(InputAnswer::Wait),
        _ => Err(format!(
            "inputResponses.{INPUT} must be an elicitation result: {{\"action\": \"accept\", \"content\": {{\"approve\": true | false}}}}, \"decline\" or \"cancel\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> LinkKey {
        LinkKey::new(&"k".repeat(32))
    }

    fn state() -> RequestState {
        RequestState::new("a1", &TaskId::from("t1".to_owned()), "token:1", "write_file", &json!({ "path": "/x" }), 5_000)
    }

    #[test]
    fn a_state_opens_only_for_its_client_and_call_until_the_deadline() {
        let sealed = state().seal(&key());
        let open = |now, credential: &str, tool: &str, args: Value| RequestState::open(&key(), &sealed, now, credential, tool, &args);
        assert_eq!(open(4_999, "token:1", "write_file", json!({ "path": "/x" })), Ok(state()));
        assert!(open(5_000, "token:1", "write_file", json!({ "path": "/x" })).unwrap_err().contains("expired"));
        assert!(open(0, "token:2", "write_file", json!({ "path": "/x" })).unwrap_err().contains("another client"));
        assert!(open(0, "token:1", "write_file", json!({ "path": "/y" })).unwrap_err().contains("another call"));
        assert!(open(0, "token:1", "move_file", json!({ "path": "/x" })).unwrap_err().contains("another call"));
        let forged = RequestState { approval: "a2".into(), ..state() }.seal(&LinkKey::new(&"o".repeat(32)));
        assert!(
            RequestState::open(&key(), &forged, 0, "token:1", "write_file", &json!({ "path": "/x" })).unwrap_err().contains("not issued")
        );
        // A link token is no request state.
        assert!(RequestState::open(&key(), "abc.def", 0, "token:1", "write_file", &json!({})).is_err());
    }

    #[test]
    fn every_elicitation_answer_is_a_decision_or_a_wait() {
        let responses = |v: Value| std::collections::BTreeMap::from([(INPUT.to_owned(), v)]);
        let decide = |v: Value| answer(Some(&responses(v)));
        assert!(matches!(
            decide(json!({ "action": "accept", "content": { "approve": true } })),
            Ok(InputAnswer::Decide(Decision::Approve { .. }))
        ));
        assert!(matches!(
            decide(json!({ "action": "accept", "content": { "approve": false, "reason": "no" } })),
            Ok(InputAnswer::Decide(Decision::Reject { reason: Some(r) })) if r == "no"
        ));
        assert!(matches!(decide(json!({ "action": "decline" })), Ok(InputAnswer::Decide(Decision::Reject { reason: None }))));
        assert!(matches!(decide(json!({ "action": "cancel" })), Ok(InputAnswer::Wait)));
        assert!(matches!(answer(None), Ok(InputAnswer::Wait)));
        for bad in [json!({ "action": "accept" }), json!({ "action": "accept", "content": { "approve": "yes" } }), json!("ok")] {
            assert!(decide(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_result_asks_with_a_form_and_carries_the_state() {
        let value = result("Refund $249.00 on order 1001", "high", Some("Needs: 2 of finance and bob"), "sealed".into());
        assert_eq!(value["resultType"], "input_required");
        let ask = &value["inputRequests"][INPUT];
        assert_eq!((ask["method"].as_str(), ask["params"]["mode"].as_str()), (Some("elicitation/create"), Some("form")));
        let message = ask["params"]["message"].as_str().unwrap();
        assert!(message.starts_with("Approve: Refund $249.00 on order 1001?"), "{message}");
        assert!(message.ends_with(". Needs: 2 of finance and bob"), "{message}");
        assert_eq!(ask["params"]["requestedSchema"]["required"], json!(["approve"]));
        assert_eq!(value["requestState"], "sealed");
        // rmcp reads it as its own InputRequiredResult.
        let _: rmcp::model::InputRequiredResult = serde_json::from_value(value).unwrap();
    }
}
