//! Agent configuration: which tools each agent has and which gates stop its calls.
//! Read from a TOML file (`COUNTERSIGN_AGENTS`) or the built-in demo configuration, and
//! validated at start-up with errors that name the file, the agent and the key.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
    time::Duration,
};

use anyhow::{Context, bail};
use serde::Deserialize;

use domain::rules::DecisionRules;

use crate::tools::Registry;

mod rule_limits;

/// The demo configuration used when no file is given.
pub const DEMO_TOML: &str = include_str!("agents.demo.toml");

#[derive(Clone, Debug)]
pub struct AgentsConfig {
    pub agents: Vec<Agent>,
    pub webhooks: Vec<crate::webhooks::WebhookConfig>,
    pub mcp_servers: Vec<crate::tools::mcp::McpServerConfig>,
    /// For each MCP server, the tools agents use from it (checked once it is connected).
    pub mcp_tools: BTreeMap<String, BTreeSet<String>>,
    /// What each model's tokens cost (`[prices]`), by model name (`scripted` for the demo model).
    pub prices: BTreeMap<String, Price>,
    /// Named groups of users (`[[groups]]`), e.g. who an approval may be escalated to.
    pub groups: BTreeMap<String, Vec<String>>,
    /// `[slack]`, when approvals are posted to a Slack-compatible workspace.
    pub slack: Option<SlackConfig>,
    /// `[oidc]`, when people log in through the organisation's identity provider.
    pub oidc: Option<crate::people::identity::OidcConfig>,
    /// `[defaults] suggest_grant_after`: approvals of one tool and shape by one person in a
    /// conversation before its cards offer "always allow" (0: never).
    pub suggest_grant_after: u32,
    /// `[defaults] grants_lapse_on_policy_change`: at start-up under another configuration, end
    /// the standing grants made under an earlier one.
    pub grants_lapse_on_policy_change: bool,
    /// The configuration's version: the first 12 hex digits of the SHA-256 of its text. Kept with
    /// every approval, decision and grant it produced.
    pub version: String,
    /// The text it was read from (the admins' Policy page shows it, `GET /api/policy`).
    pub text: String,
}

/// `[[groups]]`: a name and its members (user names).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileGroup {
    name: String,
    members: Vec<String>,
}

/// US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

impl Price {
    pub fn cost(&self, usage: &domain::wire::Usage) -> f64 {
        (usage.input_tokens as f64 * self.input_per_million + usage.output_tokens as f64 * self.output_per_million) / 1e6
    }
}

#[derive(Clone, Debug)]
pub struct Agent {
    pub name: String,
    pub description: String,
    /// Sent to real models as the system message.
    pub system_prompt: String,
    pub model: ModelConfig,
    /// When a gate rule cannot be evaluated, let the call run (fail-open) instead of
    /// asking a human (the default). Either way the audit trail says so.
    pub fail_open: bool,
    pub tools: Vec<String>,
    pub gates: Vec<Gate>,
    /// Worker agents this one may hand tasks to, each through an `ask_<worker>` tool.
    pub delegates: Vec<String>,
}

impl Agent {
    /// The model's name, as `[prices]` keys it: `scripted`, or the provider's model name.
    pub fn model_name(&self) -> &str {
        match &self.model {
            ModelConfig::Scripted => "scripted",
            ModelConfig::Openai { model, .. } => model,
        }
    }

    /// The gate that holds the agent's final answers for approval, if any.
    pub fn final_response_gate(&self) -> Option<&Gate> {
        self.gates.iter().find(|g| g.rule == GateRule::FinalResponse)
    }

    /// A gate reads the model's confidence in its calls (the provider is asked for log-probabilities).
    pub fn wants_confidence(&self) -> bool {
        self.gates.iter().any(|g| g.rule.any(&|r| matches!(r, GateRule::Confidence(_))))
    }
}

/// Which model drives an agent.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "provider", rename_all = "snake_case", deny_unknown_fields)]
pub enum ModelConfig {
    /// The built-in deterministic demo planner.
    Scripted,
    /// Any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio).
    Openai {
        /// e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1` (Ollama).
        base_url: String,
        model: String,
        /// Name of the environment variable holding the API key (none for local servers).
        api_key_env: Option<String>,
        temperature: Option<f64>,
        /// Retries on 429 / 5xx / connection errors, with exponential backoff.
        #[serde(default = "default_retries")]
        max_retries: u32,
        /// Seconds before a request gives up.
        #[serde(default = "default_request_timeout")]
        timeout_secs: f64,
    },
}

fn default_retries() -> u32 {
    3
}

fn default_request_timeout() -> f64 {
    120.0
}

#[derive(Clone, Debug, PartialEq)]
pub struct Gate {
    pub name: String,
    pub rule: GateRule,
    pub timeout: Duration,
    pub timeout_action: TimeoutAction,
    /// With `timeout_action = "retry"`: how many times an undecided approval is asked again.
    pub max_retries: u32,
    /// `confirm = "chat"`: the agent asks in the chat and the user's yes/no reply decides
    /// (conversational confirmation) instead of the card's buttons.
    pub in_chat: bool,
    /// What a decision must include (`require_reason`, `allow_modification`).
    pub rules: DecisionRules,
    /// Hand a still-pending approval to the admins after this (`escalation_timeout_secs`); the
    /// deadline stays.
    pub escalate_after: Option<Duration>,
    /// Remind the deciders every `interval`, at most `max` times (`reminder_interval_secs`,
    /// `max_reminders`).
    pub reminders: Option<Reminders>,
    /// Who an escalation goes to (`escalation_target`: a user or a `[[groups]]` name); none: the admins.
    pub escalation_target: Option<String>,
    /// Who may decide (`approvers`: `group:…`, `user:…`, `role:admin`); empty: whoever sees it.
    pub approvers: Vec<String>,
    /// Where its approvals are announced besides the queue (`notify = ["email"]`), and to whom
    /// (`notify_to`, as `approvers`; empty: the approvers, else the admins).
    pub notify: Vec<String>,
    pub notify_to: Vec<String>,
    /// CEL expressions that add to the risk assessment of the calls this gate stops.
    pub assessment: Option<GateAssessment>,
    /// `mode = "shadow"`: the gate stops nothing; a call it would have stopped runs and is
    /// recorded as a shadow hit (event, audit, metric), to try a policy before enforcing it.
    pub shadow: bool,
}

impl Gate {
    /// A gate with only a rule, a timeout and decision rules: no escalation, reminders,
    /// approvers, notifications or assessment (the built-in gates and the presets).
    pub fn plain(name: impl Into<String>, rule: GateRule, timeout: Duration, timeout_action: TimeoutAction, rules: DecisionRules) -> Self {
        Self {
            name: name.into(),
            rule,
            timeout,
            timeout_action,
            max_retries: DEFAULT_RETRIES,
            in_chat: false,
            rules,
            escalate_after: None,
            reminders: None,
            escalation_target: None,
            approvers: Vec::new(),
            notify: Vec::new(),
            notify_to: Vec::new(),
            assessment: None,
            shadow: false,
        }
    }
}

/// `[agents.gates.assessment]`: CEL over the same variables as a rule, evaluated when the gate
/// asks. Each gives a string: what the call does, how reversible it is, and extra risk factors
/// (an empty string adds none).
#[derive(Clone, Debug, PartialEq)]
pub struct GateAssessment {
    pub consequences: Option<Rule>,
    pub reversibility: Option<Rule>,
    pub factors: Vec<Rule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileAssessment {
    consequences: Option<String>,
    reversibility: Option<String>,
    #[serde(default)]
    factors: Vec<String>,
}

/// Compiles a CEL expression within the limits of a rule, naming where it is in errors (and,
/// when it does not compile, itself; not when it is too long to read in a message).
fn compile(source: &str, at: &str) -> anyhow::Result<Rule> {
    let program = rule_limits::compile(source).map_err(|refused| match refused {
        rule_limits::Refused::Invalid(_) => anyhow::anyhow!("{at}: {source:?} {refused}"),
        _ => anyhow::anyhow!("{at}: the expression {refused}"),
    })?;
    Ok(Rule { source: source.to_owned(), program: std::sync::Arc::new(program) })
}

impl FileAssessment {
    fn compile(self, at: &str) -> anyhow::Result<GateAssessment> {
        let at = format!("{at}: assessment");
        Ok(GateAssessment {
            consequences: self.consequences.map(|c| compile(&c, &format!("{at}.consequences"))).transpose()?,
            reversibility: self.reversibility.map(|r| compile(&r, &format!("{at}.reversibility"))).transpose()?,
            factors: self.factors.iter().map(|f| compile(f, &format!("{at}.factors"))).collect::<anyhow::Result<_>>()?,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reminders {
    pub interval: Duration,
    pub max: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum GateRule {
    /// The named tools.
    Tools(BTreeSet<String>),
    /// Every tool.
    All,
    /// Tools whose metadata says they are destructive.
    Destructive,
    /// Tools whose metadata does not say they only read (anything that may change something).
    Writes,
    /// A CEL expression over `tool`, `args`, `user` and `agent`, compiled at start-up.
    Rule(Rule),
    /// Matches when any of its parts matches.
    Any(Vec<GateRule>),
    /// Every call once the model has spent more than a threshold (`budget`).
    Budget(Budget),
    /// Calls the model is less sure of than this, 0–1, or does not say (`confidence`).
    Confidence(f64),
    /// The agent's plans (`plan`): calls of `propose_plan`, which the agent gets with the gate.
    Plan,
    /// The agent's final answer of a turn (`final_response`): matches no call; the orchestrator
    /// asks it for the answer (`tools/answer.rs`).
    FinalResponse,
    /// Turns approvals off for the agent: nothing is gated.
    Disabled,
}

impl GateRule {
    /// Whether this rule or one of its parts satisfies `test`.
    pub fn any(&self, test: &dyn Fn(&GateRule) -> bool) -> bool {
        test(self) || matches!(self, GateRule::Any(parts) if parts.iter().any(|p| p.any(test)))
    }

    /// The budget this rule (or one of its parts) keeps, if any.
    pub fn budget(&self) -> Option<&Budget> {
        match self {
            GateRule::Budget(budget) => Some(budget),
            GateRule::Any(parts) => parts.iter().find_map(GateRule::budget),
            _ => None,
        }
    }
}

/// A spending limit: tokens and/or US dollars, for the task or the whole conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    pub tokens: Option<u64>,
    pub cost_usd: Option<f64>,
    pub per: BudgetScope,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetScope {
    Task,
    Conversation,
}

impl BudgetScope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Task => "task",
            Self::Conversation => "conversation",
        }
    }
}

/// A compiled CEL expression; compared and printed by its source.
#[derive(Clone)]
pub struct Rule {
    pub source: String,
    pub program: std::sync::Arc<cel::Program>,
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rule({:?})", self.source)
    }
}

/// What happens to an approval nobody decided before its deadline (stored with the approval).
pub use domain::TimeoutAction;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    defaults: FileDefaults,
    agents: Vec<FileAgent>,
    #[serde(default)]
    webhooks: Vec<crate::webhooks::WebhookConfig>,
    #[serde(default)]
    mcp_servers: Vec<crate::tools::mcp::McpServerConfig>,
    #[serde(default)]
    prices: BTreeMap<String, Price>,
    #[serde(default)]
    groups: Vec<FileGroup>,
    slack: Option<SlackConfig>,
    oidc: Option<crate::people::identity::OidcConfig>,
}

/// `[slack]`: a Slack-compatible workspace that gets the approvals of gates with
/// `notify = ["slack"]` as interactive messages (server/src/channels/slack.rs).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlackConfig {
    /// Where `chat.postMessage` and `chat.update` are called (default Slack's own API).
    #[serde(default = "slack_api")]
    pub api_base_url: String,
    /// The environment variable holding the bot token (sent as `Authorization: Bearer`).
    pub bot_token_env: String,
    /// The environment variable holding the app's signing secret (button clicks are checked with it).
    pub signing_secret_env: String,
    /// The channel the messages go to.
    pub channel: String,
    /// Who clicks: Slack user ids and the Countersign users they are (`U012ABC = "bob"`); a click by
    /// anyone else decides nothing.
    #[serde(default)]
    pub users: BTreeMap<String, String>,
}

fn slack_api() -> String {
    "https://slack.com/api".into()
}

/// `[[agents.mcp]]`: the tools an agent takes from one MCP server.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileAgentMcp {
    server: String,
    tools: Vec<String>,
    /// Subset of `tools` that always needs approval.
    #[serde(default)]
    require_approval: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct FileDefaults {
    timeout_secs: f64,
    timeout_action: TimeoutAction,
    /// After one person approved the same tool with the same shape of arguments this many times
    /// in a conversation, its next card offers "always allow" (0: never).
    suggest_grant_after: u32,
    /// At start-up under another configuration, end the standing grants an earlier one made.
    grants_lapse_on_policy_change: bool,
}

impl Default for FileDefaults {
    fn default() -> Self {
        Self { timeout_secs: 300.0, timeout_action: TimeoutAction::Reject, suggest_grant_after: 3, grants_lapse_on_policy_change: false }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileAgent {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    system_prompt: Option<String>,
    #[serde(default)]
    model: Option<ModelConfig>,
    #[serde(default)]
    fail_open: bool,
    #[serde(default)]
    tools: Vec<String>,
    /// Shorthand for a `tools` gate named `require_approval` (kagent's field); a subset of `tools`.
    #[serde(default)]
    require_approval: Vec<String>,
    #[serde(default)]
    mcp: Vec<FileAgentMcp>,
    #[serde(default)]
    gates: Vec<FileGate>,
    /// Worker agents (by name) this agent may delegate to; each adds an `ask_<name>` tool.
    #[serde(default)]
    delegates: Vec<String>,
    /// A ready-made gate after the explicit ones: `minimal`, `standard`, `strict` or `paranoid`.
    preset: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileGate {
    /// Required for top-level gates; parts of an `any` gate have none.
    #[serde(default)]
    name: String,
    kind: String,
    #[serde(default)]
    tools: Vec<String>,
    /// For `kind = "rule"`: a CEL expression, e.g. `tool == "process_refund" && args.amount > 100`.
    rule: Option<String>,
    /// For `kind = "any"`: the parts, as inline tables.
    #[serde(default)]
    of: Vec<FileGate>,
    timeout_secs: Option<f64>,
    /// One of the timeout actions, or `default` (the `[defaults]` one, as when it is left out).
    timeout_action: Option<String>,
    /// With `timeout_action = "retry"`: how many times to ask again (default 2).
    max_retries: Option<u32>,
    /// How a human answers: `card` (Approve / Reject buttons, the default) or `chat` (yes / no reply).
    confirm: Option<String>,
    /// A rejection must give a reason (default false).
    require_reason: Option<bool>,
    /// The decider may edit the arguments before approving (default true).
    allow_modification: Option<bool>,
    /// Four-eyes: the user whose conversation made the call may not approve it (default false).
    separate_requester: Option<bool>,
    /// Only these may decide: `group:<name>`, `user:<name>`, `role:admin` (default: whoever sees it).
    #[serde(default)]
    approvers: Vec<String>,
    /// How many distinct people must approve (default 1).
    quorum: Option<u32>,
    /// Whoever decides must have signed in recently (`reauthenticate_after_secs`, default 300).
    #[serde(default)]
    reauthenticate: bool,
    reauthenticate_after_secs: Option<u32>,
    /// Whether one approval may become a standing grant ("always allow"). Default: yes, unless the
    /// gate names approvers, a quorum, four-eyes, no edits or a required reason.
    grantable: Option<bool>,
    /// Channels that announce its approvals: `email`.
    #[serde(default)]
    notify: Vec<String>,
    /// Who they are sent to (default: the approvers, else the admins).
    #[serde(default)]
    notify_to: Vec<String>,
    /// `enforce` (the default) or `shadow` (record what it would have stopped, stop nothing).
    mode: Option<String>,
    /// Hand a still-pending approval to the admins after this many seconds (less than the timeout).
    escalation_timeout_secs: Option<f64>,
    /// Remind the deciders every this many seconds while it waits.
    reminder_interval_secs: Option<f64>,
    /// How many reminders at most (default 3; needs `reminder_interval_secs`).
    max_reminders: Option<u32>,
    /// For `kind = "budget"`: ask once the model has spent more tokens than this…
    token_threshold: Option<u64>,
    /// …or more US dollars than this (needs a price for the agent's model in `[prices]`)…
    cost_threshold: Option<f64>,
    /// …in the task (`task`, the default) or the whole conversation (`conversation`).
    per: Option<String>,
    /// For `kind = "confidence"`: ask when the model is less sure of a call than this (0–1).
    confidence_threshold: Option<f64>,
    /// Who an escalation goes to: a user name or a `[[groups]]` name (default: the admins).
    escalation_target: Option<String>,
    /// CEL-computed parts of the risk assessment of the calls this gate stops.
    assessment: Option<FileAssessment>,
}

/// The gate a preset stands for (docs/config.md, "Presets"): from asking only before destructive
/// calls to asking before every call and insisting on a reason, with no edits.
fn preset_gate(preset: &str, defaults: &FileDefaults) -> anyhow::Result<Gate> {
    let (rule, rules, timeout_action) = match preset {
        "minimal" => (GateRule::Destructive, DecisionRules::default(), defaults.timeout_action),
        "standard" => (GateRule::Writes, DecisionRules::default(), defaults.timeout_action),
        "strict" => (GateRule::All, DecisionRules::default(), defaults.timeout_action),
        // Nothing runs by default either: a timeout rejects whatever the defaults say.
        "paranoid" => (
            GateRule::All,
            DecisionRules { require_reason: true, allow_modification: false, grantable: false, ..DecisionRules::default() },
            TimeoutAction::Reject,
        ),
        other => bail!("unknown preset {other:?} (expected minimal, standard, strict or paranoid)"),
    };
    Ok(Gate::plain(format!("preset-{preset}"), rule, Duration::from_secs_f64(defaults.timeout_secs), timeout_action, rules))
}

/// How many times `retry` asks again when a gate does not say.
const DEFAULT_RETRIES: u32 = 2;

/// A gate's escalation timeout and reminders, checked against its timeout.
fn waiting_rules(gate: &FileGate, timeout: Duration) -> anyhow::Result<(Option<Duration>, Option<Reminders>)> {
    let escalate_after = match gate.escalation_timeout_secs {
        None => None,
        Some(secs) => {
            check_timeout(secs).context("escalation_timeout_secs")?;
            let after = Duration::from_secs_f64(secs);
            if after >= timeout {
                bail!("escalation_timeout_secs ({secs}) must be shorter than the gate's timeout ({} s)", timeout.as_secs_f64());
            }
            Some(after)
        }
    };
    let reminders = match (gate.reminder_interval_secs, gate.max_reminders) {
        (None, None) => None,
        (None, Some(_)) => bail!("max_reminders needs reminder_interval_secs"),
        (Some(secs), max) => {
            check_timeout(secs).context("reminder_interval_secs")?;
            let max = max.unwrap_or(3);
            if max == 0 {
                bail!("max_reminders must be at least 1 (leave out reminder_interval_secs for none)");
            }
            Some(Reminders { interval: Duration::from_secs_f64(secs), max })
        }
    };
    Ok((escalate_after, reminders))
}

/// Checks and compiles one gate's matching rule; `at` names the gate in errors.
fn gate_rule(gate: FileGate, agent_tools: &[String], at: &str) -> anyhow::Result<GateRule> {
    let budget_keys = gate.token_threshold.is_some() || gate.cost_threshold.is_some() || gate.per.is_some();
    if budget_keys && !matches!(gate.kind.as_str(), "budget" | "budget_based") {
        bail!("{at}: token_threshold, cost_threshold and per go with kind = \"budget\"");
    }
    if gate.confidence_threshold.is_some() && !matches!(gate.kind.as_str(), "confidence" | "threshold_based") {
        bail!("{at}: confidence_threshold goes with kind = \"confidence\"");
    }
    Ok(match gate.kind.as_str() {
        "tools" => {
            if gate.tools.is_empty() {
                bail!("{at}: kind \"tools\" needs a non-empty tools list");
            }
            for tool in &gate.tools {
                if !agent_tools.contains(tool) {
                    bail!("{at}: tools names {tool:?}, which is not in the agent's tools");
                }
            }
            GateRule::Tools(gate.tools.into_iter().collect())
        }
        "all" => GateRule::All,
        "destructive" => GateRule::Destructive,
        "writes" => GateRule::Writes,
        "disabled" => GateRule::Disabled,
        "final_response" => GateRule::FinalResponse,
        "plan" | "plan_approval" => GateRule::Plan,
        "rule" => {
            let source = gate.rule.with_context(|| format!("{at}: kind \"rule\" needs rule = \"<CEL expression>\""))?;
            let program = rule_limits::compile(&source).map_err(|refused| anyhow::anyhow!("{at}: the rule {refused}"))?;
            GateRule::Rule(Rule { source, program: std::sync::Arc::new(program) })
        }
        "any" => {
            if gate.of.is_empty() {
                bail!("{at}: kind \"any\" needs parts: of = [{{ kind = ... }}, ...]");
            }
            let parts = gate.of.into_iter().enumerate().map(|(i, part)| gate_rule(part, agent_tools, &format!("{at} part {}", i + 1)));
            GateRule::Any(parts.collect::<anyhow::Result<_>>()?)
        }
        "budget" | "budget_based" => {
            let per = match gate.per.as_deref() {
                None | Some("task") => BudgetScope::Task,
                Some("conversation") => BudgetScope::Conversation,
                Some(other) => bail!("{at}: per must be \"task\" or \"conversation\", got {other:?}"),
            };
            if gate.token_threshold.is_none() && gate.cost_threshold.is_none() {
                bail!("{at}: kind \"budget\" needs token_threshold and/or cost_threshold");
            }
            if let Some(cost) = gate.cost_threshold
                && !(cost.is_finite() && cost >= 0.0)
            {
                bail!("{at}: cost_threshold must be a number of US dollars, got {cost}");
            }
            GateRule::Budget(Budget { tokens: gate.token_threshold, cost_usd: gate.cost_threshold, per })
        }
        "confidence" | "threshold_based" => {
            let threshold =
                gate.confidence_threshold.with_context(|| format!("{at}: kind \"confidence\" needs confidence_threshold (0-1)"))?;
            if !(threshold > 0.0 && threshold <= 1.0) {
                bail!("{at}: confidence_threshold must be above 0 and at most 1, got {threshold}");
            }
            GateRule::Confidence(threshold)
        }
        other => {
            bail!(
                "{at}: unknown kind {other:?} (expected tools, all, destructive, writes, rule, any, budget, confidence, final_response, plan or disabled)"
            )
        }
    })
}

impl AgentsConfig {
    pub fn demo(registry: &Registry) -> anyhow::Result<Self> {
        Self::parse(DEMO_TOML, "built-in demo configuration", registry)
    }

    pub fn load(path: &Path, registry: &Registry) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read agent config {}", path.display()))?;
        Self::parse(&text, &path.display().to_string(), registry)
    }

    /// Parses and validates; `origin` names the file in every error.
    pub fn parse(text: &str, origin: &str, registry: &Registry) -> anyhow::Result<Self> {
        let file: FileConfig = toml::from_str(text).with_context(|| format!("{origin}: invalid agent configuration"))?;
        let defaults = &file.defaults;
        let suggest_grant_after = defaults.suggest_grant_after;
        check_timeout(defaults.timeout_secs).with_context(|| format!("{origin}: defaults.timeout_secs"))?;
        if file.agents.is_empty() {
            bail!("{origin}: declare at least one [[agents]]");
        }
        let mut agents = Vec::new();
        let mut names = BTreeSet::new();
        let mut mcp_tools: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let server_names = check_mcp_servers(&file.mcp_servers, origin)?;
        for agent in file.agents {
            let at = format!("{origin}: agent {:?}", agent.name);
            if !names.insert(agent.name.clone()) {
                bail!("{at}: the name is used twice");
            }
            let built = read_agent(agent, &at, defaults, registry, &server_names, &mut mcp_tools)?;
            let priced = file.prices.contains_key(built.model_name());
            if let Some(g) = built.gates.iter().find(|g| g.rule.budget().is_some_and(|b| b.cost_usd.is_some()))
                && !priced
            {
                bail!("{at}: gate {:?} has cost_threshold, but [prices] has no price for the model {:?}", g.name, built.model_name());
            }
            agents.push(built);
        }
        check_delegates(&agents, origin)?;
        check_webhooks(&file.webhooks, origin)?;
        check_prices(&file.prices, origin)?;
        let groups = read_groups(file.groups, origin)?;
        check_slack(file.slack.as_ref(), &agents, origin)?;
        if let Some(oidc) = &file.oidc {
            oidc.check(origin)?;
        }
        Ok(Self {
            agents,
            webhooks: file.webhooks,
            mcp_servers: file.mcp_servers,
            mcp_tools,
            prices: file.prices,
            groups,
            slack: file.slack,
            oidc: file.oidc,
            suggest_grant_after,
            grants_lapse_on_policy_change: file.defaults.grants_lapse_on_policy_change,
            version: policy_version(text),
            text: text.to_owned(),
        })
    }

    /// Some gate emails its approvals (`notify = ["email"]`): the server needs an SMTP server.
    pub fn sends_email(&self) -> bool {
        self.agents.iter().flat_map(|a| &a.gates).any(|g| g.notify.iter().any(|c| c == "email"))
    }

    /// The `ask_<worker>` tools the agents' `delegates` need, for the tool registry.
    pub fn delegate_tools(&self) -> Vec<std::sync::Arc<dyn crate::tools::Tool>> {
        let workers: BTreeSet<&str> = self.agents.iter().flat_map(|a| a.delegates.iter().map(String::as_str)).collect();
        workers
            .into_iter()
            .filter_map(|w| self.get(w))
            .map(|w| {
                std::sync::Arc::new(crate::tools::delegate::DelegateTool::new(&w.name, &w.description))
                    as std::sync::Arc<dyn crate::tools::Tool>
            })
            .collect()
    }

    pub fn get(&self, name: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// The agent new conversations use when they name none.
    pub fn default_agent(&self) -> &Agent {
        self.agents.first().expect("BUG: validation requires at least one agent")
    }
}

/// Checks `[[mcp_servers]]`: each name once, each with either a command or a url; returns their names.
fn check_mcp_servers(servers: &[crate::tools::mcp::McpServerConfig], origin: &str) -> anyhow::Result<BTreeSet<String>> {
    let mut server_names = BTreeSet::new();
    for server in servers {
        if !server_names.insert(server.name.clone()) {
            bail!("{origin}: MCP server {:?} is declared twice", server.name);
        }
        if server.command.is_some() == server.url.is_some() {
            bail!("{origin}: MCP server {:?}: give either command (stdio) or url (streamable HTTP)", server.name);
        }
    }
    Ok(server_names)
}

/// Builds one `[[agents]]` entry: its tools (with MCP and delegation tools), gates and model; `at` names it in errors.
fn read_agent(
    mut agent: FileAgent,
    at: &str,
    defaults: &FileDefaults,
    registry: &Registry,
    server_names: &BTreeSet<String>,
    mcp_tools: &mut BTreeMap<String, BTreeSet<String>>,
) -> anyhow::Result<Agent> {
    // MCP tools join the agent's tools; their names are checked once the server is up.
    let from_mcp = join_mcp_tools(&mut agent, at, server_names, mcp_tools)?;
    // Delegation tools join the agent's tools; their workers are checked once all are read.
    let from_delegates: Vec<String> = agent.delegates.iter().map(|w| crate::tools::delegate::tool_name(w)).collect();
    agent.tools.extend(from_delegates.iter().cloned());
    check_tools(&agent.tools, &from_mcp, &from_delegates, registry, at)?;
    let mut gates = builtin_gates(&agent.tools, &agent.require_approval, defaults, at)?;
    for gate in agent.gates {
        gates.push(read_gate(gate, defaults, &agent.tools, at)?);
    }
    // A plan gate gives the agent the tool to propose plans with.
    if gates.iter().any(|g| g.rule == GateRule::Plan) && !agent.tools.iter().any(|t| t == crate::tools::plan::NAME) {
        agent.tools.push(crate::tools::plan::NAME.into());
    }
    if let Some(preset) = &agent.preset {
        gates.push(preset_gate(preset, defaults).with_context(|| format!("{at}: preset"))?);
    }
    let model = read_model(agent.model, at)?;
    let system_prompt = agent.system_prompt.unwrap_or_else(|| {
        format!("You are {}, an agent that acts through tools. Some tool calls need a human's approval; if one is rejected, say so and do not retry it.", agent.name)
    });
    Ok(Agent {
        name: agent.name,
        description: agent.description,
        system_prompt,
        model,
        fail_open: agent.fail_open,
        tools: agent.tools,
        gates,
        delegates: agent.delegates,
    })
}

/// Joins the agent's `[[agents.mcp]]` tools to its tools and `require_approval`, recording them in `mcp_tools`; returns their names.
fn join_mcp_tools(
    agent: &mut FileAgent,
    at: &str,
    server_names: &BTreeSet<String>,
    mcp_tools: &mut BTreeMap<String, BTreeSet<String>>,
) -> anyhow::Result<BTreeSet<String>> {
    let mut from_mcp = BTreeSet::new();
    for entry in std::mem::take(&mut agent.mcp) {
        if !server_names.contains(&entry.server) {
            bail!("{at}: mcp names server {:?}, which no [[mcp_servers]] declares", entry.server);
        }
        for tool in &entry.require_approval {
            if !entry.tools.contains(tool) {
                bail!("{at}: mcp server {:?}: require_approval names {tool:?}, which is not in its tools", entry.server);
            }
        }
        mcp_tools.entry(entry.server.clone()).or_default().extend(entry.tools.iter().cloned());
        from_mcp.extend(entry.tools.iter().cloned());
        agent.tools.extend(entry.tools);
        agent.require_approval.extend(entry.require_approval);
    }
    Ok(from_mcp)
}

/// Checks the tools the agent lists itself (not those from MCP or delegation) against the registry.
fn check_tools(
    tools: &[String],
    from_mcp: &BTreeSet<String>,
    from_delegates: &[String],
    registry: &Registry,
    at: &str,
) -> anyhow::Result<()> {
    for tool in tools.iter().filter(|t| !from_mcp.contains(*t) && !from_delegates.contains(*t)) {
        // These stand for approvals of their own and come only with their gates: listed
        // bare, an answer or a plan would pass unreviewed (a plan would grant its steps).
        if tool == crate::tools::answer::NAME || tool == crate::tools::plan::NAME {
            bail!("{at}: tools lists {tool:?}, which comes with a gate instead (kind = \"final_response\" or \"plan\")");
        }
        if registry.get(tool).is_none() {
            let known: Vec<&str> =
                registry.names().filter(|n| *n != crate::tools::answer::NAME && *n != crate::tools::plan::NAME).collect();
            bail!("{at}: tools names unknown tool {tool:?} (known: {})", known.join(", "));
        }
    }
    Ok(())
}

/// The built-in gates: ask_user's (when the agent has it) and `require_approval`'s (when it names tools).
fn builtin_gates(tools: &[String], require_approval: &[String], defaults: &FileDefaults, at: &str) -> anyhow::Result<Vec<Gate>> {
    let mut gates = Vec::new();
    if tools.iter().any(|t| t == crate::tools::ask::NAME) {
        // Where the agent's questions wait for their answers (`tools::ask`).
        gates.push(Gate::plain(
            crate::tools::ask::GATE,
            GateRule::Tools(BTreeSet::from([crate::tools::ask::NAME.to_owned()])),
            Duration::from_secs_f64(defaults.timeout_secs),
            TimeoutAction::Reject,
            DecisionRules::default(),
        ));
    }
    if !require_approval.is_empty() {
        for tool in require_approval {
            if !tools.contains(tool) {
                bail!("{at}: require_approval names {tool:?}, which is not in the agent's tools");
            }
        }
        gates.push(Gate::plain(
            "require_approval",
            GateRule::Tools(require_approval.iter().cloned().collect()),
            Duration::from_secs_f64(defaults.timeout_secs),
            defaults.timeout_action,
            DecisionRules::default(),
        ));
    }
    Ok(gates)
}

/// Reads one `[[agents.gates]]` entry into a gate; `at` names the agent in errors.
fn read_gate(mut gate: FileGate, defaults: &FileDefaults, agent_tools: &[String], at: &str) -> anyhow::Result<Gate> {
    let gat = format!("{at}: gate {:?}", gate.name);
    if gate.name.trim().is_empty() {
        bail!("{at}: every gate needs a name");
    }
    // An approval asked under several gates is named by theirs joined with " + ".
    if gate.name.contains(" + ") {
        bail!("{gat}: a gate's name may not contain \" + \" (it joins the names of gates that apply together)");
    }
    // A draft's shadow hits are named `draft:<gates>` (engine/src/draft.rs).
    if gate.name.starts_with(crate::draft::PREFIX) {
        bail!("{gat}: a gate's name may not start with \"{}\" (it names a draft's shadow hits)", crate::draft::PREFIX);
    }
    let (name, timeout_secs) = (gate.name.clone(), gate.timeout_secs);
    let (timeout_action, max_retries) = gate_timeout_action(&gate, defaults, &gat)?;
    let approvers = std::mem::take(&mut gate.approvers);
    let rules = decision_rules(&gate, &approvers, &gat)?;
    if let Some(bad) = approvers.iter().find(|a| parse_approver(a).is_none()) {
        bail!("{gat}: approvers must be \"group:<name>\", \"user:<name>\" or \"role:admin\", got {bad:?}");
    }
    let (notify, notify_to) = notify_lists(&mut gate, &gat)?;
    let timeout = Duration::from_secs_f64(gate.timeout_secs.unwrap_or(defaults.timeout_secs).max(0.0));
    let (escalate_after, reminders) = waiting_rules(&gate, timeout).with_context(|| gat.clone())?;
    let in_chat = match gate.confirm.as_deref() {
        None | Some("card") => false,
        Some("chat") => true,
        Some(other) => bail!("{gat}: confirm must be \"card\" or \"chat\", got {other:?}"),
    };
    if in_chat && rules.reauthenticate_secs.is_some() {
        bail!("{gat}: reauthenticate asks the decider to sign in again on the card, so it cannot go with confirm = \"chat\"");
    }
    if in_chat && rules.separate_requester {
        bail!("{gat}: separate_requester needs someone else to approve, so it cannot go with confirm = \"chat\" (the requester's own yes)");
    }
    if in_chat && (!approvers.is_empty() || rules.quorum > 1) {
        bail!("{gat}: approvers and quorum name who decides, so they cannot go with confirm = \"chat\" (the requester's own yes)");
    }
    let escalation_target = gate.escalation_target.clone();
    let assessment = gate.assessment.take().map(|a| a.compile(&gat)).transpose()?;
    if let Some(target) = &escalation_target
        && !valid_target(target)
    {
        bail!("{gat}: escalation_target must be a user or group name (letters, digits, . _ - @), got {target:?}");
    }
    let shadow = match gate.mode.as_deref() {
        None | Some("enforce") => false,
        Some("shadow") => true,
        Some(other) => bail!("{gat}: mode must be \"enforce\" or \"shadow\", got {other:?}"),
    };
    if shadow && matches!(gate.kind.as_str(), "disabled" | "final_response" | "plan") {
        bail!("{gat}: a {} gate cannot be a shadow gate (it holds answers or plans, not calls)", gate.kind);
    }
    let rule = gate_rule(gate, agent_tools, &gat)?;
    let timeout_secs = timeout_secs.unwrap_or(defaults.timeout_secs);
    check_timeout(timeout_secs).with_context(|| format!("{gat}: timeout_secs"))?;
    Ok(Gate {
        name,
        rule,
        timeout: Duration::from_secs_f64(timeout_secs),
        timeout_action,
        max_retries,
        in_chat,
        rules,
        escalate_after,
        reminders,
        escalation_target,
        approvers,
        notify,
        notify_to,
        assessment,
        shadow,
    })
}

/// A gate's timeout action (`default`: the `[defaults]` one) and how many times `retry` asks again.
fn gate_timeout_action(gate: &FileGate, defaults: &FileDefaults, gat: &str) -> anyhow::Result<(TimeoutAction, u32)> {
    let timeout_action = match gate.timeout_action.as_deref() {
        None | Some("default") => defaults.timeout_action,
        Some(other) => TimeoutAction::parse(other).map_err(|_| {
            anyhow::anyhow!("{gat}: timeout_action must be reject, approve, skip, abort, escalate, retry or default, got {other:?}")
        })?,
    };
    if gate.max_retries.is_some() && timeout_action != TimeoutAction::Retry {
        bail!("{gat}: max_retries goes with timeout_action = \"retry\"");
    }
    Ok((timeout_action, gate.max_retries.unwrap_or(DEFAULT_RETRIES)))
}

/// A gate's decision rules: quorum, edits, reason, four-eyes, and whether an approval may become a grant.
fn decision_rules(gate: &FileGate, approvers: &[String], gat: &str) -> anyhow::Result<DecisionRules> {
    let quorum = gate.quorum.unwrap_or(1);
    if !(1..=10).contains(&quorum) {
        bail!("{gat}: quorum must be a number of people from 1 to 10, got {quorum}");
    }
    // Each of a quorum approves the same call: an edit by one would not be what the
    // others approved.
    if quorum > 1 && gate.allow_modification == Some(true) {
        bail!("{gat}: with a quorum every approver approves the proposed arguments, so allow_modification cannot be true");
    }
    let mut rules = DecisionRules {
        require_reason: gate.require_reason.unwrap_or(false),
        allow_modification: quorum == 1 && gate.allow_modification.unwrap_or(true),
        separate_requester: gate.separate_requester.unwrap_or(false),
        quorum,
        grantable: true,
        reauthenticate_secs: None,
    };
    if gate.reauthenticate_after_secs.is_some() && !gate.reauthenticate {
        bail!("{gat}: reauthenticate_after_secs goes with reauthenticate = true");
    }
    if gate.reauthenticate {
        let within = gate.reauthenticate_after_secs.unwrap_or(DEFAULT_REAUTHENTICATE_SECS);
        if !(10..=86_400).contains(&within) {
            bail!("{gat}: reauthenticate_after_secs must be from 10 to 86400, got {within}");
        }
        rules.reauthenticate_secs = Some(within);
    }
    rules.grantable = gate.grantable.unwrap_or_else(|| rules.restriction(!approvers.is_empty()).is_none());
    if rules.grantable && quorum > 1 {
        bail!("{gat}: a quorum needs {quorum} people for each call, so one of them cannot allow it for good: grantable cannot be true");
    }
    Ok(rules)
}

/// How recent a sign-in a gate with `reauthenticate = true` asks for, unless it says.
const DEFAULT_REAUTHENTICATE_SECS: u32 = 300;

/// A gate's `notify` channels and `notify_to` recipients, taken out of it and checked.
fn notify_lists(gate: &mut FileGate, gat: &str) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let (notify, notify_to) = (std::mem::take(&mut gate.notify), std::mem::take(&mut gate.notify_to));
    if let Some(bad) = notify.iter().find(|c| !CHANNELS.contains(&c.as_str())) {
        bail!("{gat}: notify lists channels ({}), got {bad:?}", CHANNELS.join(", "));
    }
    if let Some(bad) = notify_to.iter().find(|a| parse_approver(a).is_none()) {
        bail!("{gat}: notify_to must be \"group:<name>\", \"user:<name>\" or \"role:admin\", got {bad:?}");
    }
    if !notify_to.is_empty() && notify.is_empty() {
        bail!("{gat}: notify_to goes with notify (e.g. notify = [\"email\"])");
    }
    Ok((notify, notify_to))
}

/// Checks an agent's model (none: the scripted demo model).
fn read_model(model: Option<ModelConfig>, at: &str) -> anyhow::Result<ModelConfig> {
    let model = model.unwrap_or(ModelConfig::Scripted);
    if let ModelConfig::Openai { base_url, model, timeout_secs, .. } = &model {
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            bail!("{at}: model.base_url must start with http:// or https://, got {base_url:?}");
        }
        if model.trim().is_empty() {
            bail!("{at}: model.model must name the model, e.g. \"llama3.1\"");
        }
        check_timeout(*timeout_secs).with_context(|| format!("{at}: model.timeout_secs"))?;
    }
    Ok(model)
}

/// Checks each agent's `delegates`: declared agents, not itself, and workers that do not delegate further.
fn check_delegates(agents: &[Agent], origin: &str) -> anyhow::Result<()> {
    for agent in agents {
        for worker in &agent.delegates {
            let at = format!("{origin}: agent {:?}: delegates", agent.name);
            if crate::tools::delegate::tool_name(worker) == crate::tools::ask::NAME {
                bail!("{at} names {worker:?}: its tool would be ask_user, the built-in question tool; rename the agent");
            }
            match agents.iter().find(|a| &a.name == worker) {
                None => bail!("{at} names {worker:?}, which no [[agents]] declares"),
                Some(w) if w.name == agent.name => bail!("{at}: an agent cannot delegate to itself"),
                // One level keeps the pause simple to follow: a worker never waits on another worker.
                Some(w) if !w.delegates.is_empty() => bail!("{at}: {worker:?} delegates itself, and workers cannot delegate further"),
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// Checks `[[webhooks]]`: http(s) urls and known event names.
fn check_webhooks(webhooks: &[crate::webhooks::WebhookConfig], origin: &str) -> anyhow::Result<()> {
    for hook in webhooks {
        if !(hook.url.starts_with("http://") || hook.url.starts_with("https://")) {
            bail!("{origin}: webhook url must start with http:// or https://, got {:?}", hook.url);
        }
        // A misspelled event name would never fire: say so at start-up.
        if let Some(unknown) = hook.events.iter().find(|e| !domain::EventBody::NAMES.contains(&e.as_str())) {
            bail!("{origin}: webhook {:?}: unknown event {unknown:?} (known: {})", hook.url, domain::EventBody::NAMES.join(", "));
        }
    }
    Ok(())
}

/// Checks `[prices]`: US dollars per million tokens, zero or more.
fn check_prices(prices: &BTreeMap<String, Price>, origin: &str) -> anyhow::Result<()> {
    for (model, price) in prices {
        if ![price.input_per_million, price.output_per_million].iter().all(|p| p.is_finite() && *p >= 0.0) {
            bail!("{origin}: prices.{model:?}: prices must be US dollars per million tokens, zero or more");
        }
    }
    Ok(())
}

/// Reads `[[groups]]` into their members by name: valid names, each declared once, with members.
fn read_groups(groups: Vec<FileGroup>, origin: &str) -> anyhow::Result<BTreeMap<String, Vec<String>>> {
    let mut by_name = BTreeMap::new();
    for group in groups {
        if !valid_target(&group.name) {
            bail!("{origin}: a group's name must be letters, digits, . _ - or @, got {:?}", group.name);
        }
        if group.members.is_empty() || group.members.iter().any(|m| !valid_target(m)) {
            bail!("{origin}: group {:?} needs members: user names", group.name);
        }
        if by_name.insert(group.name.clone(), group.members).is_some() {
            bail!("{origin}: group {:?} is declared twice", group.name);
        }
    }
    Ok(by_name)
}

/// Checks `[slack]`, and that there is one when a gate has `notify = ["slack"]`.
fn check_slack(slack: Option<&SlackConfig>, agents: &[Agent], origin: &str) -> anyhow::Result<()> {
    if let Some(slack) = slack {
        if !(slack.api_base_url.starts_with("http://") || slack.api_base_url.starts_with("https://")) {
            bail!("{origin}: slack.api_base_url must start with http:// or https://, got {:?}", slack.api_base_url);
        }
        if slack.channel.trim().is_empty() {
            bail!("{origin}: slack.channel must name a channel");
        }
    }
    let posts_to_slack = agents.iter().flat_map(|a| &a.gates).any(|g| g.notify.iter().any(|c| c == "slack"));
    if posts_to_slack && slack.is_none() {
        bail!(
            "{origin}: a gate has notify = [\"slack\"]: add a [slack] section (api_base_url, bot_token_env, signing_secret_env, channel)"
        );
    }
    Ok(())
}

/// A user or group name as escalations name them (user names may also hold `@`).
/// A configuration's version: the first 12 hex digits of the SHA-256 of its text.
pub fn policy_version(text: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))[..12].to_owned()
}

/// The channels a gate's `notify` may list.
pub const CHANNELS: [&str; 2] = ["email", "slack"];

/// One of a gate's `approvers`: a group, a user, or the admins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApproverName<'a> {
    Group(&'a str),
    User(&'a str),
    Admins,
}

pub fn parse_approver(name: &str) -> Option<ApproverName<'_>> {
    match name.split_once(':')? {
        ("group", group) if valid_target(group) => Some(ApproverName::Group(group)),
        ("user", user) if valid_target(user) => Some(ApproverName::User(user)),
        ("role", "admin") => Some(ApproverName::Admins),
        _ => None,
    }
}

pub fn valid_target(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
}

fn check_timeout(secs: f64) -> anyhow::Result<()> {
    if !(secs.is_finite() && secs > 0.0 && secs <= 30.0 * 24.0 * 3600.0) {
        bail!("must be a number of seconds between 0 and 30 days, got {secs}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<AgentsConfig> {
        AgentsConfig::parse(text, "test.toml", &Registry::builtin())
    }

    fn err(text: &str) -> String {
        format!("{:#}", parse(text).unwrap_err())
    }

    #[test]
    fn presets_expand_to_one_gate_after_the_explicit_ones() {
        let toml = |preset: &str| {
            format!(
                "[[agents]]\nname = \"a\"\ntools = [\"get_order\", \"process_refund\"]\npreset = \"{preset}\"\n\
                 [[agents.gates]]\nname = \"mine\"\nkind = \"tools\"\ntools = [\"process_refund\"]\nrequire_reason = true\n"
            )
        };
        let gates = |preset: &str| parse(&toml(preset)).unwrap().agents.remove(0).gates;
        for (preset, rule) in [("minimal", GateRule::Destructive), ("standard", GateRule::Writes), ("strict", GateRule::All)] {
            let g = gates(preset);
            assert_eq!((g[0].name.as_str(), g[1].name.clone()), ("mine", format!("preset-{preset}")));
            assert_eq!((g[1].rule.clone(), g[1].rules), (rule, DecisionRules::default()), "{preset}");
            assert!(g[0].rules.require_reason && g[0].rules.allow_modification, "the explicit gate keeps its own rules");
        }
        let paranoid = &gates("paranoid")[1];
        assert_eq!(paranoid.rule, GateRule::All);
        assert_eq!(
            paranoid.rules,
            DecisionRules { require_reason: true, allow_modification: false, grantable: false, ..DecisionRules::default() }
        );
        assert_eq!(paranoid.timeout_action, TimeoutAction::Reject);
        assert!(err(&toml("lenient")).contains("agent \"a\": preset: unknown preset \"lenient\""), "{}", err(&toml("lenient")));
    }

    #[test]
    fn the_demo_configuration_is_valid() {
        let config = AgentsConfig::demo(&Registry::builtin()).unwrap();
        assert_eq!(config.default_agent().name, "support");
        assert!(!config.default_agent().gates.is_empty());
    }

    #[test]
    fn require_approval_becomes_a_tools_gate_with_the_default_timeout() {
        let config = parse(
            "[defaults]\ntimeout_secs = 2\n[[agents]]\nname = \"a\"\ntools = [\"get_order\", \"cancel_order\"]\nrequire_approval = [\"cancel_order\"]",
        )
        .unwrap();
        let gate = &config.agents[0].gates[0];
        assert_eq!(gate.rule, GateRule::Tools(["cancel_order".to_string()].into()));
        assert_eq!(gate.timeout, Duration::from_secs(2));
        assert_eq!(gate.timeout_action, TimeoutAction::Reject);
    }

    #[test]
    fn require_approval_must_be_a_subset_of_tools() {
        let e = err("[[agents]]\nname = \"a\"\ntools = [\"get_order\"]\nrequire_approval = [\"cancel_order\"]");
        assert!(e.contains("test.toml") && e.contains("\"a\"") && e.contains("cancel_order"), "{e}");
    }

    #[test]
    fn an_unknown_tool_is_named_in_the_error() {
        let e = err("[[agents]]\nname = \"a\"\ntools = [\"launch_rockets\"]");
        assert!(e.contains("launch_rockets"), "{e}");
    }

    #[test]
    fn an_unknown_gate_kind_is_named_in_the_error() {
        let e = err("[[agents]]\nname = \"a\"\ntools = [\"get_order\"]\n[[agents.gates]]\nname = \"g\"\nkind = \"vibes\"");
        assert!(e.contains("\"g\"") && e.contains("vibes"), "{e}");
    }

    #[test]
    fn an_openai_compatible_model_is_read_with_defaults() {
        let config = parse(
            "[[agents]]\nname = \"a\"\ntools = []\n[agents.model]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"llama3.1\"",
        )
        .unwrap();
        match &config.agents[0].model {
            ModelConfig::Openai { model, max_retries, api_key_env, .. } => {
                assert_eq!((model.as_str(), *max_retries, api_key_env.as_deref()), ("llama3.1", 3, None))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_model_without_a_url_scheme_is_refused() {
        let e =
            err("[[agents]]\nname = \"a\"\ntools = []\n[agents.model]\nprovider = \"openai\"\nbase_url = \"localhost:1\"\nmodel = \"m\"");
        assert!(e.contains("base_url"), "{e}");
    }

    #[test]
    fn an_unknown_provider_is_refused() {
        let e = err("[[agents]]\nname = \"a\"\ntools = []\n[agents.model]\nprovider = \"skynet\"");
        assert!(e.contains("skynet"), "{e}");
    }

    #[test]
    fn mcp_tools_join_the_agent_and_require_approval_must_be_among_them() {
        let base = "[[mcp_servers]]\nname = \"files\"\ncommand = \"mcp-server-filesystem\"\n[[agents]]\nname = \"a\"\n[[agents.mcp]]\nserver = \"files\"\ntools = [\"read_file\", \"write_file\"]\n";
        let config = parse(&format!("{base}require_approval = [\"write_file\"]")).unwrap();
        assert_eq!(config.agents[0].tools, ["read_file", "write_file"]);
        assert_eq!(config.mcp_tools["files"].len(), 2);
        assert!(matches!(&config.agents[0].gates[0].rule, GateRule::Tools(t) if t.contains("write_file")));
        let e = err(&format!("{base}require_approval = [\"delete_file\"]"));
        assert!(e.contains("delete_file") && e.contains("files"), "{e}");
        let e = err("[[agents]]\nname = \"a\"\n[[agents.mcp]]\nserver = \"nope\"\ntools = [\"x\"]\n");
        assert!(e.contains("nope"), "{e}");
    }

    #[test]
    fn an_unknown_key_is_refused() {
        let e = err("[[agents]]\nname = \"a\"\ntools = []\nrequire_aproval = [\"x\"]");
        assert!(e.contains("require_aproval"), "{e}");
    }

    #[test]
    fn a_rule_that_does_not_compile_is_refused_naming_the_gate() {
        let e = err(
            "[[agents]]\nname = \"a\"\ntools = [\"get_order\"]\n[[agents.gates]]\nname = \"big\"\nkind = \"rule\"\nrule = \"args.amount >\"",
        );
        assert!(e.contains("\"big\"") && e.contains("does not compile"), "{e}");
    }

    #[test]
    fn a_rule_past_the_limits_of_a_rule_is_refused_naming_its_gate() {
        let gate = |rule: &str| {
            format!(
                "[[agents]]\nname = \"a\"\ntools = [\"get_order\"]\n[[agents.gates]]\nname = \"deep\"\nkind = \"rule\"\nrule = \"{rule}\""
            )
        };
        let nested = |depth: usize| format!("{}tool == 'x'{}", "(".repeat(depth), ")".repeat(depth));
        let rule = |config: AgentsConfig| config.agents[0].gates[0].rule.clone();
        assert!(matches!(rule(parse(&gate(&nested(12))).unwrap()), GateRule::Rule(r) if r.source == nested(12)));
        let e = err(&gate(&nested(13)));
        assert!(e.contains("gate \"deep\": the rule nests brackets ( [ { 13 deep; a rule may nest them at most 12 deep"), "{e}");
        // Brackets in a string are text.
        let quoted = format!("tool == '{}' && user != '{}'", "(".repeat(40), ")]}".repeat(40));
        assert!(parse(&gate(&quoted)).is_ok());
        let e = err(&gate(&format!("tool == '{}'", "x".repeat(4_990))));
        assert!(e.contains("gate \"deep\": the rule is 5000 characters long; a rule may have at most 4000"), "{e}");
        // A chain of || is balanced, one of + as deep as it is long.
        assert!(parse(&gate(&vec!["tool == 'x'"; 200].join(" || "))).is_ok());
        let e = err(&gate(&format!("1{} > 0", " + 1".repeat(30))));
        assert!(e.contains("gate \"deep\": the rule is 32 levels deep; a rule may be at most 24"), "{e}");
        let assessed = format!("{}\n[agents.gates.assessment]\nfactors = [\"{}\"]", gate("true"), nested(20));
        let e = err(&assessed);
        assert!(e.contains("gate \"deep\": assessment.factors: the expression nests brackets ( [ { 20 deep"), "{e}");
    }

    #[test]
    fn an_any_gate_reads_its_parts() {
        let config = parse(
            "[[agents]]\nname = \"a\"\ntools = [\"get_order\"]\n[[agents.gates]]\nname = \"g\"\nkind = \"any\"\nof = [{ kind = \"destructive\" }, { kind = \"rule\", rule = \"user == 'eve'\" }]",
        )
        .unwrap();
        assert!(matches!(&config.agents[0].gates[0].rule, GateRule::Any(parts) if parts.len() == 2));
    }

    #[test]
    fn a_negative_timeout_is_refused() {
        let e = err("[[agents]]\nname = \"a\"\ntools = [\"get_order\"]\n[[agents.gates]]\nname = \"g\"\nkind = \"all\"\ntimeout_secs = -1");
        assert!(e.contains("timeout_secs"), "{e}");
    }

    #[test]
    fn approvers_and_quorum_are_checked_at_start_up() {
        let gate = |body: &str| {
            format!("[[agents]]\nname = \"a\"\ntools = [\"get_order\"]\n[[agents.gates]]\nname = \"g\"\nkind = \"all\"\n{body}")
        };
        for (body, expected) in [
            (
                "approvers = [\"team:finance\"]",
                "approvers must be \"group:<name>\", \"user:<name>\" or \"role:admin\", got \"team:finance\"",
            ),
            ("approvers = [\"group:\"]", "got \"group:\""),
            ("approvers = [\"role:user\"]", "got \"role:user\""),
            ("quorum = 0", "quorum must be a number of people from 1 to 10"),
            ("quorum = 11", "from 1 to 10"),
            ("quorum = 2\nallow_modification = true", "allow_modification cannot be true"),
            ("approvers = [\"user:ada\"]\nconfirm = \"chat\"", "cannot go with confirm = \"chat\""),
            ("quorum = 2\nconfirm = \"chat\"", "cannot go with confirm = \"chat\""),
            ("quorum = 2\ngrantable = true", "grantable cannot be true"),
        ] {
            let e = err(&gate(body));
            assert!(e.contains(expected) && e.contains("gate \"g\""), "{body}: {e}");
        }
        let grantable = |body: &str| parse(&gate(body)).unwrap().agents[0].gates[0].rules.grantable;
        assert!(grantable(""), "a plain gate may be granted");
        assert!(!grantable("approvers = [\"user:ada\"]"), "one that names its approvers may not…");
        assert!(grantable("approvers = [\"user:ada\"]\ngrantable = true"), "…unless it says so");
        assert!(!grantable("require_reason = true"));
        let config = parse(&gate("approvers = [\"group:finance\", \"user:ada\", \"role:admin\"]\nquorum = 2")).unwrap();
        let g = &config.agents[0].gates[0];
        assert_eq!((g.approvers.len(), g.rules.quorum, g.rules.allow_modification), (3, 2, false));
        assert_eq!(parse_approver("group:finance"), Some(ApproverName::Group("finance")));
        assert_eq!(parse_approver("role:admin"), Some(ApproverName::Admins));
    }

    #[test]
    fn budget_and_confidence_gates_are_checked_at_start_up() {
        let gate = |body: &str| format!("[[agents]]\nname = \"a\"\ntools = [\"get_order\"]\n[[agents.gates]]\nname = \"g\"\n{body}");
        for (body, expected) in [
            ("kind = \"budget\"", "needs token_threshold and/or cost_threshold"),
            ("kind = \"budget\"\ncost_threshold = 1.0", "[prices] has no price for the model \"scripted\""),
            ("kind = \"budget\"\ntoken_threshold = 10\nper = \"week\"", "per must be \"task\" or \"conversation\""),
            ("kind = \"all\"\ntoken_threshold = 10", "go with kind = \"budget\""),
            ("kind = \"confidence\"", "needs confidence_threshold"),
            ("kind = \"confidence\"\nconfidence_threshold = 1.5", "must be above 0 and at most 1"),
            ("kind = \"tools\"\ntools = [\"get_order\"]\nconfidence_threshold = 0.5", "goes with kind = \"confidence\""),
        ] {
            let e = err(&gate(body));
            assert!(e.contains(expected) && e.contains("gate \"g\""), "{body}: {e}");
        }
        let priced = format!(
            "[prices]\nscripted = {{ input_per_million = 1.0, output_per_million = 2.0 }}\n{}",
            gate("kind = \"budget_based\"\ncost_threshold = 0.1\nper = \"conversation\"")
        );
        let config = parse(&priced).unwrap();
        assert_eq!(
            config.agents[0].gates[0].rule,
            GateRule::Budget(Budget { tokens: None, cost_usd: Some(0.1), per: BudgetScope::Conversation })
        );
        let e = err("[prices]\nscripted = { input_per_million = -1.0, output_per_million = 2.0 }\n[[agents]]\nname = \"a\"\ntools = []");
        assert!(e.contains("prices.\"scripted\""), "{e}");
        let unsure = parse(&gate("kind = \"threshold_based\"\nconfidence_threshold = 0.7")).unwrap();
        assert!(unsure.agents[0].wants_confidence());
    }

    #[test]
    fn answers_and_plans_come_with_their_gates_not_in_tools() {
        for tool in ["final_answer", "propose_plan"] {
            let e = err(&format!("[[agents]]\nname = \"a\"\ntools = [\"get_order\", \"{tool}\"]"));
            assert!(e.contains("comes with a gate instead"), "{tool}: {e}");
        }
        let e = err("[[agents]]\nname = \"a\"\ntools = [\"nope\"]");
        assert!(!e.contains("final_answer") && !e.contains("propose_plan") && e.contains("get_order"), "{e}");
        let planner = parse("[[agents]]\nname = \"a\"\ntools = [\"get_order\"]\n[[agents.gates]]\nname = \"p\"\nkind = \"plan\"").unwrap();
        assert!(planner.agents[0].tools.iter().any(|t| t == "propose_plan"), "the gate brings the tool");
    }
}
