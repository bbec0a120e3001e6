//! `final_answer`: an agent's final answer of a turn, held for approval by a `final_response`
//! gate (docs/config.md, "Final answers"). The model never calls it: when the agent's reply has
//! text and no calls, the task driver records the text as a call of this tool and asks. Approving
//! it (with the text edited or not) runs it: the task driver sends the text as the agent's answer
//! and ends the turn. Rejecting it sends the reason back to the model for another attempt.

use async_trait::async_trait;
use serde_json::{Value, json};
use sqlx::AnyConnection;

use super::{Description, Tool, ToolError, ToolFailure, ToolSpec};
use domain::{
    Risk,
    wire::{Reversibility, RiskAssessment},
};

pub const NAME: &str = domain::naming::FINAL_ANSWER;

pub struct FinalAnswer(ToolSpec);

impl FinalAnswer {
    pub fn new() -> Self {
        Self(ToolSpec {
            name: NAME.into(),
            description: "The agent's answer to the user, waiting for a reviewer before the user sees it.".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "text": { "type": "string", "minLength": 1, "maxLength": 20000, "description": "The answer the user will read" } },
                "required": ["text"],
                "additionalProperties": false
            }),
            read_only: false,
            destructive: false,
        })
    }
}

impl Default for FinalAnswer {
    fn default() -> Self {
        Self::new()
    }
}

/// The answer's text, if the arguments carry one.
pub fn text_of(args: &Value) -> Option<&str> {
    args.get("text").and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty())
}

#[async_trait]
impl Tool for FinalAnswer {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn summarize(&self, args: &Value) -> String {
        let text = text_of(args).unwrap_or_default();
        let short: String = text.chars().take(80).collect();
        let more = if text.chars().count() > 80 { "…" } else { "" };
        format!("Answer the user: “{short}{more}”")
    }

    fn risk(&self, _args: &Value) -> Risk {
        Risk::Medium
    }

    fn assess(&self, _args: &Value, _described: &Description) -> RiskAssessment {
        RiskAssessment {
            factors: vec!["the user reads it as the agent's answer".into()],
            consequences: "The user sees this text as the answer to their request.".into(),
            reversibility: Reversibility::Irreversible,
            confidence: None,
            warnings: Vec::new(),
        }
    }

    /// The task driver sends the text; running the call only checks there is one.
    async fn run(&self, _conn: &mut AnyConnection, args: &Value) -> Result<Value, ToolError> {
        match text_of(args) {
            Some(text) => Ok(json!({ "status": "sent", "message": "Answer sent to the user", "text": text })),
            None => Err(ToolFailure("the answer is empty".into()).into()),
        }
    }
}
