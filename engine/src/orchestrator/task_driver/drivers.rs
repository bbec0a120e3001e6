//! Which tasks this process is driving, and what triggers asked of their drivers meanwhile: one
//! driver per task here (the fenced lease keeps it to one across processes, docs/reliability.md).
//!
//! A write that starts or resumes a task claims its lease in the same transaction (one commit
//! fewer per leg) and hands that lease to the driver. A driver still listed here, because it
//! released its own lease and has not left yet, takes the handed lease over: its own claim would
//! find the task held, and the lease would be renewed by this process with no driver using it.

use std::collections::HashMap;

use domain::TaskId;
use parking_lot::Mutex;

use crate::store::tasks::Lease;

/// What triggers asked of a task's driver while it worked.
#[derive(Default)]
struct Asked {
    /// Look at the task again before leaving.
    again: bool,
    /// A lease a write claimed for the task, for this driver.
    handed: Option<Lease>,
}

/// Where a driver asks whether it goes on ([`Drivers::next_round`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Round {
    /// Its claim found the task held by another driver.
    Blocked,
    /// It drove the task; it still holds its lease unless its last write released it.
    Working,
    /// It gave its lease up and is about to leave.
    Leaving,
}

#[derive(Default)]
pub(super) struct Drivers {
    running: Mutex<HashMap<TaskId, Asked>>,
}

impl Drivers {
    /// A trigger, with the lease its write claimed, if any. `Some(lease)` when no driver of the
    /// task runs here: the caller starts one with that lease. Otherwise the running driver is
    /// told to look again and given the lease.
    #[must_use]
    pub(super) fn enter(&self, task_id: &TaskId, lease: Option<Lease>) -> Option<Option<Lease>> {
        let mut running = self.running.lock();
        if let Some(asked) = running.get_mut(task_id) {
            asked.again = true;
            if lease.is_some() {
                // A handed lease not yet taken ran out: this claim could not have succeeded otherwise.
                asked.handed = lease;
            }
            return None;
        }
        running.insert(task_id.clone(), Asked::default());
        Some(lease)
    }

    /// Whether the driver goes on, and with which lease (`Some(None)`: it claims one). It goes on
    /// when a trigger arrived while it worked (that is cleared) or a write handed it a lease;
    /// otherwise it leaves, unless `Round::Working`.
    pub(super) fn next_round(&self, task_id: &TaskId, round: Round) -> Option<Option<Lease>> {
        let mut running = self.running.lock();
        let asked = running.get_mut(task_id)?;
        let goes_on = match round {
            // Its claim found the task held: only a lease handed to it makes it go on.
            Round::Blocked => asked.handed.is_some(),
            Round::Working | Round::Leaving => asked.again || asked.handed.is_some(),
        };
        if goes_on {
            asked.again = false;
            return Some(asked.handed.take());
        }
        if round != Round::Working {
            running.remove(task_id);
        }
        None
    }

    pub(super) fn contains(&self, task_id: &TaskId) -> bool {
        self.running.lock().contains_key(task_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(token: &str) -> Lease {
        Lease { task_id: TaskId::from("t1".to_owned()), token: token.into() }
    }

    #[test]
    fn a_lease_claimed_while_the_driver_is_leaving_is_handed_to_it_not_dropped() {
        let drivers = Drivers::default();
        let task = lease("").task_id;
        assert_eq!(drivers.enter(&task, None), Some(None), "the first trigger starts a driver that claims");
        // The driver released its lease; a decision claims the task and commits before it leaves.
        assert_eq!(drivers.enter(&task, Some(lease("decision"))), None, "no second driver");
        assert_eq!(drivers.next_round(&task, Round::Leaving), Some(Some(lease("decision"))));
        assert!(drivers.contains(&task), "it goes on with the handed lease");
        assert_eq!(drivers.next_round(&task, Round::Leaving), None);
        assert!(!drivers.contains(&task), "nothing more asked: it left");
    }

    #[test]
    fn a_driver_whose_claim_failed_leaves_unless_it_was_handed_a_lease() {
        let drivers = Drivers::default();
        let task = lease("").task_id;
        let _ = drivers.enter(&task, None);
        let _ = drivers.enter(&task, None);
        assert_eq!(drivers.next_round(&task, Round::Blocked), None, "another driver holds it: a trigger alone is theirs");
        assert!(!drivers.contains(&task));

        let _ = drivers.enter(&task, None);
        let _ = drivers.enter(&task, Some(lease("handed")));
        assert_eq!(drivers.next_round(&task, Round::Blocked), Some(Some(lease("handed"))));
        assert!(drivers.contains(&task));
    }

    #[test]
    fn a_working_driver_looks_again_after_a_trigger_and_stays_listed_otherwise() {
        let drivers = Drivers::default();
        let task = lease("").task_id;
        assert_eq!(drivers.enter(&task, Some(lease("own"))), Some(Some(lease("own"))), "started with the write's lease");
        assert_eq!(drivers.next_round(&task, Round::Working), None);
        assert!(drivers.contains(&task), "still listed while it releases");
        let _ = drivers.enter(&task, None);
        assert_eq!(drivers.next_round(&task, Round::Working), Some(None), "looks again, with its own lease");
        assert_eq!(drivers.next_round(&task, Round::Working), None, "the trigger was cleared");
    }
}
