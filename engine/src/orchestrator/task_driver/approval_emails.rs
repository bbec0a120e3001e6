//! Whom a gate's `notify = ["email"]` emails about an approval, and queuing those emails (`store/outbox.rs`).
//! Who the approvers are is `crate::people::resolve`.

use domain::rules::Approvers;

use super::TaskDriver;
use crate::store::{
    Write,
    outbox::{self, EmailNotice},
    users,
};

impl TaskDriver {
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
                resolved = crate::people::resolve::resolve_approvers(&self.ctx.agents.groups, w, &gate.notify_to).await?;
                &resolved
            }
            (true, Some(approvers)) => approvers,
            (true, None) => {
                resolved = Approvers { names: vec!["role:admin".into()], people: Vec::new(), admins: true, each: Vec::new() };
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
pub(in crate::orchestrator) async fn queue_emails(
    w: &mut Write,
    approval_id: &domain::ApprovalId,
    recipients: &[(String, String)],
    reminder: u32,
) -> anyhow::Result<()> {
    for (person, address) in recipients {
        let notice = EmailNotice { approval_id: approval_id.clone(), person: person.clone(), reminder };
        outbox::queue(&mut w.tx, outbox::Message::Email { address, notice: &notice }).await?;
    }
    Ok(())
}
