//! Signed decision links as the engine records them (docs/api.md, "Signed decision links"): a pair
//! issued for one person, the same person's links emailed to them when an admin asked for them,
//! and a pair revoked before it expires. Each is one audited write; the two that hand out links
//! check inside it that the approval still waits and that its person may decide it now and sees
//! it, so no link is recorded on what a decision or a change of who may decide just ended. The
//! token, its signature and the URLs are the server's (server/src/links); following a link
//! decides through [`Decisions::decide`](super::Decisions::decide), which checks it all again.
//! The key they are signed with, when none is configured, is kept here too (made once, shared by
//! every replica).

use domain::{ApprovalId, AuditKind, Role};
use serde_json::json;
use sqlx::AnyConnection;

use super::{
    Actor,
    decisions::{decider_in, pending_approval},
    four_eyes,
};
use crate::{
    Error,
    clock::{new_id, now_ms, rfc3339},
    store::{
        Db, Store, WriteScope,
        approvals::ApprovalRow,
        decision_links, delegations,
        outbox::{self, EmailNotice},
        secrets,
    },
};

/// Issuing, emailing and revoking decision links: the only writes of `decision_links` rows, of
/// the emails an admin has sent with someone's links, and of the stored link key.
#[derive(Clone)]
pub struct DecisionLinks {
    store: Store,
}

/// A pair of links as recorded: what the server signs them with (their id, when they stop
/// working, and the approval whose call they decide).
pub struct IssuedLink {
    pub link_id: String,
    /// Unix ms: `ttl_secs` from now, never past the approval's deadline.
    pub expires_at: i64,
    pub approval: ApprovalRow,
}

impl DecisionLinks {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// The secret links are signed with when none is configured: the one stored, or `fresh`
    /// stored now (the first replica to store one wins, so every replica signs and checks with
    /// the same one; store/secrets.rs).
    pub async fn signing_key(&self, fresh: String) -> anyhow::Result<String> {
        secrets::get_or_create(&self.store, "link_key", fresh).await
    }

    /// Records a pair of links for `decider` on a pending approval they may decide now (an
    /// approve link they could not use, four-eyes, is not made) and see, working for `ttl_secs`
    /// (the caller's bounds) or until the deadline, whichever comes first; audited
    /// (`link.issued`) as done by `by`. A refusal is `NotAllowed`, a decided approval
    /// `WrongState`, a missing one `Unknown`.
    pub async fn issue(&self, approval_id: &ApprovalId, decider: &Actor, ttl_secs: i64, by: &str) -> Result<IssuedLink, Error> {
        let mut w = self.store.write(WriteScope::Approval(approval_id)).await?;
        w.hold_authority().await?;
        let approval = may_receive_links(&mut w.tx, approval_id, decider).await?;
        let expires_at = now_ms().saturating_add(ttl_secs.saturating_mul(1000)).min(approval.deadline);
        let link_id: String = new_id();
        let record =
            decision_links::NewLink { id: &link_id, approval_id: approval.id.as_str(), decider: &decider.name, issued_by: by, expires_at };
        decision_links::insert(&mut w.tx, record).await?;
        w.audit(
            AuditKind::LinkIssued,
            by,
            json!({ "approval_id": approval.id, "link_id": link_id, "decider": decider.name, "expires_at": rfc3339(expires_at) }),
        );
        w.commit().await?;
        Ok(IssuedLink { link_id, expires_at, approval })
    }

    /// Queues an email to `decider` at `address` with their own links, which its sender makes
    /// for them alone when it goes out (server/src/channels/email.rs), so that no one else ever
    /// sees them (docs/security.md); audited (`link.issued`, sent by email) as done by `by`, the
    /// admin who asked. Checked as [`Self::issue`] checks, inside the write.
    pub async fn send_by_email(&self, approval_id: &ApprovalId, decider: &Actor, address: &str, by: &Actor) -> Result<(), Error> {
        let mut w = self.store.write(WriteScope::Approval(approval_id)).await?;
        w.hold_authority().await?;
        let approval = may_receive_links(&mut w.tx, approval_id, decider).await?;
        let notice = EmailNotice { approval_id: approval.id.clone(), person: decider.name.clone(), reminder: 0 };
        outbox::queue(&mut w.tx, outbox::Message::Email { address, notice: &notice }).await?;
        w.audit(
            AuditKind::LinkIssued,
            &by.name,
            json!({ "approval_id": approval.id, "decider": decider.name, "sent_by": "email", "ip": by.ip }),
        );
        w.commit().await?;
        Ok(())
    }

    /// Revokes a pair of links before it expires, by the person they decide as or an admin
    /// (anyone else is told there is no such pair: `Unknown`); a pair revoked already is
    /// `WrongState`. Audited (`link.revoked`). The pair is read first to find the approval the
    /// write is ordered by; whether it was still in force is decided by the write's conditional
    /// update.
    pub async fn revoke(&self, link_id: &str, by: &Actor) -> Result<(), Error> {
        let link = decision_links::get(&self.store, link_id)
            .await?
            .filter(|l| by.role == Some(Role::Admin) || l.decider.eq_ignore_ascii_case(&by.name))
            .ok_or_else(|| Error::Unknown(format!("no decision links {link_id} of yours")))?;
        let approval_id = ApprovalId::from(link.approval_id.clone());
        let mut w = self.store.write(WriteScope::Approval(&approval_id)).await?;
        if !decision_links::revoke(&mut w.tx, link_id, &by.name).await? {
            return Err(Error::WrongState(format!("decision links {link_id} are already revoked")));
        }
        w.audit(
            AuditKind::LinkRevoked,
            &by.name,
            json!({ "link_id": link_id, "approval_id": link.approval_id, "decider": link.decider, "ip": by.ip }),
        );
        w.commit().await?;
        Ok(())
    }
}

/// The approval, if it still waits, `decider` may decide it now (as themselves or standing in
/// for someone), may approve it (four-eyes) and sees it: who links may be made for, on the
/// write's connection.
async fn may_receive_links(conn: &mut AnyConnection, approval_id: &ApprovalId, decider: &Actor) -> Result<ApprovalRow, Error> {
    let approval = pending_approval(conn, approval_id).await?;
    let as_decider = decider_in(conn, decider, &approval).await?;
    four_eyes(&as_decider, &approval)?;
    if !sees_approval(&mut *conn, &approval, decider).await? {
        return Err(Error::NotAllowed(format!("{} does not see this approval (not theirs, not named to decide it)", decider.name)));
    }
    Ok(approval)
}

/// May this person see the approval, as the API would let them: its owner, an admin, one of its
/// gate's approvers or an escalation's names, or someone standing in for one now. A link is
/// never made for, nor used by, anyone else, and a chat app's button decides for no one else.
pub async fn sees_approval(db: impl Into<Db<'_>>, approval: &ApprovalRow, person: &Actor) -> anyhow::Result<bool> {
    if person.role == Some(Role::Admin)
        || approval.owner.as_deref().is_some_and(|o| o.eq_ignore_ascii_case(&person.name))
        || approval.decided_by_user(&person.name)
    {
        return Ok(true);
    }
    let principals = delegations::delegators_of(db, &person.name, now_ms()).await?;
    Ok(principals.iter().any(|p| approval.decided_by_user(p)))
}
