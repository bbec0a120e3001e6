//! What the event log records about a call or a turn besides the call itself, and the API shows
//! as it is: the risk assessment, the usage and spend of model steps, the grant an approval may
//! give or a card may offer, a streamed piece of a reply. Below both the events and the wire types
//! (`event.rs`, `wire.rs` re-exports them), so the log, its fold and the API read one definition.

use serde::{Deserialize, Serialize};

use super::ids::{ConversationId, TaskId};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GrantRequest {
    /// Seconds the grant lasts; none: until revoked.
    #[serde(default, deserialize_with = "whole_or_none")]
    pub ttl_secs: Option<u64>,
    /// How many calls it may let through; none: unlimited.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    #[serde(default, deserialize_with = "whole_or_none")]
    pub max_uses: Option<u32>,
    /// Which arguments it lets through besides the gate's own bounds: `any` (the default),
    /// `exact` (only the approved arguments), or `at_most` (numbers no larger than approved).
    #[serde(default)]
    pub args: GrantArgs,
}

/// An optional whole number, also when written as a float (`2.0`), as clients that carry every
/// JSON number as a float send it and as tool arguments are read. A fraction, a negative number
/// or one too large for the field is refused, saying so.
fn whole_or_none<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    use serde::de::Error;
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else { return Ok(None) };
    // `u64::MAX as f64` is 2^64, exactly.
    let whole =
        number.as_u64().or_else(|| number.as_f64().filter(|f| f.fract() == 0.0 && (0.0..u64::MAX as f64).contains(f)).map(|f| f as u64));
    let Some(whole) = whole else { return Err(D::Error::custom(format!("must be a whole number of at least 0, not {number}"))) };
    T::try_from(whole).map(Some).map_err(|_| D::Error::custom(format!("{number} is too large")))
}

/// How far a grant reaches over the arguments of the calls its gate stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum GrantArgs {
    /// Any call the same gate stops.
    #[default]
    Any,
    /// Only calls with exactly the approved arguments.
    Exact,
    /// Only calls whose numeric arguments are no larger than the approved ones (e.g. `amount`),
    /// the rest equal.
    AtMost,
}

/// Can the call's effect be undone?
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Reversibility {
    /// It changes nothing, or what it changes is easily put back.
    Fully,
    /// Some of it can be undone, by hand.
    #[default]
    Partially,
    /// It cannot be undone.
    Irreversible,
}

/// Why a call is risky, beyond its level: from the tool's metadata and its own description of
/// the call read against the data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RiskAssessment {
    /// Short reasons, e.g. "moves money", "more than is left to refund".
    #[serde(default)]
    pub factors: Vec<String>,
    /// What happens if it runs, in one sentence.
    #[serde(default)]
    pub consequences: String,
    #[serde(default)]
    pub reversibility: Reversibility,
    /// The agent's confidence in the call, 0–1, when the model reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// What to check before deciding, read against the data ("$300.00 is more than the $249.00
    /// left to refund: the call will fail"): shown as warnings wherever the call is decided.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Tokens and cost of model steps, added up (a task's, or a conversation's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// US dollars, when the model has a price in the configuration (`[prices]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Usage {
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// Both added up; a cost is known once any part of it is.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }
}

/// What was spent so far when a budget gate asked, and the gate's limits (the card shows both).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Spend {
    /// The task's (or, for a gate with `per = "conversation"`, the conversation's) usage so far,
    /// including the model step that proposed the call.
    pub spent: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_threshold: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_threshold: Option<f64>,
    /// `task` or `conversation`.
    pub per: String,
}

/// A piece of an assistant reply while the model is still writing it. Sent live over SSE as
/// `assistant-delta` without an `id:`; never stored: the finished reply arrives as the
/// `assistant-message` event and replaces it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AssistantDelta {
    pub conversation_id: ConversationId,
    pub task_id: TaskId,
    /// The conversation's last stored event when the model was asked: a delta is stale (its
    /// reply is already stored) once the view has folded anything after it.
    pub after_seq: i64,
    /// Byte offset of `text` in the reply so far; 0 starts the reply over (e.g. after a retry).
    pub offset: usize,
    pub text: String,
}

/// "You approved this N times here: always allow it?" — offered on a card to the person who
/// approved the same tool with the same shape of arguments `count` times in the conversation
/// (`[defaults] suggest_grant_after`); accepting approves with `grant`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrantSuggestion {
    pub by: String,
    pub count: u32,
    /// The scope offered: this tool in this conversation, for this long.
    pub grant: GrantRequest,
}
