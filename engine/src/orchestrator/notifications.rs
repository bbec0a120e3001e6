//! What the notification channels (server/src/channels: email, Slack) sent, recorded after each
//! message went out: audited as `notification.sent`, and a new Slack message's place kept so it
//! can be updated once the approval is decided. The messages were queued by the write that caused
//! them (`task_driver/model_step.rs` with `approval_emails.rs`, `decisions/waiting.rs`,
//! `decisions/decide.rs`; `store/outbox.rs`); the delivery worker hands them to their channel
//! (`crate::delivery`).

use domain::{ApprovalId, ApprovalState, AuditKind};
use serde_json::json;

use super::SYSTEM;
use crate::{
    Error,
    store::{
        Store, WriteScope, approvals,
        outbox::{self, EmailNotice, SlackAction},
        slack,
    },
};

/// Records what a channel sent: the only writes the notification channels make.
#[derive(Clone)]
pub struct Notifications {
    store: Store,
}

/// One Slack post or update as the channel sent it ([`Notifications::slack_sent`]).
pub struct SlackSent<'a> {
    pub approval_id: &'a ApprovalId,
    /// The Web API method called (`chat.postMessage`, `chat.update`), for the audit trail.
    pub method: &'a str,
    /// The channel it was sent to, for the audit trail.
    pub to: &'a str,
    /// The approval's state as the message showed it.
    pub showed: ApprovalState,
    /// A new message's channel and timestamp as Slack answered them, kept to update it once the
    /// approval is decided; `None` for an update.
    pub posted: Option<(&'a str, &'a str)>,
}

impl Notifications {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// An email about an approval went out to `address`, showing the approval as `showed`, with
    /// this `subject`: audited as sent by the server.
    pub async fn email_sent(&self, notice: &EmailNotice, address: &str, showed: ApprovalState, subject: &str) -> Result<(), Error> {
        let mut w = self.store.write(WriteScope::Approval(&notice.approval_id)).await?;
        w.audit(
            AuditKind::NotificationSent,
            SYSTEM,
            json!({
                "channel": "email", "to": notice.person, "address": address, "approval_id": notice.approval_id,
                "reminder": notice.reminder, "state": showed.as_str(), "subject": subject,
            }),
        );
        w.commit().await?;
        Ok(())
    }

    /// A Slack message about an approval was posted or updated: a new one's place is kept, and
    /// if the approval was decided while it was being posted (the decision then found no message
    /// to update), an update is queued in the same write. Audited as sent by the server.
    pub async fn slack_sent(&self, sent: SlackSent<'_>) -> Result<(), Error> {
        let SlackSent { approval_id, method, to, showed, posted } = sent;
        let mut w = self.store.write(WriteScope::Approval(approval_id)).await?;
        if let Some((channel, ts)) = posted {
            slack::record(&mut *w.tx, approval_id, channel, ts).await?;
            let now = approvals::get(&mut *w.tx, approval_id).await?;
            if showed == ApprovalState::Pending && now.is_some_and(|a| a.state != ApprovalState::Pending) {
                outbox::queue(&mut w.tx, outbox::Message::Slack { action: SlackAction::Update, approval_id }).await?;
            }
        }
        w.audit(
            AuditKind::NotificationSent,
            SYSTEM,
            json!({ "channel": "slack", "method": method, "to": to, "approval_id": approval_id, "state": showed.as_str() }),
        );
        w.commit().await?;
        Ok(())
    }
}
