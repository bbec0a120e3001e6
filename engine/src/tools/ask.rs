//! `ask_user`: the agent asks the person a question — free text, or one of `options` — and waits
//! for the answer the way a risky call waits for approval (durable, with a deadline and a timeout
//! action, in the queue, audited; docs/config.md, "Asking the user"). Answering is approving the
//! call with `answer` added to its arguments (the card's answer box does that); declining is
//! rejecting it. The answer is the tool's result.

use async_trait::async_trait;
use serde_json::{Value, json};
use sqlx::AnyConnection;

use super::{Tool, ToolError, ToolFailure, ToolSpec};
use domain::Risk;

pub const NAME: &str = domain::naming::ASK_USER;

/// The gate every `ask_user` call waits at, whatever the agent's other gates say.
pub const GATE: &str = "ask-a-human";

pub struct AskUser(ToolSpec);

impl AskUser {
    pub fn new() -> Self {
        Self(ToolSpec {
            name: NAME.into(),
            description: "Ask the user a question and wait for the answer: information or a choice only they can give. \
                          Give `options` for a choice among a few answers."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "question": { "type": "string", "minLength": 1, "maxLength": 2000 },
                    "options": { "type": "array", "items": { "type": "string", "minLength": 1, "maxLength": 200 }, "maxItems": 10 },
                    "answer": { "type": "string", "minLength": 1, "maxLength": 4000, "description": "The user's answer (added by the user, not the agent)" }
                },
                "required": ["question"],
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
        })
    }
}

impl Default for AskUser {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for AskUser {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn summarize(&self, args: &Value) -> String {
        args.get("question").and_then(Value::as_str).unwrap_or("(no question)").to_owned()
    }

    fn risk(&self, _args: &Value) -> Risk {
        Risk::Low
    }

    async fn run(&self, _conn: &mut AnyConnection, args: &Value) -> Result<Value, ToolError> {
        answer_of(args).map(|answer| json!({ "answer": answer })).map_err(|why| ToolFailure(why).into())
    }
}

/// The user's answer, if the arguments carry one that fits the question's options.
pub fn answer_of(args: &Value) -> Result<&str, String> {
    let answer = args.get("answer").and_then(Value::as_str).map(str::trim).filter(|a| !a.is_empty());
    let Some(answer) = answer else { return Err("the user gave no answer".into()) };
    let options: Vec<&str> = args.get("options").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    if !options.is_empty() && !options.contains(&answer) {
        return Err(format!("the answer {answer:?} is not one of the options"));
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_changes_nothing() {
        let assessment = AskUser::new().assess(&json!({ "question": "Which?" }), &super::super::Description::default());
        assert_eq!(assessment.reversibility, domain::wire::Reversibility::Fully);
        assert!(assessment.factors.is_empty());
    }

    #[test]
    fn an_answer_is_text_or_one_of_the_options() {
        assert_eq!(answer_of(&json!({ "question": "Which?", "answer": " the blue one " })), Ok("the blue one"));
        assert!(answer_of(&json!({ "question": "Which?" })).is_err());
        assert!(answer_of(&json!({ "question": "Which?", "answer": "  " })).is_err());
        let choice = json!({ "question": "Which?", "options": ["1001", "1002"], "answer": "1002" });
        assert_eq!(answer_of(&choice), Ok("1002"));
        assert!(answer_of(&json!({ "question": "Which?", "options": ["1001"], "answer": "1003" })).is_err());
    }
}
