//! Who may decide: a gate's `approvers` resolved to people when it asks, and the groups they name
//! — declared in the configuration file (`[[groups]]`, read-only) or managed by admins through the
//! API, audited, with every pending approval that names a changed group re-resolved. The rule
//! itself is `app::domain::rules::held_from`.

use std::sync::Arc;

use app::domain::{AuditKind, rules::Approvers};
use serde_json::json;

use super::{Orchestrator, decide::DecisionError};
use crate::{
    agents::{ApproverName, parse_approver, valid_target},
    store::{Scope, Write, approvals, groups, users},
};

/// A group as the API lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    pub members: Vec<String>,
    /// Declared in the configuration file: changed there, not through the API.
    pub from_config: bool,
}

impl Orchestrator {
    /// A group's people — its members that have an account, as their user names are stored —
    /// or `None` when no group has that name (names match ignoring case). The configuration
    /// file's groups come first.
    pub(super) async fn group_people(&self, w: &mut Write, name: &str) -> anyhow::Result<Option<Vec<String>>> {
        let members = match self.agents.groups.iter().find(|(g, _)| g.eq_ignore_ascii_case(name)) {
            Some((_, members)) => members.clone(),
            None => match groups::members(&mut *w.tx, name).await? {
                Some(members) => members,
                None => return Ok(None),
            },
        };
        let mut people = Vec::new();
        for member in &members {
            match users::credentials(&mut *w.tx, member).await? {
                Some(c) => people.push(c.user.username),
                None => tracing::warn!(group = %name, %member, "a group member has no account; left out"),
            }
        }
        Ok(Some(people))
    }

    /// A gate's `approvers` as people, now. Names that stand for no one are left out (said in the
    /// log); when all of them are, the admins decide rather than nobody.
    pub(super) async fn resolve_approvers(&self, w: &mut Write, names: &[String]) -> anyhow::Result<Approvers> {
        let mut approvers = Approvers { names: names.to_vec(), people: Vec::new(), admins: false };
        for name in names {
            let people = match parse_approver(name) {
                Some(ApproverName::Admins) => {
                    approvers.admins = true;
                    continue;
                }
                Some(ApproverName::Group(group)) => self.group_people(w, group).await?.unwrap_or_default(),
                Some(ApproverName::User(user)) => {
                    users::credentials(&mut *w.tx, user).await?.map(|c| c.user.username).into_iter().collect()
                }
                None => Vec::new(),
            };
            if people.is_empty() {
                tracing::warn!(approver = %name, "a gate's approver stands for no one");
            }
            for person in people {
                if !approvers.people.iter().any(|p| p.eq_ignore_ascii_case(&person)) {
                    approvers.people.push(person);
                }
            }
        }
        if approvers.people.is_empty() {
            approvers.admins = true;
        }
        Ok(approvers)
    }

    /// Every group, the configuration file's first.
    pub async fn groups(&self) -> anyhow::Result<Vec<Group>> {
        let mut all: Vec<Group> = self
            .agents
            .groups
            .iter()
            .map(|(name, members)| Group { name: name.clone(), members: members.clone(), from_config: true })
            .collect();
        for (name, members) in groups::list(self.store.pool()).await? {
            all.push(Group { name, members, from_config: false });
        }
        Ok(all)
    }

    /// Creates a group (admins); 409 if the name is taken, 422 for a bad name or a member without
    /// an account.
    pub async fn create_group(self: &Arc<Self>, name: &str, members: &[String], by: &str) -> Result<Group, DecisionError> {
        if !valid_target(name) {
            return Err(invalid("/name", format!("a group's name must be 1 to 64 letters, digits, . _ - or @, got {name:?}")));
        }
        self.refuse_config_group(name)?;
        let mut w = self.store.write(Scope::People).await?;
        let members = accounts(&mut w, members).await?;
        if !groups::create(&mut w.tx, name, by).await? {
            return Err(DecisionError::Conflict(format!("a group named {name:?} already exists")));
        }
        groups::set_members(&mut w.tx, name, &members).await?;
        w.audit(AuditKind::GroupCreated, by, json!({ "group": name, "members": members }));
        self.reresolve(&mut w, name).await?;
        w.commit().await?;
        Ok(Group { name: name.to_owned(), members, from_config: false })
    }

    /// Replaces a stored group's members (admins); pending approvals that name it are decided by
    /// its new members from now on.
    pub async fn set_group_members(self: &Arc<Self>, name: &str, members: &[String], by: &str) -> Result<Group, DecisionError> {
        self.refuse_config_group(name)?;
        let mut w = self.store.write(Scope::People).await?;
        let Some(before) = groups::members(&mut *w.tx, name).await? else {
            return Err(DecisionError::NotFound(format!("group {name:?} does not exist")));
        };
        let members = accounts(&mut w, members).await?;
        groups::set_members(&mut w.tx, name, &members).await?;
        w.audit(AuditKind::GroupChanged, by, json!({ "group": name, "members": members, "before": before }));
        let moved = self.reresolve(&mut w, name).await?;
        w.commit().await?;
        tracing::info!(group = %name, pending_approvals = moved, "group changed");
        Ok(Group { name: name.to_owned(), members, from_config: false })
    }

    /// Deletes a stored group (admins). Pending approvals that named it keep their other
    /// approvers (the admins when none is left).
    pub async fn delete_group(self: &Arc<Self>, name: &str, by: &str) -> Result<(), DecisionError> {
        self.refuse_config_group(name)?;
        let mut w = self.store.write(Scope::People).await?;
        let before = groups::members(&mut *w.tx, name).await?;
        if !groups::delete(&mut w.tx, name).await? {
            return Err(DecisionError::NotFound(format!("group {name:?} does not exist")));
        }
        w.audit(AuditKind::GroupDeleted, by, json!({ "group": name, "members": before.unwrap_or_default() }));
        self.reresolve(&mut w, name).await?;
        w.commit().await?;
        Ok(())
    }

    fn refuse_config_group(&self, name: &str) -> Result<(), DecisionError> {
        if self.agents.groups.keys().any(|g| g.eq_ignore_ascii_case(name)) {
            return Err(DecisionError::Conflict(format!(
                "group {name:?} is declared in the configuration file ([[groups]]); change it there"
            )));
        }
        Ok(())
    }

    /// Re-resolves the approvers of every pending approval that names the group; how many.
    async fn reresolve(&self, w: &mut Write, group: &str) -> anyhow::Result<usize> {
        let pending = approvals::pending_naming_group(&mut *w.tx, group).await?;
        for approval in &pending {
            let Some(before) = approval.approvers() else { continue };
            let now = self.resolve_approvers(w, &before.names).await?;
            approvals::set_approvers(&mut w.tx, &approval.id, &now).await?;
        }
        Ok(pending.len())
    }
}

/// The accounts' user names for `members` (each must have one: 422 naming the first that does not).
async fn accounts(w: &mut Write, members: &[String]) -> Result<Vec<String>, DecisionError> {
    let mut names: Vec<String> = Vec::new();
    for (i, member) in members.iter().enumerate() {
        let Some(c) = users::credentials(&mut *w.tx, member.trim()).await? else {
            return Err(invalid(&format!("/members/{i}"), format!("no user is named {member:?}")));
        };
        if !names.iter().any(|n| n.eq_ignore_ascii_case(&c.user.username)) {
            names.push(c.user.username);
        }
    }
    names.sort();
    Ok(names)
}

fn invalid(path: &str, message: String) -> DecisionError {
    DecisionError::Invalid { details: vec![json!({ "path": path, "message": message })], message }
}
