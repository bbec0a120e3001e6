//! A person's message starts a turn: recorded as a new task, which its driver then takes on.

use std::sync::Arc;

use domain::{EventBody, TaskId, TaskStatus, wire::Conversation};

use super::TaskDriver;
use crate::store::{WriteScope, conversations, tasks};

impl TaskDriver {
    /// Records the user's message as a new task and starts driving it. `started_by`: the
    /// credential that sends it, kept with the task (`tasks::TaskRow::started_by`: a token that may
    /// only call stops only the tasks it started).
    pub async fn start_turn(self: &Arc<Self>, conversation: &Conversation, text: &str, started_by: Option<&str>) -> crate::Result<TaskId> {
        self.start_turn_with_message_id(conversation, text, None, started_by).await
    }

    /// [`Self::start_turn`] with the id the client gave its message (an AG-UI message id), which
    /// the stored message keeps, so the client is told of it by that id (docs/ag-ui.md).
    pub async fn start_turn_with_message_id(
        self: &Arc<Self>,
        conversation: &Conversation,
        text: &str,
        client_id: Option<String>,
        started_by: Option<&str>,
    ) -> crate::Result<TaskId> {
        let mut w = self.ctx.store.write(WriteScope::Conversation(&conversation.id)).await?;
        if let Some(open) = tasks::open_in_conversation(&mut *w.tx, &conversation.id).await? {
            return Err(crate::Error::TurnUnfinished(open.id));
        }
        conversations::title_from_first_message(&mut w.tx, &conversation.id, text).await?;
        let task_id = tasks::insert(&mut w.tx, &conversation.id, 0, started_by).await?.id;
        let message = EventBody::UserMessage { task_id: task_id.clone(), text: text.to_owned(), reply_to: None, client_id };
        w.append(&conversation.id, message).await?;
        w.append(
            &conversation.id,
            EventBody::TaskStatus { task_id: task_id.clone(), status: TaskStatus::Working, message: None, parent_call_id: None },
        )
        .await?;
        let lease = self.claim_in(&mut w, &task_id).await?;
        w.commit().await?;
        self.drive_with(&task_id, lease);
        Ok(task_id)
    }
}
