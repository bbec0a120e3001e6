//! What the notification channels (server/src/channels) read while sending: where an approval's
//! Slack message was posted, so that the message is updated once the approval is decided.

use domain::ApprovalId;

use super::Reads;
use crate::store::slack;

impl Reads {
    /// The channel and timestamp (`ts`) of the Slack message posted about this approval, if one
    /// was (recorded by `Notifications::slack_sent`, engine/src/orchestrator/notifications.rs).
    pub async fn slack_message(&self, approval_id: &ApprovalId) -> anyhow::Result<Option<(String, String)>> {
        slack::message_of(&self.store, approval_id).await
    }
}
