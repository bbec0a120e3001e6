//! Email notifications over SMTP (lettre): when a gate with `notify = ["email"]` asks, each of its
//! recipients gets a message with the call's summary, risk, arguments and deadline and their own
//! signed approve / reject links; reminders re-send. A message is composed when it is sent, so
//! one sent after someone decided says so instead of offering links. Every message sent (or
//! given up on) is in the audit trail as `notification.sent`.

use std::time::Duration;

use domain::ApprovalState;
use lettre::{
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor,
    message::{Mailbox, MultiPart, SinglePart, header::ContentTransferEncoding, header::ContentType},
};

use engine::clock::rfc3339;
use engine::delivery::{Channel, Delivery, Kind, Sent};
use engine::reads::ApprovalRow;

use crate::{
    EngineError,
    channels::neutral,
    orchestrator::{Actor, EmailNotice},
    plain_page::escape_html,
    state::AppState,
};

/// Attempts per message before it is given up (backing off from 1 s).
const ATTEMPTS: u32 = 6;

/// The SMTP connection settings and the sender.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl Mailer {
    pub fn new(smtp_url: &str, from: &str) -> anyhow::Result<Self> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(smtp_url)
            .map_err(|e| anyhow::anyhow!("COUNTERSIGN_SMTP_URL: {e}"))?
            .timeout(Some(Duration::from_secs(10)))
            .build();
        let from = from.parse().map_err(|e| anyhow::anyhow!("COUNTERSIGN_MAIL_FROM {from:?}: {e}"))?;
        Ok(Self { transport, from })
    }
}

/// The email channel of the delivery worker (`engine/src/delivery.rs`): composes each message
/// when it is sent, one after another.
pub struct Emails {
    pub state: AppState,
    pub mailer: Mailer,
}

#[async_trait::async_trait]
impl Channel for Emails {
    fn kind(&self) -> Kind {
        Kind::Email
    }

    fn retry_after(&self, failed: u32) -> Option<Duration> {
        engine::delivery::backoff(Duration::from_secs(1), ATTEMPTS, failed)
    }

    async fn send(&self, delivery: &Delivery) -> Sent {
        let sent = match delivery.email() {
            Ok(notice) => send_one(&self.state, &self.mailer, &notice, &delivery.target).await,
            Err(why) => Err(Sent::GiveUp(why)),
        };
        sent.err().unwrap_or(Sent::Delivered)
    }
}

/// Sent, or why not (`Sent::Retry` / `Sent::GiveUp`).
async fn send_one(state: &AppState, mailer: &Mailer, notice: &EmailNotice, address: &str) -> Result<(), Sent> {
    let internal = |e: anyhow::Error| Sent::Retry(format!("{e:#}"));
    let approval = state
        .reads
        .approval(&notice.approval_id)
        .await
        .map_err(internal)?
        .ok_or_else(|| Sent::GiveUp("the approval does not exist".into()))?;
    let to: Mailbox =
        format!("{} <{address}>", notice.person).parse().map_err(|e| Sent::GiveUp(format!("bad address {address:?}: {e}")))?;
    let (subject, text, html) = match approval.state {
        ApprovalState::Pending => {
            let account = state
                .reads
                .credentials(&notice.person)
                .await
                .map_err(internal)?
                .ok_or_else(|| Sent::GiveUp(format!("{} has no account any more", notice.person)))?;
            let person = Actor {
                name: account.user.username,
                user_id: Some(account.user.id),
                role: Some(account.user.role),
                ip: None,
                user_agent: None,
                on_behalf_of: None,
                via: None,
                signed_in_at: None,
            };
            match crate::links::issue(
                state,
                &approval.id,
                &person,
                crate::links::MAX_TTL_SECS,
                crate::orchestrator::SYSTEM,
                &state.base_url,
            )
            .await
            {
                Ok(links) => compose_pending(&approval, notice.reminder, Ok((&links.approve_url, &links.reject_url)), &state.base_url),
                // Told (the gate's notify_to), but not one who decides: no links.
                Err(EngineError::NotAllowed(why)) => compose_pending(&approval, notice.reminder, Err(&why), &state.base_url),
                Err(EngineError::WrongState(why)) => return Err(Sent::GiveUp(why)),
                Err(other) => return Err(Sent::Retry(other.to_string())),
            }
        }
        _ => compose_decided(&approval, &state.base_url),
    };
    let message = Message::builder()
        .from(mailer.from.clone())
        .to(to)
        .subject(&subject)
        .multipart(MultiPart::alternative().singlepart(part(ContentType::TEXT_PLAIN, text)).singlepart(part(ContentType::TEXT_HTML, html)))
        .map_err(|e| Sent::GiveUp(format!("could not build the message: {e}")))?;
    mailer.transport.send(message).await.map_err(|e| Sent::Retry(format!("SMTP: {e}")))?;
    state.notifications.email_sent(notice, address, approval.state, &subject).await.map_err(|e| internal(e.into()))?;
    Ok(())
}

/// A body part as quoted-printable text (what every mail reader decodes; long link lines are
/// folded with soft line breaks).
fn part(content_type: ContentType, body: String) -> SinglePart {
    SinglePart::builder().header(content_type).header(ContentTransferEncoding::QuotedPrintable).body(body)
}

/// Subject, text and HTML of a message about a pending approval.
/// `links`: the recipient's approve and reject links; `Err(why)` for a recipient the gate only
/// informs (`notify_to` named them, but they may not decide it): the message says who decides.
/// Titles, summaries and arguments are the requester's or the model's: made inert
/// ([`neutral::line`]) so none can add a line (a fake "Approve:" link) or reorder what is shown.
pub fn compose_pending(
    approval: &ApprovalRow,
    reminder: u32,
    links: Result<(&str, &str), &str>,
    base_url: &str,
) -> (String, String, String) {
    let summary = neutral::line(&approval.summary);
    let title = neutral::line(&approval.conversation_title);
    let subject = match reminder {
        0 => format!("Approval needed: {summary}"),
        n => format!("Reminder {n}: approval needed: {summary}"),
    };
    let args = neutral::lines(&serde_json::to_string_pretty(&approval.args()).unwrap_or_default(), neutral::line);
    let deadline = format!("{} UTC", rfc3339(approval.deadline).get(..16).unwrap_or_default().replace('T', " "));
    let owner = neutral::line(approval.owner.as_deref().unwrap_or("someone"));
    let agent = neutral::line(&approval.agent);
    let tool = neutral::line(&approval.tool);
    let consequences = neutral::line(&approval.assessment().map(|a| a.consequences).filter(|c| !c.is_empty()).unwrap_or_default());
    let decide_text = match links {
        Ok((approve, reject)) => format!("Approve: {approve}\nReject: {reject}\n\nOr open"),
        Err(why) => format!("You are told, not asked: {}.\n\nOpen", neutral::line(why)),
    };
    let decide_html = match links {
        Ok((approve, reject)) => format!(
            "<p><a href=\"{}\" style=\"background:#1a7f4b;color:#fff;padding:8px 16px;border-radius:6px;text-decoration:none\">Approve</a> \
             <a href=\"{}\" style=\"background:#b42318;color:#fff;padding:8px 16px;border-radius:6px;text-decoration:none\">Reject</a></p><p>Or open",
            escape_html(approve),
            escape_html(reject)
        ),
        Err(why) => format!("<p>You are told, not asked: {}.</p><p>Open", escape_html(&neutral::line(why))),
    };
    // The whole requirement: who must approve (every gate's share), four-eyes, a fresh sign-in.
    let needs = approval.needs();
    let needs_text = needs.as_deref().map(|n| format!("{n}.\n")).unwrap_or_default();
    let needs_html = needs.as_deref().map(|n| format!("<p>{}.</p>", escape_html(n))).unwrap_or_default();
    let text = format!(
        "{owner}'s agent {agent} wants to run {tool} in the chat \"{title}\".\n\n{summary}\nRisk: {risk}. {consequences}\n\nArguments:\n{args}\n\n\
         {needs_text}Decide before {deadline}.\n\n{decide_text} the approval queue: {base_url}/approvals\n",
        risk = approval.risk.as_str(),
    );
    let html = format!(
        "<p>{owner}'s agent <b>{agent}</b> wants to run <code>{tool}</code> in the chat “{title}”.</p>\
         <p style=\"font-size:1.1em\"><b>{summary}</b></p><p>Risk: <b>{risk}</b>. {consequences}</p><pre>{args}</pre>\
         {needs_html}<p>Decide before {deadline}.</p>{decide_html} the <a href=\"{queue}\">approval queue</a>.</p>",
        owner = escape_html(&owner),
        agent = escape_html(&agent),
        tool = escape_html(&tool),
        title = escape_html(&title),
        summary = escape_html(&summary),
        risk = approval.risk.as_str(),
        consequences = escape_html(&consequences),
        args = escape_html(&args),
        queue = escape_html(&format!("{base_url}/approvals")),
    );
    (subject, text, html)
}

/// Subject, text and HTML of a message composed after someone decided: no links, who was first.
pub fn compose_decided(approval: &ApprovalRow, base_url: &str) -> (String, String, String) {
    let by = neutral::line(approval.decided_by.as_deref().unwrap_or("someone"));
    let summary = neutral::line(&approval.summary);
    let line = format!("{summary} was already {} by {by}. Nothing to do.", approval.state);
    let subject = format!("Decided: {summary}");
    let text = format!("{line}\n\nThe approval queue: {base_url}/approvals\n");
    let html = format!("<p>{}</p>", escape_html(&line));
    (subject, text, html)
}
