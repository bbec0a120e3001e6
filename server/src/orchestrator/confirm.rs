//! Conversational confirmation (seed 002's pattern 2): for a gate with `confirm = "chat"` the agent
//! asks in the chat, and the user's next message answers it. A yes or no becomes the same
//! decision (event, audit entry, state change) as the card's buttons, bound to that one call;
//! anything else is asked again.

use std::sync::Arc;

use app::domain::{ApprovalOutcome, EventBody};

use super::{Actor, DecisionError, Orchestrator};
use crate::store::approvals;

/// Seed 002's confirmation words.
const YES: [&str; 10] = ["yes", "y", "yeah", "ok", "okay", "sure", "proceed", "go ahead", "confirm", "do it"];
const NO: [&str; 9] = ["no", "n", "nope", "cancel", "stop", "abort", "don't", "dont", "nevermind"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Yes,
    No,
    Unclear,
}

/// Reads a reply as yes or no only when the whole reply is one of the words (any case, trailing
/// punctuation ignored): "yes, but refund half" is not a yes.
pub fn classify(reply: &str) -> Answer {
    let words: Vec<&str> = reply.split_whitespace().collect();
    let normalized = words.join(" ").to_lowercase().replace('’', "'");
    let normalized = normalized.trim_end_matches(['.', '!', ',']).trim();
    if YES.contains(&normalized) {
        Answer::Yes
    } else if NO.contains(&normalized) {
        Answer::No
    } else {
        Answer::Unclear
    }
}

/// What the agent says to ask; `again` after an answer that was neither yes nor no.
pub fn question(summary: &str, again: bool) -> String {
    if again {
        format!("Sorry, I need a clear yes or no. Shall I go ahead with: {summary}? Reply yes or no.")
    } else {
        format!("Before I do this, please confirm: {summary}. Shall I go ahead? Reply yes or no.")
    }
}

/// What the user's message did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub task_id: String,
    pub approval_id: String,
    pub answer: Answer,
}

impl Orchestrator {
    /// When the conversation waits for a yes/no in the chat, takes `text` as the answer and
    /// returns what it did; `None` when nothing waits (the message starts a new turn instead).
    pub async fn answer_in_chat(
        self: &Arc<Self>,
        conversation_id: &str,
        text: &str,
        actor: &Actor,
    ) -> Result<Option<Reply>, DecisionError> {
        let mut w = self.store.write().await?;
        let Some(approval) = approvals::pending_in_chat(&mut *w.tx, conversation_id).await? else { return Ok(None) };
        if let Some(why) = approval.held_by_admins().filter(|_| actor.role != "admin") {
            return Err(DecisionError::Conflict(why));
        }
        let task = self.waiting_task(&mut w, &approval.task_id).await?;
        let answer = classify(text);
        let reply_to = Some(approval.id.clone());
        w.append(conversation_id, EventBody::UserMessage { task_id: task.id.clone(), text: text.to_owned(), reply_to }).await?;
        match answer {
            Answer::Yes => {
                self.apply(&mut w, &task, &approval, ApprovalOutcome::Approved, actor, None, None).await?;
            }
            Answer::No => {
                let reason = Some(format!("declined in the chat: \"{}\"", text.trim()));
                self.apply(&mut w, &task, &approval, ApprovalOutcome::Rejected, actor, reason, None).await?;
            }
            Answer::Unclear => {
                let question = question(&approval.summary, true);
                let (task_id, approval_id, call_id) = (task.id.clone(), approval.id.clone(), approval.call_id.clone());
                w.append(conversation_id, EventBody::ConfirmationAsked { task_id, approval_id, call_id, question }).await?;
            }
        }
        w.commit().await?;
        if answer != Answer::Unclear {
            self.trigger(&task.id);
        }
        Ok(Some(Reply { task_id: task.id, approval_id: approval.id, answer }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_words_are_yes_or_no_and_anything_else_is_unclear() {
        for yes in ["yes", "Y", "Yeah!", "ok", "Okay.", "sure", "proceed", "Go  ahead", "confirm", "do it"] {
            assert_eq!(classify(yes), Answer::Yes, "{yes}");
        }
        for no in ["no", "N", "nope", "cancel", "stop", "abort", "don't", "Don’t", "nevermind."] {
            assert_eq!(classify(no), Answer::No, "{no}");
        }
        for unclear in ["", "maybe", "yes but only half", "not sure", "what does it do?", "yess", "no way, yes"] {
            assert_eq!(classify(unclear), Answer::Unclear, "{unclear:?}");
        }
    }
}
