//! A Slack-compatible channel: approvals of gates with `notify = ["slack"]` are posted as
//! interactive messages (Block Kit) with Approve / Reject buttons; a click arrives at
//! `POST /slack/interactions`, is checked with Slack's signing scheme (`v0:` + timestamp + body,
//! HMAC-SHA256 with the signing secret, five-minute window; `slack_workspace.rs`) and decides as
//! the Countersign user the clicking Slack user is (`[slack.users]`), except a reject of a call
//! whose gate requires a reason (a button gives none: the reply sends them to Countersign); once
//! an approval is decided anywhere its message is updated to say how. Posts and updates wait in
//! the outbox like emails.

use std::time::Duration;

use axum::{
    Json, Router,
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::post,
};
use domain::{ApprovalId, ApprovalState};
use serde_json::{Value, json};

use engine::clock::{now_ms, rfc3339};
use engine::delivery::{Channel, Delivery, Kind, Sent, SlackAction};
use engine::reads::ApprovalRow;

use crate::{
    EngineError,
    channels::{neutral, slack_workspace::Slack},
    orchestrator::{Actor, Decision, SlackSent},
    state::AppState,
};

const ATTEMPTS: u32 = 6;

/// A mrkdwn text object shown as written: `verbatim` keeps Slack from turning bare URLs, channel
/// names and mentions in it into links (requester text is escaped too, [`neutral::slack`]).
fn mrkdwn(text: String) -> Value {
    json!({ "type": "mrkdwn", "text": text, "verbatim": true })
}

/// The message for an approval: the call and its buttons while it waits, how it ended after.
/// Every requester or model text in it goes through [`neutral::slack`].
pub fn message(approval: &ApprovalRow, channel: &str) -> Value {
    let args = neutral::lines(&serde_json::to_string_pretty(&approval.args()).unwrap_or_default(), neutral::slack);
    let asked_by = neutral::slack(approval.owner.as_deref().unwrap_or("someone"));
    let summary = neutral::slack(&approval.summary);
    let title = neutral::slack(&approval.conversation_title);
    if approval.state != ApprovalState::Pending {
        let by = neutral::slack(approval.decided_by.as_deref().unwrap_or("someone"));
        let text = format!("{summary}: {} by {by}", approval.state);
        return json!({
            "channel": channel,
            "text": text,
            "blocks": [{ "type": "section", "text": mrkdwn(format!("*{}* by {by}: {summary}", approval.state)) }],
        });
    }
    let deadline = format!("{} UTC", rfc3339(approval.deadline).get(..16).unwrap_or_default().replace('T', " "));
    // The whole requirement: who must approve (every gate's share), four-eyes, a fresh sign-in.
    let needs = approval.needs().map(|n| format!("\n{}", neutral::slack(&n))).unwrap_or_default();
    json!({
        "channel": channel,
        "text": format!("Approval needed: {summary}"),
        "blocks": [
            { "type": "section", "text": mrkdwn(format!(
                "*Approval needed*: {summary}\nRisk: *{}* · `{}` · asked in {asked_by}'s chat “{title}” · decide before {deadline}{needs}",
                approval.risk.as_str(), neutral::slack(&approval.tool))) },
            { "type": "section", "text": mrkdwn(format!("```{args}```")) },
            { "type": "actions", "block_id": "countersign", "elements": [
                { "type": "button", "action_id": "approve", "style": "primary", "value": approval.id,
                  "text": { "type": "plain_text", "text": "Approve" } },
                { "type": "button", "action_id": "reject", "style": "danger", "value": approval.id,
                  "text": { "type": "plain_text", "text": "Reject" } },
            ] },
        ],
    })
}

/// The Slack channel of the delivery worker (`engine/src/delivery.rs`): posts an approval's
/// message, or updates it once decided, one after another; each is audited.
pub struct SlackMessages {
    pub state: AppState,
    pub slack: Slack,
}

#[async_trait::async_trait]
impl Channel for SlackMessages {
    fn kind(&self) -> Kind {
        Kind::Slack
    }

    fn retry_after(&self, failed: u32) -> Option<Duration> {
        engine::delivery::backoff(Duration::from_secs(1), ATTEMPTS, failed)
    }

    async fn send(&self, delivery: &Delivery) -> Sent {
        let sent = match delivery.slack() {
            Ok((action, approval_id)) => send_one(&self.state, &self.slack, action, &approval_id).await,
            Err(why) => Err(Sent::GiveUp(why)),
        };
        sent.err().unwrap_or(Sent::Delivered)
    }
}

/// One post or update; why not as `Sent::Retry` / `Sent::GiveUp`.
async fn send_one(state: &AppState, slack: &Slack, action: SlackAction, approval_id: &ApprovalId) -> Result<(), Sent> {
    let internal = |e: anyhow::Error| Sent::Retry(format!("{e:#}"));
    let approval = state.reads.approval(approval_id).await.map_err(internal)?.ok_or(Sent::GiveUp("no such approval".to_owned()))?;
    let (method, body, channel) = match (action, state.reads.slack_message(approval_id).await.map_err(internal)?) {
        (SlackAction::Update, Some((channel, ts))) => {
            let mut body = message(&approval, &channel);
            body["ts"] = json!(ts);
            ("chat.update", body, channel)
        }
        (SlackAction::Update, None) => return Err(Sent::GiveUp("never posted".to_owned())),
        (SlackAction::Post, _) => ("chat.postMessage", message(&approval, &slack.config.channel), slack.config.channel.clone()),
    };
    let answer = slack.call(method, &body).await.map_err(Sent::Retry)?;
    // A new message's place, as Slack answered, to update it once the approval is decided (the
    // engine queues that update at once if it was decided while this was being posted).
    let posted = match method {
        "chat.postMessage" => Some((answer["channel"].as_str().unwrap_or(&channel), answer["ts"].as_str().unwrap_or_default())),
        _ => None,
    };
    let sent = SlackSent { approval_id, method, to: &channel, showed: approval.state, posted };
    state.notifications.slack_sent(sent).await.map_err(|e| internal(e.into()))?;
    Ok(())
}

pub fn router() -> Router<AppState> {
    Router::new().route("/slack/interactions", post(interaction))
}

/// What Slack shows the clicking person (only them).
fn reply(status: StatusCode, text: &str) -> Response {
    (status, Json(json!({ "response_type": "ephemeral", "replace_original": false, "text": text }))).into_response()
}

/// A button click: verified, mapped to a Countersign user, decided like any decision.
async fn interaction(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let Some(slack) = state.slack.as_ref() else { return reply(StatusCode::NOT_FOUND, "no Slack workspace is configured") };
    if let Err(why) = slack.verify(&headers, &body, now_ms() / 1000) {
        tracing::warn!(why, "refused a Slack request");
        return reply(StatusCode::UNAUTHORIZED, &format!("refused: {why}"));
    }
    let payload = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&body)
        .ok()
        .and_then(|form| form.into_iter().find(|(k, _)| k == "payload"))
        .and_then(|(_, p)| serde_json::from_str::<Value>(&p).ok());
    let Some(payload) = payload else { return reply(StatusCode::BAD_REQUEST, "expected a form with a JSON payload") };
    let action = &payload["actions"][0];
    let (Some(action_id), Some(approval_id)) = (action["action_id"].as_str(), action["value"].as_str()) else {
        return reply(StatusCode::BAD_REQUEST, "expected a block action with an approval");
    };
    let slack_user = payload["user"]["id"].as_str().unwrap_or_default();
    let Some(linked) = slack.config.users.get(slack_user) else {
        return reply(
            StatusCode::OK,
            &format!("Your Slack account ({slack_user}) is not linked to a Countersign user: nothing was decided."),
        );
    };
    // Linked by user name, or else by email address: the one account that has it (the identity
    // provider's email claim sets it at each sign-in). A user name may hold an @ too.
    let account = match state.reads.credentials(linked).await {
        Ok(Some(account)) => account,
        Ok(None) if linked.contains('@') => match state.reads.user_by_email(linked).await {
            Ok(Some(name)) => match state.reads.credentials(&name).await {
                Ok(Some(account)) => account,
                _ => return reply(StatusCode::OK, &format!("{name} has no Countersign account: nothing was decided.")),
            },
            _ => return reply(StatusCode::OK, &format!("No one Countersign account has the address {linked}: nothing was decided.")),
        },
        _ => return reply(StatusCode::OK, &format!("{linked} has no Countersign account: nothing was decided.")),
    };
    let username = &account.user.username;
    let reject = match action_id {
        "approve" => false,
        "reject" => true,
        other => return reply(StatusCode::BAD_REQUEST, &format!("unknown action {:?}", neutral::slack(other))),
    };
    let actor = Actor {
        name: account.user.username.clone(),
        user_id: Some(account.user.id.clone()),
        role: Some(account.user.role),
        ip: None,
        user_agent: Some("Slack".into()),
        on_behalf_of: None,
        via: Some(format!("slack {slack_user}")),
        signed_in_at: None,
    };
    // Someone who could not see it in Countersign cannot decide it from Slack either.
    let approval = match state.reads.approval(&approval_id.into()).await {
        Ok(Some(approval)) => approval,
        _ => return reply(StatusCode::OK, "That approval does not exist."),
    };
    if !state.reads.sees_approval(&approval, &actor).await.unwrap_or(false) {
        return reply(StatusCode::OK, &format!("{username} may not decide this approval: nothing was decided."));
    }
    // A button carries no reason, and one written on the decider's behalf would defeat the gate's
    // rule: such a rejection is made in Countersign. (A decided one gets its own answer below.)
    if reject && approval.state == ApprovalState::Pending && approval.rules().check_rejection(None).is_err() {
        return reply(
            StatusCode::OK,
            &format!(
                "This call needs a reason to reject, and a Slack button cannot give one: reject it in Countersign at {}/approvals. Nothing was decided.",
                state.base_url.trim_end_matches('/')
            ),
        );
    }
    let decision = if reject {
        Decision::Reject { reason: Some(format!("rejected in Slack by {username}")) }
    } else {
        Decision::Approve { args: None, grant: None }
    };
    match state.decisions.decide(&approval.id, decision, &actor).await {
        Ok(outcome) if outcome.outcome == ApprovalState::Pending => {
            reply(StatusCode::OK, &format!("Counted: {} of {} approvals.", outcome.approved_by.len(), outcome.quorum))
        }
        Ok(outcome) => reply(StatusCode::OK, &format!("{}: {}.", outcome.outcome, neutral::slack(&approval.summary))),
        Err(EngineError::WrongState(why) | EngineError::NotAllowed(why) | EngineError::Invalid { message: why, .. }) => {
            reply(StatusCode::OK, &format!("Not decided: {}", neutral::slack(&why)))
        }
        // The same per-user decision limit as the API's (counted by the engine).
        Err(EngineError::Limited { .. }) => reply(StatusCode::OK, "Too many decisions in the last minute: wait a moment and click again."),
        Err(other) => {
            tracing::error!(error = %other, "Slack decision");
            reply(StatusCode::OK, "Not decided: the server could not record it; try again.")
        }
    }
}
