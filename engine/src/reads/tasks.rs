//! Tasks as the API shows them.

use domain::{TaskId, wire::Task};

use super::Reads;
use crate::store::{events, tasks};

pub use crate::store::tasks::TaskRow;

impl Reads {
    /// The task with this id, if there is one (whoever may see it: the caller checks).
    pub async fn task(&self, id: &TaskId) -> anyhow::Result<Option<TaskRow>> {
        tasks::get(&self.store, id).await
    }

    /// The task as the API shows it, with its summary folded from its conversation's events by the
    /// chat's own fold.
    pub async fn task_view(&self, task: &TaskRow) -> anyhow::Result<Task> {
        let events = events::after(&self.store, &task.conversation_id, 0).await?;
        let mut wire = task.to_wire();
        wire.summary = domain::fold(&events).tasks.into_iter().find(|t| t.task_id == task.id).map(|t| t.summary);
        Ok(wire)
    }
}
