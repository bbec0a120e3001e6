//! Who a configuration's approver names stand for, as the server resolves them when a call stops
//! (engine/src/people/resolve.rs): the configuration's own `[[groups]]` first, then the groups
//! kept in the database; a user name, or a group's member, counts only with an account that may
//! sign in; names that stand for no one are left out, and when all of a gate's are, the admins
//! decide. Pure: the database's side comes loaded ([`Directory`]).

use std::collections::BTreeMap;

use domain::rules::{Approvers, Share};

use crate::{
    approver_names::{ApproverName, parse_approver},
    policy::Requirement,
};

/// A configuration's `[[groups]]`: name → members.
pub type Groups = BTreeMap<String, Vec<String>>;

/// The database's side of who approver names stand for.
#[derive(Clone, Debug, Default)]
pub struct Directory {
    /// The user names of the accounts that may sign in (not disabled), as stored.
    pub users: Vec<String>,
    /// The groups kept in the database (the Groups page's, the identity provider's): name → members.
    pub groups: Groups,
}

impl Directory {
    /// The account a user name stands for (names match ignoring case), as its name is stored.
    pub fn account(&self, name: &str) -> Option<&str> {
        self.users.iter().find(|u| u.eq_ignore_ascii_case(name)).map(String::as_str)
    }

    /// A group's people: its members that have an account; `groups` (a configuration's) are
    /// looked in first, as the server does. None: no group of that name, or no member with one.
    pub fn group_people(&self, groups: &Groups, name: &str) -> Vec<String> {
        let members = groups.iter().chain(&self.groups).find(|(group, _)| group.eq_ignore_ascii_case(name)).map(|(_, m)| m.as_slice());
        members.unwrap_or_default().iter().filter_map(|m| self.account(m)).map(str::to_owned).collect()
    }

    /// The people an approver name stands for; `None` for the admins (`role:admin`).
    fn people_of(&self, groups: &Groups, name: &str) -> Option<Vec<String>> {
        match parse_approver(name) {
            Some(ApproverName::Admins) => None,
            Some(ApproverName::Group(group)) => Some(self.group_people(groups, group)),
            Some(ApproverName::User(user)) => Some(self.account(user).map(str::to_owned).into_iter().collect()),
            None => Some(Vec::new()),
        }
    }

    /// Whether an approver name stands for someone: the admins, or at least one account.
    pub fn stands_for_someone(&self, groups: &Groups, name: &str) -> bool {
        self.people_of(groups, name).is_none_or(|people| !people.is_empty())
    }

    /// A gate's `approvers` as people (`resolve_approvers`).
    fn resolve(&self, groups: &Groups, names: &[String]) -> Approvers {
        let mut approvers = Approvers { names: names.to_vec(), people: Vec::new(), admins: false, each: Vec::new() };
        for name in names {
            let Some(people) = self.people_of(groups, name) else {
                approvers.admins = true;
                continue;
            };
            for person in people {
                if !approvers.people.iter().any(|p| p.eq_ignore_ascii_case(&person)) {
                    approvers.people.push(person);
                }
            }
        }
        // Rather than nobody, the admins.
        approvers.admins |= approvers.people.is_empty();
        approvers
    }

    /// One gate's share of a call's approvers (`resolve_shares`): without names, anyone who may
    /// decide the call.
    fn share(&self, groups: &Groups, gate: &str, names: &[String], quorum: u32) -> Share {
        let (people, admins) = match names.is_empty() {
            true => (Vec::new(), false),
            false => {
                let approvers = self.resolve(groups, names);
                (approvers.people, approvers.admins)
            }
        };
        Share { gate: gate.to_owned(), quorum, names: names.to_vec(), people, admins }
    }

    /// A call's approvers under a configuration whose groups are `groups`, as the server would
    /// keep them with its approval (`resolve_requirement`); `None` when its gates name none.
    pub fn resolve_requirement(&self, groups: &Groups, requirement: &Requirement<'_>) -> Option<Approvers> {
        if requirement.gate.approvers.is_empty() {
            return None;
        }
        let mut approvers = self.resolve(groups, &requirement.gate.approvers);
        approvers.each = requirement.shares().into_iter().map(|(gate, names, quorum)| self.share(groups, gate, names, quorum)).collect();
        approvers.admins |= approvers.each.iter().any(|s| s.admins);
        Some(approvers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directory() -> Directory {
        let users = ["alice", "Bob", "root"].map(str::to_owned).to_vec();
        Directory { users, groups: BTreeMap::from([("ops".to_owned(), vec!["root".to_owned()])]) }
    }

    #[test]
    fn names_stand_for_accounts_and_groups_as_the_server_resolves_them() {
        let directory = directory();
        let file = BTreeMap::from([("finance".to_owned(), vec!["bob".to_owned(), "erin".to_owned()])]);
        assert_eq!(directory.group_people(&file, "Finance"), ["Bob"], "members with an account, as stored");
        assert_eq!(directory.group_people(&file, "ops"), ["root"], "the database's groups after the file's");
        assert!(directory.group_people(&BTreeMap::new(), "finance").is_empty(), "no such group");
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<String>>();
        let approvers = directory.resolve(&file, &names(&["group:finance", "user:nobody"]));
        assert_eq!((approvers.people, approvers.admins), (vec!["Bob".to_owned()], false), "nobody is left out");
        let nobody = directory.resolve(&file, &names(&["user:nobody"]));
        assert!(nobody.people.is_empty() && nobody.admins, "a name that stands for no one falls to the admins");
        assert!(!directory.stands_for_someone(&file, "user:nobody") && !directory.stands_for_someone(&BTreeMap::new(), "group:finance"));
        assert!(directory.stands_for_someone(&file, "role:admin") && directory.stands_for_someone(&file, "user:bob"));
    }
}
