//! Reading the configuration: the file's shapes (file.rs) turned into the runtime types of
//! agents.rs and checked, with errors that name the file, the agent, the gate and the key.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use anyhow::{Context, bail};

use domain::rules::DecisionRules;

use super::{
    Agent, AgentsConfig, Budget, BudgetScope, CHANNELS, DEFAULT_RETRIES, Gate, GateAssessment, GateRule, ModelConfig, Price, Reminders,
    Rule, SlackConfig, TimeoutAction,
    file::{FileAgent, FileAssessment, FileConfig, FileDefaults, FileGate, FileGroup},
    policy_version, rule_limits,
};
use crate::{
    approver_names::{parse_approver, valid_target},
    tools::Registry,
};

impl AgentsConfig {
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
    if gate.name.starts_with(crate::store::shadow_hits::DRAFT_PREFIX) {
        bail!("{gat}: a gate's name may not start with \"{}\" (it names a draft's shadow hits)", crate::store::shadow_hits::DRAFT_PREFIX);
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

fn check_timeout(secs: f64) -> anyhow::Result<()> {
    if !(secs.is_finite() && secs > 0.0 && secs <= 30.0 * 24.0 * 3600.0) {
        bail!("must be a number of seconds between 0 and 30 days, got {secs}");
    }
    Ok(())
}
