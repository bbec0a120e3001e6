//! A person signed in through the identity provider (server/src/auth/oidc/ verified the token,
//! `identity.rs` read it). Their account is made at the first sign-in; at every one their role,
//! email and provider groups are set as the provider says, in one audited write that also
//! re-resolves the pending approvals of each group they joined or left — so a person the
//! provider no longer names as an approver stops deciding at once.

use domain::AuditKind;
use serde_json::json;

use super::{People, identity::Identity};
use crate::{
    Error,
    store::{WriteScope, groups, users, users::User},
};

impl People {
    pub async fn sign_in(&self, who: &Identity) -> Result<User, Error> {
        let mut w = self.store.write(WriteScope::People).await?;
        let (user, created) = match users::by_subject(&mut w.tx, &who.subject).await? {
            Some((user, true)) => {
                return Err(Error::NotAllowed(format!("{}'s account is disabled here; an admin can enable it", user.username)));
            }
            Some((user, false)) => (user, false),
            None => match users::insert_signed_in(&mut w.tx, &who.username, &who.subject, who.role).await? {
                Some(user) => (user, true),
                // Taking over a local account by its name would let whoever controls that name
                // at the provider act as it.
                None => {
                    return Err(Error::WrongState(format!(
                        "an account named {:?} already exists here and was not made by the identity provider; an admin must rename or remove it before this person can sign in",
                        who.username
                    )));
                }
            },
        };
        users::refresh_signed_in(&mut w.tx, &user.id, who.role, who.email.as_deref()).await?;

        let before: Vec<String> = groups::groups_of(&mut w.tx, &user.username)
            .await?
            .into_iter()
            .filter(|(_, from_idp)| *from_idp)
            .map(|(name, _)| name)
            .collect();
        let (mut joined, mut left, mut ignored) = (Vec::new(), Vec::new(), Vec::new());
        for group in &who.groups {
            // A group the file or an admin made keeps its members: the provider's of that name is
            // left out (said in the audit entry).
            if self.config_groups.keys().any(|g| g.eq_ignore_ascii_case(group)) {
                ignored.push(group.clone());
                continue;
            }
            groups::create_from_idp(&mut w.tx, group).await?;
            if groups::is_from_idp(&mut w.tx, group).await? != Some(true) {
                ignored.push(group.clone());
                continue;
            }
            if !before.iter().any(|b| b.eq_ignore_ascii_case(group)) {
                groups::set_member(&mut w.tx, group, &user.username, true).await?;
                joined.push(group.clone());
            }
        }
        for group in &before {
            if !who.groups.iter().any(|g| g.eq_ignore_ascii_case(group)) {
                groups::set_member(&mut w.tx, group, &user.username, false).await?;
                left.push(group.clone());
            }
        }
        for group in joined.iter().chain(&left) {
            self.reresolve(&mut w, group).await?;
        }
        w.audit(
            AuditKind::UserSignedIn,
            &user.username,
            json!({
                "created": created, "role": who.role.as_str(), "role_before": (!created).then(|| user.role.as_str()),
                "groups": who.groups, "joined": joined, "left": left, "ignored": ignored,
            }),
        );
        w.commit().await?;
        if !ignored.is_empty() {
            tracing::warn!(user = %user.username, ?ignored, "provider groups named like groups made here were left out");
        }
        Ok(User { role: who.role, ..user })
    }
}
