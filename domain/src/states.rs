//! The closed sets of names Countersign stores and sends — the three state machines (approval,
//! tool call, task) and risk, timeout action, role and audit kind — as enums.
//!
//! Each is decoded from its stored name with an error on an unknown one (never a silent default),
//! and each state machine has one table of allowed moves, [`Machine::may_move`]. The store moves
//! a row only through [`Machine::transition`], then writes it with a conditional
//! `UPDATE … WHERE state = <from>` so that the loser of a race changes nothing
//! (docs/architecture.md, "State machines").

use serde::{Deserialize, Serialize};
use std::fmt;

/// A stored or received name that is not one of its set's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    pub set: &'static str,
    pub name: String,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a known {}", self.name, self.set)
    }
}

impl std::error::Error for UnknownName {}

/// A move a state machine does not allow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IllegalMove {
    pub machine: &'static str,
    pub from: &'static str,
    pub to: &'static str,
}

impl fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} cannot move from {} to {}", self.machine, self.from, self.to)
    }
}

impl std::error::Error for IllegalMove {}

/// An enum whose variants are stored and sent by name: `as_str`, `parse` (an error on an unknown
/// name), `ALL`, serde, `Display`, and `TryFrom<String>` (what `#[sqlx(try_from = "String")]`
/// decodes a column with).
macro_rules! named {
    ($(#[$meta:meta])* pub enum $name:ident as $set:literal {
        $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)+
        }

        // By hand: the derive does not see serde's `rename` through this macro's `$text`.
        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some([$($text,)+]))
                    .into()
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {}

        impl $name {
            pub const ALL: &'static [Self] = &[$(Self::$variant,)+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)+
                }
            }

            pub fn parse(name: &str) -> Result<Self, UnknownName> {
                match name {
                    $($text => Ok(Self::$variant),)+
                    _ => Err(UnknownName { set: $set, name: name.to_owned() }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = UnknownName;
            fn from_str(name: &str) -> Result<Self, UnknownName> {
                Self::parse(name)
            }
        }

        impl TryFrom<String> for $name {
            type Error = UnknownName;
            fn try_from(name: String) -> Result<Self, UnknownName> {
                Self::parse(&name)
            }
        }
    };
}

/// A state machine: its one table of allowed moves, and the checked move.
pub trait Machine: Copy + Eq + 'static {
    const NAME: &'static str;
    fn name_of(self) -> &'static str;
    /// The table: may a row in `self` move to `to`?
    fn may_move(self, to: Self) -> bool;

    /// `to`, if the table allows the move; the error names the machine and both states.
    fn transition(self, to: Self) -> Result<Self, IllegalMove> {
        if self.may_move(to) { Ok(to) } else { Err(IllegalMove { machine: Self::NAME, from: self.name_of(), to: to.name_of() }) }
    }
}

named! {
    /// An approval: `pending → approved | rejected | expired | canceled | deferred`, then final.
    pub enum ApprovalState as "approval state" {
        Pending = "pending",
        Approved = "approved",
        Rejected = "rejected",
        /// The deadline passed and the timeout action refused it.
        Expired = "expired",
        /// The task was aborted while it waited.
        Canceled = "canceled",
        /// Not run; the human's guidance went to the model instead.
        Deferred = "deferred",
    }
}

impl Machine for ApprovalState {
    const NAME: &'static str = "an approval";
    fn name_of(self) -> &'static str {
        self.as_str()
    }
    fn may_move(self, to: Self) -> bool {
        self == Self::Pending && to != Self::Pending
    }
}

named! {
    /// A proposed tool call. It starts in one of [`CallState::may_start_in`]; then
    /// `pending_approval → approved | rejected | expired | canceled | deferred`,
    /// `approved → executing | canceled`, `executing → succeeded | failed`.
    pub enum CallState as "tool call state" {
        PendingApproval = "pending_approval",
        Approved = "approved",
        Rejected = "rejected",
        Expired = "expired",
        Canceled = "canceled",
        Deferred = "deferred",
        Executing = "executing",
        Succeeded = "succeeded",
        Failed = "failed",
    }
}

impl CallState {
    /// What a call is recorded as when the model proposes it: waiting for a human, free to run,
    /// refused as a repeat of a rejected call, or failed (unknown tool, invalid arguments).
    pub fn may_start_in(self) -> bool {
        matches!(self, Self::PendingApproval | Self::Approved | Self::Rejected | Self::Failed)
    }
}

impl Machine for CallState {
    const NAME: &'static str = "a tool call";
    fn name_of(self) -> &'static str {
        self.as_str()
    }
    fn may_move(self, to: Self) -> bool {
        use CallState::*;
        matches!(
            (self, to),
            (PendingApproval, Approved | Rejected | Expired | Canceled | Deferred)
                | (Approved, Executing | Canceled)
                | (Executing, Succeeded | Failed)
        )
    }
}

named! {
    /// A task (one user turn): `working ⇄ input_required`, and from either to a final
    /// `completed | failed | canceled`. Only a working task completes (the model answered).
    pub enum TaskStatus as "task status" {
        Working = "working",
        InputRequired = "input_required",
        Completed = "completed",
        Failed = "failed",
        Canceled = "canceled",
    }
}

impl TaskStatus {
    /// A finished task accepts no more decisions and lets the user send the next message.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Canceled)
    }
}

impl Machine for TaskStatus {
    const NAME: &'static str = "a task";
    fn name_of(self) -> &'static str {
        self.as_str()
    }
    fn may_move(self, to: Self) -> bool {
        use TaskStatus::*;
        matches!((self, to), (Working, InputRequired | Completed | Failed | Canceled) | (InputRequired, Working | Failed | Canceled))
    }
}

named! {
    /// How risky a call is, as its tool judged it.
    pub enum Risk as "risk" {
        Low = "low",
        Medium = "medium",
        High = "high",
    }
}

named! {
    /// What happens to an approval nobody decided before its deadline.
    pub enum TimeoutAction as "timeout action" {
        /// The call is rejected with reason "timed out" (the default).
        Reject = "reject",
        /// The call runs as proposed.
        Approve = "approve",
        /// The call does not run; the model is told it was skipped.
        Skip = "skip",
        /// The whole task is canceled.
        Abort = "abort",
        /// The approval moves to the admins with a fresh deadline (then rejects if still undecided).
        Escalate = "escalate",
        /// The approval is asked again with a fresh deadline, up to the gate's `max_retries`
        /// times; then it is rejected as timed out.
        Retry = "retry",
    }
}

named! {
    /// What an account may do: users their own conversations, admins everything.
    pub enum Role as "role" {
        User = "user",
        Admin = "admin",
    }
}

named! {
    /// What an audit entry records.
    pub enum AuditKind as "audit kind" {
        ApprovalRequested = "approval.requested",
        ApprovalDecided = "approval.decided",
        /// Decided by the server because the deadline passed (the approval's timeout action).
        ApprovalTimedOut = "approval.timed_out",
        ApprovalEscalated = "approval.escalated",
        /// A pending approval's deciders were reminded.
        ApprovalReminded = "approval.reminded",
        /// One of a quorum approved; the call waits for the others.
        ApprovalCounted = "approval.counted",
        GrantCreated = "grant.created",
        GrantUsed = "grant.used",
        GrantRevoked = "grant.revoked",
        TaskAborted = "task.aborted",
        ToolOutcome = "tool.outcome",
        /// A gate rule could not be evaluated and the agent is fail-open: the call ran.
        PolicyFailOpen = "policy.fail_open",
        /// A gate rule could not be evaluated: a human was asked.
        PolicyFailClosed = "policy.fail_closed",
        /// A shadow gate (`mode = "shadow"`) would have asked; the call ran.
        PolicyShadowHit = "policy.shadow_hit",
        /// An admin created, changed or deleted a group of approvers.
        GroupCreated = "group.created",
        GroupChanged = "group.changed",
        GroupDeleted = "group.deleted",
        /// A person signed in through the identity provider: their account was made, or their
        /// role and provider groups refreshed.
        UserSignedIn = "user.signed_in",
        /// An admin turned an account off (it left its groups, its tokens were revoked) or on.
        UserDisabled = "user.disabled",
        UserEnabled = "user.enabled",
        /// Someone lets another decide in their place for a period, or ends that early.
        DelegationCreated = "delegation.created",
        DelegationRevoked = "delegation.revoked",
        /// Signed decision links were made for a person (by an admin, or by the person).
        LinkIssued = "link.issued",
        /// A pair of decision links was revoked before it expired.
        LinkRevoked = "link.revoked",
        /// A notification went out (an email), or could not be sent.
        NotificationSent = "notification.sent",
        /// At start-up under another configuration: a pending approval kept or canceled, or a
        /// grant made under an earlier one ended; and a timeout that would have approved a call
        /// the configuration in force no longer approves on time-out (`outcome` "timeout does
        /// not approve", with the action applied instead).
        PolicyReclassified = "policy.reclassified",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (from, to) pair of a machine against the moves listed as allowed: the table allows
    /// exactly those and `transition` refuses every other with an error naming both states.
    fn exactly<M: Machine + fmt::Debug>(all: &[M], allowed: &[(M, M)]) {
        for &from in all {
            for &to in all {
                let expected = allowed.contains(&(from, to));
                assert_eq!(from.may_move(to), expected, "{from:?} → {to:?}");
                match from.transition(to) {
                    Ok(state) => assert!(expected && state == to),
                    Err(e) => {
                        assert!(!expected, "{from:?} → {to:?} refused");
                        assert_eq!((e.from, e.to), (from.name_of(), to.name_of()));
                        assert!(e.to_string().contains("cannot move"));
                    }
                }
            }
        }
    }

    #[test]
    fn an_approval_moves_only_out_of_pending() {
        use ApprovalState::*;
        exactly(
            ApprovalState::ALL,
            &[(Pending, Approved), (Pending, Rejected), (Pending, Expired), (Pending, Canceled), (Pending, Deferred)],
        );
    }

    #[test]
    fn a_tool_call_runs_only_after_approval_and_finishes_once() {
        use CallState::*;
        exactly(
            CallState::ALL,
            &[
                (PendingApproval, Approved),
                (PendingApproval, Rejected),
                (PendingApproval, Expired),
                (PendingApproval, Canceled),
                (PendingApproval, Deferred),
                (Approved, Executing),
                (Approved, Canceled),
                (Executing, Succeeded),
                (Executing, Failed),
            ],
        );
        let starts: Vec<_> = CallState::ALL.iter().copied().filter(|s| s.may_start_in()).collect();
        assert_eq!(starts, [PendingApproval, Approved, Rejected, Failed]);
    }

    #[test]
    fn a_task_pauses_and_resumes_until_it_finishes() {
        use TaskStatus::*;
        exactly(
            TaskStatus::ALL,
            &[
                (Working, InputRequired),
                (Working, Completed),
                (Working, Failed),
                (Working, Canceled),
                (InputRequired, Working),
                (InputRequired, Failed),
                (InputRequired, Canceled),
            ],
        );
        for &status in TaskStatus::ALL {
            // A final status is exactly one nothing moves out of.
            assert_eq!(status.is_final(), TaskStatus::ALL.iter().all(|&to| !status.may_move(to)), "{status:?}");
        }
    }

    #[test]
    fn every_name_round_trips_and_an_unknown_name_is_an_error() {
        fn round_trip<T: Copy + PartialEq + fmt::Debug + Serialize + for<'de> Deserialize<'de>>(
            all: &[T],
            as_str: fn(T) -> &'static str,
            parse: fn(&str) -> Result<T, UnknownName>,
        ) {
            for &value in all {
                assert_eq!(parse(as_str(value)), Ok(value));
                assert_eq!(serde_json::to_value(value).unwrap(), serde_json::json!(as_str(value)));
                assert_eq!(serde_json::from_value::<T>(serde_json::json!(as_str(value))).unwrap(), value);
            }
            let unknown = parse("Pending ").unwrap_err();
            assert!(unknown.to_string().contains("`Pending ` is not a known"), "{unknown}");
            assert!(serde_json::from_value::<T>(serde_json::json!("nonsense")).is_err());
        }
        round_trip(ApprovalState::ALL, ApprovalState::as_str, ApprovalState::parse);
        round_trip(CallState::ALL, CallState::as_str, CallState::parse);
        round_trip(TaskStatus::ALL, TaskStatus::as_str, TaskStatus::parse);
        round_trip(Risk::ALL, Risk::as_str, Risk::parse);
        round_trip(TimeoutAction::ALL, TimeoutAction::as_str, TimeoutAction::parse);
        round_trip(Role::ALL, Role::as_str, Role::parse);
        round_trip(AuditKind::ALL, AuditKind::as_str, AuditKind::parse);
        // The old decoder read an unknown risk as low; now it is refused.
        assert_eq!(Risk::parse("critical").unwrap_err(), UnknownName { set: "risk", name: "critical".into() });
        assert_eq!(Risk::try_from("high".to_owned()), Ok(Risk::High));
    }
}
