//! Approver groups that admins manage through the API, beside the configuration file's
//! (`[[groups]]`, read-only): each change is audited, and every pending approval that names the
//! group, or was escalated to it, is re-resolved in the same write.

use crate::Error;
use domain::AuditKind;
use serde_json::json;

use super::{People, resolve};
use crate::{
    approver_names::valid_target,
    store::{Write, WriteScope, approvals, groups, users},
};

/// A group as the API lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    pub members: Vec<String>,
    /// Declared in the configuration file: changed there, not through the API.
    pub from_config: bool,
    /// Named by the identity provider: changed there (at each member's sign-in), not through the API.
    pub from_idp: bool,
}

impl People {
    /// Every group, the configuration file's first.
    pub async fn groups(&self) -> anyhow::Result<Vec<Group>> {
        let mut all: Vec<Group> = self
            .config_groups
            .iter()
            .map(|(name, members)| Group { name: name.clone(), members: members.clone(), from_config: true, from_idp: false })
            .collect();
        for g in groups::list(&self.store).await? {
            all.push(Group { name: g.name, members: g.members, from_config: false, from_idp: g.from_idp });
        }
        Ok(all)
    }

    /// Creates a group (admins); 409 if the name is taken, 422 for a bad name or a member without
    /// an account.
    pub async fn create_group(&self, name: &str, members: &[String], by: &str) -> Result<Group, Error> {
        if !valid_target(name) {
            return Err(Error::invalid("/name", format!("a group's name must be 1 to 64 letters, digits, . _ - or @, got {name:?}")));
        }
        self.refuse_config_group(name)?;
        let mut w = self.store.write(WriteScope::People).await?;
        let members = accounts(&mut w, members).await?;
        if !groups::create(&mut w.tx, name, by).await? {
            return Err(Error::WrongState(format!("a group named {name:?} already exists")));
        }
        groups::set_members(&mut w.tx, name, &members).await?;
        w.audit(AuditKind::GroupCreated, by, json!({ "group": name, "members": members }));
        self.reresolve(&mut w, name).await?;
        w.commit().await?;
        Ok(Group { name: name.to_owned(), members, from_config: false, from_idp: false })
    }

    /// Replaces a stored group's members (admins); pending approvals that name it, or were
    /// escalated to it, are decided by its new members from now on.
    pub async fn set_group_members(&self, name: &str, members: &[String], by: &str) -> Result<Group, Error> {
        self.refuse_config_group(name)?;
        let mut w = self.store.write(WriteScope::People).await?;
        refuse_idp_group(&mut w, name).await?;
        let Some(before) = groups::members(&mut *w.tx, name).await? else {
            return Err(Error::Unknown(format!("group {name:?} does not exist")));
        };
        let members = accounts(&mut w, members).await?;
        groups::set_members(&mut w.tx, name, &members).await?;
        w.audit(AuditKind::GroupChanged, by, json!({ "group": name, "members": members, "before": before }));
        let moved = self.reresolve(&mut w, name).await?;
        w.commit().await?;
        tracing::info!(group = %name, pending_approvals = moved, "group changed");
        Ok(Group { name: name.to_owned(), members, from_config: false, from_idp: false })
    }

    /// Deletes a stored group (admins). Pending approvals that named it keep their other
    /// approvers (the admins when none is left).
    pub async fn delete_group(&self, name: &str, by: &str) -> Result<(), Error> {
        self.refuse_config_group(name)?;
        let mut w = self.store.write(WriteScope::People).await?;
        refuse_idp_group(&mut w, name).await?;
        let before = groups::members(&mut *w.tx, name).await?;
        if !groups::delete(&mut w.tx, name).await? {
            return Err(Error::Unknown(format!("group {name:?} does not exist")));
        }
        w.audit(AuditKind::GroupDeleted, by, json!({ "group": name, "members": before.unwrap_or_default() }));
        self.reresolve(&mut w, name).await?;
        w.commit().await?;
        Ok(())
    }

    /// Re-resolves the pending approvals that name a group of the configuration file, or were
    /// escalated to one: the file may have changed since they were asked (run at start-up). How
    /// many approvals that moved.
    pub async fn reresolve_configured_groups(&self) -> anyhow::Result<usize> {
        let mut moved = 0;
        for name in self.config_groups.keys() {
            let mut w = self.store.write(WriteScope::People).await?;
            moved += self.reresolve(&mut w, name).await?;
            w.commit().await?;
        }
        Ok(moved)
    }

    fn refuse_config_group(&self, name: &str) -> Result<(), Error> {
        if self.config_groups.keys().any(|g| g.eq_ignore_ascii_case(name)) {
            return Err(Error::WrongState(format!("group {name:?} is declared in the configuration file ([[groups]]); change it there")));
        }
        Ok(())
    }

    /// Re-resolves the approvers of every pending approval that names the group, and the people
    /// of every pending escalation to it; how many approvals that moved.
    pub(super) async fn reresolve(&self, w: &mut Write, group: &str) -> anyhow::Result<usize> {
        let pending = approvals::pending_naming_group(&mut *w.tx, group).await?;
        for approval in &pending {
            let Some(before) = approval.approvers() else { continue };
            let now = resolve::resolve_again(&self.config_groups, w, &before).await?;
            approvals::set_approvers(&mut w.tx, &approval.id, &now).await?;
        }
        let escalated = approvals::pending_escalated_to(&mut *w.tx, group).await?;
        let people = resolve::group_people(&self.config_groups, w, group).await?.unwrap_or_default();
        for id in &escalated {
            approvals::set_escalated_members(&mut w.tx, id, &people).await?;
        }
        Ok(pending.len() + escalated.len())
    }
}

/// A group the identity provider names is changed there (409).
async fn refuse_idp_group(w: &mut Write, name: &str) -> Result<(), Error> {
    if groups::is_from_idp(&mut w.tx, name).await? == Some(true) {
        return Err(Error::WrongState(format!(
            "group {name:?} comes from the identity provider; change its members there (they take effect at each member's next sign-in)"
        )));
    }
    Ok(())
}

/// The accounts' user names for `members` (each must have one: 422 naming the first that does not).
async fn accounts(w: &mut Write, members: &[String]) -> Result<Vec<String>, Error> {
    let mut names: Vec<String> = Vec::new();
    for (i, member) in members.iter().enumerate() {
        let Some(c) = users::credentials(&mut *w.tx, member.trim()).await? else {
            return Err(Error::invalid(&format!("/members/{i}"), format!("no user is named {member:?}")));
        };
        if !names.iter().any(|n| n.eq_ignore_ascii_case(&c.user.username)) {
            names.push(c.user.username);
        }
    }
    names.sort();
    Ok(names)
}
