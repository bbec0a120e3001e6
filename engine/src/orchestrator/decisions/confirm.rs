//! Conversational confirmation: for a gate with `confirm = "chat"` the agent
//! asks in the chat, and the user's next message answers it. A yes or no becomes the same
//! decision (event, audit entry, state change) as the card's buttons, bound to that one call;
//! anything else is asked again.

use crate::Error;
use domain::{ApprovalId, ConversationId, TaskId};

use domain::{ApprovalOutcome, EventBody};

use super::{Actor, Decisions, decide::Approved};
use crate::store::{WriteScope, approvals};

/// The words a person confirms or refuses with in the chat (docs/config.md, "Conversational
/// confirmation"); anything else is neither.
const YES: [&str; 10] = ["yes", "y", "yeah", "ok", "okay", "sure", "proceed", "go ahead", "confirm", "do it"];
const NO: [&str; 9] = ["no", "n", "nope", "cancel", "stop", "abort", "don't", "dont", "nevermind"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatAnswer {
    Yes,
    No,
    Unclear,
}

/// Words that may come with a yes or a no without changing it ("yes please", "no thanks").
const POLITE: [&str; 5] = ["please", "pls", "thanks", "thank you", "then"];

/// Reads a reply as yes or no only when it is made of confirmation words and courtesies alone
/// (any case, punctuation ignored): "yes please" and "yes, go ahead" are a yes, "no thanks" a no;
/// "yes, but refund half" is neither, and neither is a reply with both a yes and a no.
pub fn classify(reply: &str) -> ChatAnswer {
    let lowered = reply.to_lowercase().replace('’', "'");
    let words: Vec<&str> =
        lowered.split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '!' | ';')).filter(|w| !w.is_empty()).collect();
    let (mut yes, mut no, mut i) = (false, false, 0);
    while i < words.len() {
        // The longest phrase (up to two words) that starts here.
        let two = words.get(i + 1).map(|next| format!("{} {next}", words[i]));
        let (phrase, len) = match two {
            Some(two) if YES.contains(&two.as_str()) || NO.contains(&two.as_str()) || POLITE.contains(&two.as_str()) => (two, 2),
            _ => (words[i].to_owned(), 1),
        };
        if YES.contains(&phrase.as_str()) {
            yes = true;
        } else if NO.contains(&phrase.as_str()) {
            no = true;
        } else if !POLITE.contains(&phrase.as_str()) {
            return ChatAnswer::Unclear;
        }
        i += len;
    }
    match (yes, no) {
        (true, false) => ChatAnswer::Yes,
        (false, true) => ChatAnswer::No,
        _ => ChatAnswer::Unclear,
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
    pub task_id: TaskId,
    pub approval_id: ApprovalId,
    pub answer: ChatAnswer,
    /// A yes that counted toward the approvals the call needs, which still waits for more
    /// (a quorum): nothing runs yet.
    pub counted: bool,
}

impl Decisions {
    /// When the conversation waits for a yes/no in the chat, takes `text` as the answer and
    /// returns what it did; `None` when nothing waits (the message starts a new turn instead).
    ///
    /// A yes is an approval like the card's, judged by the same rules in this one write
    /// ([`Decisions::decide`]): who may decide (a delegation included, a fresh sign-in),
    /// four-eyes, and the quorum or shares it counts toward. A yes or no those rules refuse is a
    /// conflict (409, not a forbidden command: the message itself was fine), checked before
    /// the reply is stored, and nothing is kept.
    ///
    /// A message that answers is a decision: counted against the person's decision limit
    /// ([`Self::count_attempt`]) before the write, an unclear one too; one that starts a turn is not.
    pub async fn answer_in_chat(&self, conversation_id: &ConversationId, text: &str, actor: &Actor) -> Result<Option<Reply>, Error> {
        if approvals::pending_in_chat(&self.ctx.store, conversation_id).await?.is_none() {
            return Ok(None);
        }
        self.count_attempt(actor).await?;
        let mut w = self.ctx.store.write(WriteScope::Conversation(conversation_id)).await?;
        w.hold_authority().await?;
        let Some(approval) = approvals::pending_in_chat(&mut *w.tx, conversation_id).await? else { return Ok(None) };
        let conflict = |err: Error| match err {
            Error::NotAllowed(why) => Error::WrongState(why),
            other => other,
        };
        let actor = &self.decider(&mut w, actor, &approval).await.map_err(conflict)?;
        let task = self.waiting_task(&mut w, &approval.task_id).await?;
        let answer = classify(text);
        let reason = Some(format!("declined in the chat: \"{}\"", text.trim()));
        match answer {
            ChatAnswer::Yes => self.vet_approval(&approval, actor, None, false).map(drop).map_err(conflict)?,
            // The reply is the reason (`require_reason` is met by it).
            ChatAnswer::No => approval.rules().check_rejection(reason.as_deref()).map_err(super::authority::breached)?,
            ChatAnswer::Unclear => {}
        }
        let reply_to = Some(approval.id.clone());
        let message = EventBody::UserMessage { task_id: task.id.clone(), text: text.to_owned(), reply_to, client_id: None };
        w.append(conversation_id, message).await?;
        let counted = match answer {
            ChatAnswer::Yes => {
                // The quorum's own refusals (this person counted already, a yes that adds to no
                // unmet share) drop this write whole, the reply with it.
                let approved = self.approve_checked(&mut w, &task, &approval, actor, None, None).await.map_err(conflict)?;
                matches!(approved, Approved::Counted(_))
            }
            ChatAnswer::No => {
                self.apply(&mut w, &task, &approval, ApprovalOutcome::Rejected, actor, reason, None).await?;
                false
            }
            ChatAnswer::Unclear => {
                let question = question(&approval.summary, true);
                let (task_id, approval_id, call_id) = (task.id.clone(), approval.id.clone(), approval.call_id.clone());
                w.append(conversation_id, EventBody::ConfirmationAsked { task_id, approval_id, call_id, question }).await?;
                false
            }
        };
        w.commit().await?;
        if answer != ChatAnswer::Unclear && !counted {
            self.driver.trigger(&task.id);
        }
        Ok(Some(Reply { task_id: task.id, approval_id: approval.id, answer, counted }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_words_are_yes_or_no_and_anything_else_is_unclear() {
        for yes in ["yes", "Y", "Yeah!", "ok", "Okay.", "sure", "proceed", "Go  ahead", "confirm", "do it"] {
            assert_eq!(classify(yes), ChatAnswer::Yes, "{yes}");
        }
        for no in ["no", "N", "nope", "cancel", "stop", "abort", "don't", "Don’t", "nevermind."] {
            assert_eq!(classify(no), ChatAnswer::No, "{no}");
        }
        for unclear in ["", "maybe", "yes but only half", "not sure", "what does it do?", "yess", "no way, yes"] {
            assert_eq!(classify(unclear), ChatAnswer::Unclear, "{unclear:?}");
        }
    }

    #[test]
    fn polite_forms_count_and_conditions_are_asked_again() {
        for yes in ["yes please", "Yes, go ahead", "ok, thanks", "sure, do it please", "yes thank you!", "go ahead then"] {
            assert_eq!(classify(yes), ChatAnswer::Yes, "{yes}");
        }
        for no in ["no thanks", "No, thank you.", "nope, cancel", "no please don't"] {
            assert_eq!(classify(no), ChatAnswer::No, "{no}");
        }
        for unclear in ["yes, but only half", "yes if it is under $50", "please", "thanks", "yes no", "ok but wait"] {
            assert_eq!(classify(unclear), ChatAnswer::Unclear, "{unclear:?}");
        }
    }
}
