//! Turning an account off (someone who left) or on again, by an admin. Off, it logs in neither with
//! a password nor through the identity provider, its sessions and tokens stop working on every
//! replica, and it leaves every stored group in the same write, which re-resolves the pending
//! approvals of those groups: it decides nothing any more. The delegations it gave or received
//! end in the same write (each audited as a revocation), so no one decides in its place and it
//! decides in no one's (`delegators_of` also ignores a turned-off account, whatever it finds).
//! Groups of the configuration file are changed there.

use domain::AuditKind;
use serde_json::json;

use super::{People, credentials};
use crate::{
    Error,
    people::resolve,
    store::{WriteScope, approvals, delegations, groups, users},
};

impl People {
    /// Turns `name`'s account off (see above), then tells every replica that its tokens and the
    /// account ended, so the event streams it opened, by token or by session, close
    /// (`credentials.rs`).
    pub async fn disable_user(&self, name: &str, by: &str) -> Result<(), Error> {
        if name.eq_ignore_ascii_case(by) {
            return Err(Error::WrongState("you cannot turn off your own account".into()));
        }
        let mut w = self.store.write(WriteScope::People).await?;
        let Some((user_id, username)) = users::set_disabled(&mut w.tx, name, true).await? else {
            return Err(Error::Unknown(format!("no user is named {name:?}")));
        };
        let left: Vec<String> = groups::groups_of(&mut w.tx, &username).await?.into_iter().map(|(name, _)| name).collect();
        for group in &left {
            groups::set_member(&mut w.tx, group, &username, false).await?;
            self.reresolve(&mut w, group).await?;
        }
        // Every other pending approval that names them (a file group, `user:`) is resolved again:
        // without them, and to the admins if no one is left.
        for approval in approvals::pending_naming_person(&mut *w.tx, &username).await? {
            let Some(before) = approval.approvers() else { continue };
            let now = resolve::resolve_again(&self.config_groups, &mut w, &before).await?;
            approvals::set_approvers(&mut w.tx, &approval.id, &now).await?;
        }
        let revoked_tokens = users::revoke_all_tokens(&mut w.tx, &username).await?;
        let ended = delegations::revoke_all_of(&mut w.tx, &username, by).await?;
        for d in &ended {
            let data = json!({ "delegation_id": d.id, "from": d.from_user, "to": d.to_user, "because": "user disabled" });
            w.audit(AuditKind::DelegationRevoked, by, data);
        }
        let in_file: Vec<&String> = self
            .config_groups
            .iter()
            .filter(|(_, members)| members.iter().any(|m| m.eq_ignore_ascii_case(&username)))
            .map(|(g, _)| g)
            .collect();
        w.audit(
            AuditKind::UserDisabled,
            by,
            json!({
                "user": username, "left_groups": left, "tokens_revoked": revoked_tokens.len(), "delegations_ended": ended.len(),
                "still_in_file_groups": in_file,
            }),
        );
        w.commit().await?;
        credentials::account_ended(&self.store, &user_id, &revoked_tokens).await?;
        Ok(())
    }

    pub async fn enable_user(&self, name: &str, by: &str) -> Result<(), Error> {
        let mut w = self.store.write(WriteScope::People).await?;
        let Some((_, username)) = users::set_disabled(&mut w.tx, name, false).await? else {
            return Err(Error::Unknown(format!("no user is named {name:?}")));
        };
        w.audit(AuditKind::UserEnabled, by, json!({ "user": username }));
        w.commit().await?;
        Ok(())
    }
}
