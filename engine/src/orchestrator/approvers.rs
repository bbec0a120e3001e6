//! Who may decide: a gate's `approvers` resolved to people when it asks, and the groups they name
//! — declared in the configuration file (`[[groups]]`, read-only) or managed by admins through the
//! API, audited, with every pending approval that names a changed group re-resolved. The rule
//! itself is `domain::rules::held_from`.

use std::sync::Arc;

use domain::{AuditKind, rules::Approvers};
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
            return Err(DecisionError::invalid(
                "/name",
                format!("a group's name must be 1 to 64 letters, digits, . _ - or @, got {name:?}"),
            ));
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

    /// Replaces a stored group's members (admins); pending approvals that name it, or were
    /// escalated to it, are decided by its new members from now on.
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

    /// Re-resolves the pending approvals that name a group of the configuration file, or were
    /// escalated to one: the file may have changed since they were asked (run at start-up). How
    /// many approvals that moved.
    pub async fn reresolve_configured_groups(self: &Arc<Self>) -> anyhow::Result<usize> {
        let mut moved = 0;
        for name in self.agents.groups.keys() {
            let mut w = self.store.write(Scope::People).await?;
            moved += self.reresolve(&mut w, name).await?;
            w.commit().await?;
        }
        Ok(moved)
    }

    fn refuse_config_group(&self, name: &str) -> Result<(), DecisionError> {
        if self.agents.groups.keys().any(|g| g.eq_ignore_ascii_case(name)) {
            return Err(DecisionError::Conflict(format!(
                "group {name:?} is declared in the configuration file ([[groups]]); change it there"
            )));
        }
        Ok(())
    }

    /// Re-resolves the approvers of every pending approval that names the group, and the people
    /// of every pending escalation to it; how many approvals that moved.
    async fn reresolve(&self, w: &mut Write, group: &str) -> anyhow::Result<usize> {
        let pending = approvals::pending_naming_group(&mut *w.tx, group).await?;
        for approval in &pending {
            let Some(before) = approval.approvers() else { continue };
            let now = self.resolve_approvers(w, &before.names).await?;
            approvals::set_approvers(&mut w.tx, &approval.id, &now).await?;
        }
        let escalated = approvals::pending_escalated_to(&mut *w.tx, group).await?;
        let people = self.group_people(w, group).await?.unwrap_or_default();
        for id in &escalated {
            approvals::set_escalated_members(&mut w.tx, id, &people).await?;
        }
        Ok(pending.len() + escalated.len())
    }
}

/// The accounts' user names for `members` (each must have one: 422 naming the first that does not).
async fn accounts(w: &mut Write, members: &[String]) -> Result<Vec<String>, DecisionError> {
    let mut names: Vec<String> = Vec::new();
    for (i, member) in members.iter().enumerate() {
        let Some(c) = users::credentials(&mut *w.tx, member.trim()).await? else {
            return Err(DecisionError::invalid(&format!("/members/{i}"), format!("no user is named {member:?}")));
        };
        if !names.iter().any(|n| n.eq_ignore_ascii_case(&c.user.username)) {
            names.push(c.user.username);
        }
    }
    names.sort();
    Ok(names)
}

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
                resolved = self.resolve_approvers(w, &gate.notify_to).await?;
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
