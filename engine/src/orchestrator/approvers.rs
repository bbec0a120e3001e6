//! Whom a gate's `notify = ["email"]` emails about an approval, and the queued email itself.
//! Who the approvers are is `crate::people::resolve`.

use domain::rules::Approvers;

use super::Orchestrator;
use crate::store::{Write, users};

/// One email about an approval, as queued in the outbox (`mailto:` deliveries) and read by the
/// sender (server/src/channels/email.rs).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct EmailNotice {
    pub approval_id: domain::ApprovalId,
    /// Whom it is for (their links are made for them).
    pub person: String,
    /// 0: it was just asked; n: the n-th reminder.
    #[serde(default)]
    pub reminder: u32,
}

impl Orchestrator {
    /// Whom a gate's `notify = ["email"]` emails, with their addresses: `notify_to`, else the
    /// approvers, else the admins. People without an address are left out (said in the log).
    pub(super) async fn email_recipients(
        &self,
        w: &mut Write,
        gate: &crate::agents::Gate,
        approvers: Option<&Approvers>,
    ) -> anyhow::Result<Vec<(String, String)>> {
        if !gate.notify.iter().any(|c| c == "email") {
            return Ok(Vec::new());
        }
        let resolved;
        let who = match (gate.notify_to.is_empty(), approvers) {
            (false, _) => {
                resolved = crate::people::resolve::resolve_approvers(&self.agents.groups, w, &gate.notify_to).await?;
                &resolved
            }
            (true, Some(approvers)) => approvers,
            (true, None) => {
                resolved = Approvers { names: vec!["role:admin".into()], people: Vec::new(), admins: true };
                &resolved
            }
        };
        let mut people = who.people.clone();
        if who.admins {
            people.extend(users::admins(&mut *w.tx).await?);
        }
        let mut recipients: Vec<(String, String)> = Vec::new();
        for person in people {
            if recipients.iter().any(|(p, _)| p.eq_ignore_ascii_case(&person)) {
                continue;
            }
            match users::email_of(&mut *w.tx, &person).await? {
                Some(address) => recipients.push((person, address)),
                None => tracing::warn!(%person, gate = %gate.name, "no email address: not emailed"),
            }
        }
        Ok(recipients)
    }
}

/// Queues an email about `approval_id` to each recipient, with the caller's transaction.
pub(super) async fn queue_emails(
    w: &mut Write,
    approval_id: &domain::ApprovalId,
    recipients: &[(String, String)],
    reminder: u32,
) -> anyhow::Result<()> {
    for (person, address) in recipients {
        let notice = EmailNotice { approval_id: approval_id.clone(), person: person.clone(), reminder };
        crate::store::outbox::insert(&mut w.tx, &crate::store::outbox::mailto(address), &serde_json::to_string(&notice)?).await?;
    }
    Ok(())
}
