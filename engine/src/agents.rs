//! Agent configuration: which tools each agent has and which gates stop its calls.
//! Read from a TOML file (`COUNTERSIGN_AGENTS`) or the built-in demo configuration, and
//! validated at start-up with errors that name the file, the agent and the key.
//! Here: the runtime types and the paths other modules use. `file.rs`: the file's shapes (what
//! the TOML looks like); `validate.rs`: reading them into these types and checking them;
//! `rule_limits.rs`: a CEL rule's limits and its compilation; `oidc.rs`: the `[oidc]` section.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
    time::Duration,
};

use anyhow::Context;
use serde::Deserialize;

use domain::rules::DecisionRules;

use crate::tools::Registry;

mod file;
mod oidc;
mod rule_limits;
mod validate;

/// The names a gate's `approvers`, `notify_to` and `escalation_target` use (kept here for the
/// paths other modules and crates name them by).
pub use crate::approver_names::{ApproverName, parse_approver, valid_target};

#[cfg(test)]
pub use oidc::example_config as example_oidc_config;
/// `[oidc]`: signing in through the organisation's identity provider (the rules a person's claims
/// are read by at sign-in).
pub use oidc::{MAX_SESSION_SECS, OidcConfig, TokenEndpointAuth};

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
    pub oidc: Option<OidcConfig>,
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
    /// The agent's final answer of a turn (`final_response`): matches no call; the task driver
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

/// How many times `retry` asks again when a gate does not say.
const DEFAULT_RETRIES: u32 = 2;

impl AgentsConfig {
    pub fn demo(registry: &Registry) -> anyhow::Result<Self> {
        Self::parse(DEMO_TOML, "built-in demo configuration", registry)
    }

    pub fn load(path: &Path, registry: &Registry) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read agent config {}", path.display()))?;
        Self::parse(&text, &path.display().to_string(), registry)
    }

    // `parse`, which reads the file and checks it, is in validate.rs.

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

/// A configuration's version: the first 12 hex digits of the SHA-256 of its text.
pub fn policy_version(text: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))[..12].to_owned()
}

/// The channels a gate's `notify` may list.
pub const CHANNELS: [&str; 2] = ["email", "slack"];

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
