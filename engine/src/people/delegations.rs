//! Delegation (out of office): a person lets another decide in their place for a period, wherever
//! a gate's `approvers` or an escalation name them. The decision rule (`decide::may_decide`) is
//! tried again as each person the actor stands in for; a decision made so is audited with
//! `on_behalf_of`, and a quorum counts it as that person's. Not transitive.

use crate::Error;
use domain::{AuditKind, Role, wire::NewDelegation};
use serde_json::json;

use super::People;
use crate::clock::{now_ms, rfc3339};
use crate::orchestrator::Actor;
use crate::store::{
    WriteScope,
    delegations::{self, DelegationRow},
    users,
};

/// The longest delegation: a long absence is a change of approvers, not a delegation.
const MAX_DAYS: i64 = 90;

impl People {
    /// Records a delegation from the actor (or, for an admin, from `from`) to `to`. 422 for an
    /// unknown person, oneself, or times that are not a future period of at most 90 days; 403 for
    /// a user setting one up for someone else.
    pub async fn delegate_decisions(&self, new: &NewDelegation, actor: &Actor) -> Result<DelegationRow, Error> {
        let mut w = self.store.write(WriteScope::People).await?;
        let from = match new.from.as_deref().map(str::trim).filter(|f| !f.eq_ignore_ascii_case(&actor.name)) {
            None => actor.name.clone(),
            Some(_) if actor.role != Some(Role::Admin) => {
                return Err(Error::NotAllowed("only an admin may set up a delegation for someone else".into()));
            }
            Some(other) => account(&mut w, other, "/from").await?,
        };
        let to = account(&mut w, new.to.trim(), "/to").await?;
        if to.eq_ignore_ascii_case(&from) {
            return Err(Error::invalid("/to", format!("{from} cannot delegate to themselves")));
        }
        let now = now_ms();
        let starts_at = match &new.starts_at {
            Some(at) => time(at, "/starts_at")?,
            None => now,
        };
        let ends_at = time(&new.ends_at, "/ends_at")?;
        if ends_at <= starts_at.max(now) {
            return Err(Error::invalid("/ends_at", "a delegation must end after it starts, and in the future".into()));
        }
        if ends_at - starts_at > MAX_DAYS * 24 * 3600 * 1000 {
            return Err(Error::invalid("/ends_at", format!("a delegation lasts at most {MAX_DAYS} days")));
        }
        let row = delegations::insert(&mut w.tx, &from, &to, starts_at, ends_at, &actor.name).await?;
        w.audit(
            AuditKind::DelegationCreated,
            &actor.name,
            json!({ "delegation_id": row.id, "from": from, "to": to, "starts_at": rfc3339(starts_at), "ends_at": rfc3339(ends_at) }),
        );
        w.commit().await?;
        Ok(row)
    }

    /// Ends a delegation now (its delegator, its delegate or an admin); 404 if it is not theirs to
    /// see, 409 if it already ended.
    pub async fn revoke_delegation(&self, id: &str, actor: &Actor) -> Result<DelegationRow, Error> {
        let mut w = self.store.write(WriteScope::People).await?;
        let row = delegations::get(&mut *w.tx, id)
            .await?
            .filter(|d| actor.role == Some(Role::Admin) || [&d.from_user, &d.to_user].iter().any(|p| p.eq_ignore_ascii_case(&actor.name)))
            .ok_or_else(|| Error::Unknown(format!("delegation {id} does not exist")))?;
        if row.revoked_at.is_some() || row.ends_at <= now_ms() {
            return Err(Error::WrongState(format!("delegation {id} has already ended")));
        }
        if !delegations::revoke(&mut w.tx, id, &actor.name).await? {
            return Err(Error::WrongState(format!("delegation {id} has already ended")));
        }
        w.audit(AuditKind::DelegationRevoked, &actor.name, json!({ "delegation_id": id, "from": row.from_user, "to": row.to_user }));
        w.commit().await?;
        Ok(delegations::get(&self.store, id).await?.unwrap_or(row))
    }
}

/// The account's user name for `name` (422 on `path` if there is none).
async fn account(w: &mut crate::store::Write, name: &str, path: &str) -> Result<String, Error> {
    match users::credentials(&mut *w.tx, name).await? {
        Some(c) => Ok(c.user.username),
        None => Err(Error::invalid(path, format!("no user is named {name:?}"))),
    }
}

fn time(text: &str, path: &str) -> Result<i64, Error> {
    domain::time::parse_rfc3339_ms(text)
        .ok_or_else(|| Error::invalid(path, format!("expected a time like 2026-12-24T09:00:00Z, got {text:?}")))
}
