//! The configuration file's shapes: what `agents.toml` looks like, as serde reads it. Nothing
//! here checks a value; validate.rs turns these into the runtime types of agents.rs.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{ModelConfig, OidcConfig, Price, SlackConfig, TimeoutAction};

/// The whole file: `[defaults]`, `[[agents]]` and the other sections.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileConfig {
    #[serde(default)]
    pub(super) defaults: FileDefaults,
    pub(super) agents: Vec<FileAgent>,
    #[serde(default)]
    pub(super) webhooks: Vec<crate::webhooks::WebhookConfig>,
    #[serde(default)]
    pub(super) mcp_servers: Vec<crate::tools::mcp::McpServerConfig>,
    #[serde(default)]
    pub(super) prices: BTreeMap<String, Price>,
    #[serde(default)]
    pub(super) groups: Vec<FileGroup>,
    pub(super) slack: Option<SlackConfig>,
    pub(super) oidc: Option<OidcConfig>,
}

/// `[[groups]]`: a name and its members (user names).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileGroup {
    pub(super) name: String,
    pub(super) members: Vec<String>,
}

/// `[[agents.mcp]]`: the tools an agent takes from one MCP server.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileAgentMcp {
    pub(super) server: String,
    pub(super) tools: Vec<String>,
    /// Subset of `tools` that always needs approval.
    #[serde(default)]
    pub(super) require_approval: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(super) struct FileDefaults {
    pub(super) timeout_secs: f64,
    pub(super) timeout_action: TimeoutAction,
    /// After one person approved the same tool with the same shape of arguments this many times
    /// in a conversation, its next card offers "always allow" (0: never).
    pub(super) suggest_grant_after: u32,
    /// At start-up under another configuration, end the standing grants an earlier one made.
    pub(super) grants_lapse_on_policy_change: bool,
}

impl Default for FileDefaults {
    fn default() -> Self {
        Self { timeout_secs: 300.0, timeout_action: TimeoutAction::Reject, suggest_grant_after: 3, grants_lapse_on_policy_change: false }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileAgent {
    pub(super) name: String,
    #[serde(default)]
    pub(super) description: String,
    #[serde(default)]
    pub(super) system_prompt: Option<String>,
    #[serde(default)]
    pub(super) model: Option<ModelConfig>,
    #[serde(default)]
    pub(super) fail_open: bool,
    #[serde(default)]
    pub(super) tools: Vec<String>,
    /// Shorthand for a `tools` gate named `require_approval` (kagent's field); a subset of `tools`.
    #[serde(default)]
    pub(super) require_approval: Vec<String>,
    #[serde(default)]
    pub(super) mcp: Vec<FileAgentMcp>,
    #[serde(default)]
    pub(super) gates: Vec<FileGate>,
    /// Worker agents (by name) this agent may delegate to; each adds an `ask_<name>` tool.
    #[serde(default)]
    pub(super) delegates: Vec<String>,
    /// A ready-made gate after the explicit ones: `minimal`, `standard`, `strict` or `paranoid`.
    pub(super) preset: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileGate {
    /// Required for top-level gates; parts of an `any` gate have none.
    #[serde(default)]
    pub(super) name: String,
    pub(super) kind: String,
    #[serde(default)]
    pub(super) tools: Vec<String>,
    /// For `kind = "rule"`: a CEL expression, e.g. `tool == "process_refund" && args.amount > 100`.
    pub(super) rule: Option<String>,
    /// For `kind = "any"`: the parts, as inline tables.
    #[serde(default)]
    pub(super) of: Vec<FileGate>,
    pub(super) timeout_secs: Option<f64>,
    /// One of the timeout actions, or `default` (the `[defaults]` one, as when it is left out).
    pub(super) timeout_action: Option<String>,
    /// With `timeout_action = "retry"`: how many times to ask again (default 2).
    pub(super) max_retries: Option<u32>,
    /// How a human answers: `card` (Approve / Reject buttons, the default) or `chat` (yes / no reply).
    pub(super) confirm: Option<String>,
    /// A rejection must give a reason (default false).
    pub(super) require_reason: Option<bool>,
    /// The decider may edit the arguments before approving (default true).
    pub(super) allow_modification: Option<bool>,
    /// Four-eyes: the user whose conversation made the call may not approve it (default false).
    pub(super) separate_requester: Option<bool>,
    /// Only these may decide: `group:<name>`, `user:<name>`, `role:admin` (default: whoever sees it).
    #[serde(default)]
    pub(super) approvers: Vec<String>,
    /// How many distinct people must approve (default 1).
    pub(super) quorum: Option<u32>,
    /// Whoever decides must have signed in recently (`reauthenticate_after_secs`, default 300).
    #[serde(default)]
    pub(super) reauthenticate: bool,
    pub(super) reauthenticate_after_secs: Option<u32>,
    /// Whether one approval may become a standing grant ("always allow"). Default: yes, unless the
    /// gate names approvers, a quorum, four-eyes, no edits or a required reason.
    pub(super) grantable: Option<bool>,
    /// Channels that announce its approvals: `email`.
    #[serde(default)]
    pub(super) notify: Vec<String>,
    /// Who they are sent to (default: the approvers, else the admins).
    #[serde(default)]
    pub(super) notify_to: Vec<String>,
    /// `enforce` (the default) or `shadow` (record what it would have stopped, stop nothing).
    pub(super) mode: Option<String>,
    /// Hand a still-pending approval to the admins after this many seconds (less than the timeout).
    pub(super) escalation_timeout_secs: Option<f64>,
    /// Remind the deciders every this many seconds while it waits.
    pub(super) reminder_interval_secs: Option<f64>,
    /// How many reminders at most (default 3; needs `reminder_interval_secs`).
    pub(super) max_reminders: Option<u32>,
    /// For `kind = "budget"`: ask once the model has spent more tokens than this…
    pub(super) token_threshold: Option<u64>,
    /// …or more US dollars than this (needs a price for the agent's model in `[prices]`)…
    pub(super) cost_threshold: Option<f64>,
    /// …in the task (`task`, the default) or the whole conversation (`conversation`).
    pub(super) per: Option<String>,
    /// For `kind = "confidence"`: ask when the model is less sure of a call than this (0–1).
    pub(super) confidence_threshold: Option<f64>,
    /// Who an escalation goes to: a user name or a `[[groups]]` name (default: the admins).
    pub(super) escalation_target: Option<String>,
    /// CEL-computed parts of the risk assessment of the calls this gate stops.
    pub(super) assessment: Option<FileAssessment>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileAssessment {
    pub(super) consequences: Option<String>,
    pub(super) reversibility: Option<String>,
    #[serde(default)]
    pub(super) factors: Vec<String>,
}
