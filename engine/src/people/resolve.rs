//! Who a gate's `approvers` and a group name stand for, now: the rule the task driver asks with
//! when a call stops, and that people administration re-asks when a group changes. Groups come
//! from the configuration file (`[[groups]]`) first, then from the database.

use std::collections::BTreeMap;

use domain::rules::{Approvers, Share};

use crate::{
    approver_names::{ApproverName, parse_approver},
    store::{Write, groups, users},
};

/// A group's people — its members that have an account, as their user names are stored —
/// or `None` when no group has that name (names match ignoring case). The configuration
/// file's groups come first.
pub async fn group_people(config_groups: &BTreeMap<String, Vec<String>>, w: &mut Write, name: &str) -> anyhow::Result<Option<Vec<String>>> {
    let members = match config_groups.iter().find(|(g, _)| g.eq_ignore_ascii_case(name)) {
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
pub async fn resolve_approvers(
    config_groups: &BTreeMap<String, Vec<String>>,
    w: &mut Write,
    names: &[String],
) -> anyhow::Result<Approvers> {
    let mut approvers = Approvers { names: names.to_vec(), people: Vec::new(), admins: false, each: Vec::new() };
    for name in names {
        let people = match parse_approver(name) {
            Some(ApproverName::Admins) => {
                approvers.admins = true;
                continue;
            }
            Some(ApproverName::Group(group)) => group_people(config_groups, w, group).await?.unwrap_or_default(),
            Some(ApproverName::User(user)) => users::credentials(&mut *w.tx, user).await?.map(|c| c.user.username).into_iter().collect(),
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

/// Each matching gate's share of the approvers (`policy::Requirement::shares`: gate, approver
/// names, quorum), as people now. A share without names is anyone who may decide the call.
pub async fn resolve_shares(
    config_groups: &BTreeMap<String, Vec<String>>,
    w: &mut Write,
    shares: &[(&str, &[String], u32)],
) -> anyhow::Result<Vec<Share>> {
    let mut resolved = Vec::with_capacity(shares.len());
    for (gate, names, quorum) in shares {
        let (people, admins) = match names.is_empty() {
            true => (Vec::new(), false),
            false => {
                let approvers = resolve_approvers(config_groups, w, names).await?;
                (approvers.people, approvers.admins)
            }
        };
        resolved.push(Share { gate: (*gate).to_owned(), quorum: *quorum, names: names.to_vec(), people, admins });
    }
    Ok(resolved)
}

/// A call's approvers as people now: the union of the gates' `names` (who may decide at all) and
/// each gate's share when several apply ([`resolve_shares`]). A share whose names stand for no one
/// falls to the admins, so the admins may then decide at all.
pub async fn resolve_requirement(
    config_groups: &BTreeMap<String, Vec<String>>,
    w: &mut Write,
    names: &[String],
    shares: &[(&str, &[String], u32)],
) -> anyhow::Result<Approvers> {
    let mut approvers = resolve_approvers(config_groups, w, names).await?;
    approvers.each = resolve_shares(config_groups, w, shares).await?;
    approvers.admins |= approvers.each.iter().any(|s| s.admins);
    Ok(approvers)
}

/// A pending approval's approvers resolved again from the names it keeps (its union and each
/// gate's share), after a group or an account changed.
pub async fn resolve_again(config_groups: &BTreeMap<String, Vec<String>>, w: &mut Write, before: &Approvers) -> anyhow::Result<Approvers> {
    let shares: Vec<(&str, &[String], u32)> = before.each.iter().map(|s| (s.gate.as_str(), s.names.as_slice(), s.quorum)).collect();
    resolve_requirement(config_groups, w, &before.names, &shares).await
}
