//! The names a gate uses for people: a user or group name (`escalation_target`, `[[groups]]`, a
//! provider's group) and an approver (`approvers`, `notify_to`: `group:…`, `user:…`, `role:admin`).
//! Pure checks of a name's form, below both the configuration (`agents`) and the people it
//! names (`people`), so that neither has to reach into the other for them.

/// One of a gate's `approvers`: a group, a user, or the admins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApproverName<'a> {
    Group(&'a str),
    User(&'a str),
    Admins,
}

/// Reads one of a gate's `approvers` (or `notify_to`): `group:<name>`, `user:<name>` or
/// `role:admin`; none when it is neither.
pub fn parse_approver(name: &str) -> Option<ApproverName<'_>> {
    match name.split_once(':')? {
        ("group", group) if valid_target(group) => Some(ApproverName::Group(group)),
        ("user", user) if valid_target(user) => Some(ApproverName::User(user)),
        ("role", "admin") => Some(ApproverName::Admins),
        _ => None,
    }
}

/// A user or group name as escalations name them (user names may also hold `@`).
pub fn valid_target(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
}
